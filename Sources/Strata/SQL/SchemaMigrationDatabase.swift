import Foundation

/// What a lightweight migration step needs from an SQL store's database, inside the
/// transaction the step runs in: statements, a few reads, and the places where SQL dialects
/// differ (column types, key sequences, temporary tables, how indexes are recorded).
package protocol SchemaMigrationDatabase {
    /// Where the store is, for messages: " at PATH" or " in SCHEMA of SERVER" (with the space).
    var storeLocation: String { get }
    /// The store's file, for errors; `nil` for stores that are not files.
    var fileURL: URL? { get }
    /// The placeholder of the `number`th bound value (from 1): `?` or `$1`.
    func placeholder(_ number: Int) -> String
    /// Runs one statement with `arguments` bound to its placeholders.
    ///
    /// - Returns: The number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int
    /// The integers in the first column of the rows `sql` returns.
    func integers(_ sql: String) throws -> [Int64]
    /// The text in the first column of the rows `sql` returns.
    func texts(_ sql: String) throws -> [String]
    /// The store's indexes on `tables` (not those that back a primary key), each with the
    /// statement that created it when known.
    func storedIndexes(onTables tables: Set<String>) throws -> [StoredIndex]
    /// Creates `index`; returns `false`, creating nothing and leaving the transaction usable,
    /// when stored rows break its uniqueness.
    func createIndex(_ index: StoreLayout.Index) throws -> Bool
    /// Creates a table of the new layout (and what it needs to give keys).
    func createTable(_ table: StoreLayout.Table) throws
    /// Renames a table (and what gives its keys).
    func renameTable(_ name: String, to newName: String) throws
    /// Drops a table of the old layout, if it is there (and what gave its keys).
    func dropTable(_ name: String) throws
    /// Adds a column of the new layout to `table`, with the type that layout gives it.
    func addColumn(_ column: String, to table: String) throws
    /// Makes the keys of `table` count on from the highest key `oldTable` ever gave.
    func continueKeys(of table: String, from oldTable: String) throws
    /// Creates a temporary table of two integer columns, `a` and `b`, for the step's duration.
    ///
    /// - Returns: How statements name it.
    func createLinkTable(_ name: String) throws -> String
    /// An aggregate of a column's values joined by commas.
    func commaSeparated(_ expression: String) -> String
}
