import Foundation

/// The formats `strata import` reads: the ones `strata query` writes, except the table.
enum ImportFormat: String, CaseIterable, Sendable {
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// Comma-separated values with a header line (RFC 4180).
    case csv
}
