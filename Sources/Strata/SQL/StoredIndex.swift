import Foundation

/// An index as the store records it.
package struct StoredIndex: Sendable {
    package var name: String
    package var table: String
    /// The statement that made it (``StoreLayout/Index/sql``), or `nil` when the store does
    /// not record it (the index is then rebuilt).
    package var sql: String?

    package init(name: String, table: String, sql: String?) {
        self.name = name
        self.table = table
        self.sql = sql
    }
}
