import Foundation
import Strata

/// JSON as the tool prints reports (`info --json`, `check --json`, `history --json`): indented,
/// keys sorted, slashes as they are.
enum JSONOutput {
    /// `value` as JSON text.
    static func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StrataError(.storeError, "Could not encode the report as JSON.", underlyingError: error)
        }
    }
}
