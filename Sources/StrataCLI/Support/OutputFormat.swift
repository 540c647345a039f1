import ArgumentParser
import Foundation
import Strata

/// The formats rows can be written in.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// An aligned table, for people.
    case table
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// Comma-separated values with a header line (RFC 4180).
    case csv

    /// The format to use: the one asked for, else a table on a terminal and NDJSON elsewhere.
    static func resolve(_ format: OutputFormat?, json: Bool, csv: Bool, for channel: OutputChannel) -> OutputFormat {
        if let format { return format }
        if json { return .json }
        if csv { return .csv }
        return channel.isTerminal ? .table : .ndjson
    }

    /// A writer of this format on `channel`.
    func makeWriter(on channel: OutputChannel) -> any RecordWriter {
        switch self {
        case .table: TableWriter(channel: channel)
        case .json: JSONRecordWriter(channel: channel, asArray: true)
        case .ndjson: JSONRecordWriter(channel: channel, asArray: false)
        case .csv: CSVRecordWriter(channel: channel)
        }
    }
}
