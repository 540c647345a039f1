import Foundation

/// One record: its fields in file order, and where it starts, for messages.
struct ImportedRecord: Sendable {
    /// The record's fields, in the order the file wrote them.
    var fields: [(name: String, value: ImportedField)]
    /// The 1-based line the record starts on.
    var line: Int
}
