import Foundation
import GRDB

/// An SQLite store's database inside a migration's transaction, as ``SchemaMigration`` uses it.
struct SQLiteMigrationDatabase: SchemaMigrationDatabase {
    let db: Database
    let url: URL?
    /// The layout the step migrates to: the column types of added columns.
    let newLayout: StoreLayout

    var storeLocation: String { url.map { " at \($0.path)" } ?? "" }
    var fileURL: URL? { url }

    func placeholder(_ number: Int) -> String { "?" }

    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        try db.execute(sql: sql, arguments: StatementArguments(arguments.map(SQLiteValueCoding.databaseValue)))
        return db.changesCount
    }

    func integers(_ sql: String) throws -> [Int64] {
        try Int64.fetchAll(db, sql: sql)
    }

    func texts(_ sql: String) throws -> [String] {
        try String.fetchAll(db, sql: sql)
    }

    func storedIndexes(onTables tables: Set<String>) throws -> [StoredIndex] {
        try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            .compactMap { row -> StoredIndex? in
                guard let name: String = row[0], let table: String = row[1], let sql: String = row[2], tables.contains(table)
                else { return nil }
                return StoredIndex(name: name, table: table, sql: sql)
            }
    }

    func createIndex(_ index: StoreLayout.Index) throws -> Bool {
        do {
            try db.execute(sql: index.sql)
            return true
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            // A failed CREATE INDEX changes nothing: the transaction goes on.
            return false
        }
    }

    func createTable(_ table: StoreLayout.Table) throws {
        try db.execute(sql: table.sql)
    }

    func renameTable(_ name: String, to newName: String) throws {
        try db.execute(sql: "ALTER TABLE \(quoted(name)) RENAME TO \(quoted(newName))")
    }

    func dropTable(_ name: String) throws {
        try db.execute(sql: "DROP TABLE IF EXISTS \(quoted(name))")
    }

    func addColumn(_ column: String, to table: String) throws {
        let type = newLayout.tables.first { $0.name == table }?.columns.first { $0.name == column }?.type ?? ""
        try db.execute(sql: "ALTER TABLE \(quoted(table)) ADD COLUMN \(quoted(column)) \(type)")
    }

    func continueKeys(of table: String, from oldTable: String) throws {
        let highest = try SQLiteStore.highestKeyEverUsed(in: oldTable, db: db)
        try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = ?", arguments: [table])
        try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [table, highest])
    }

    func createLinkTable(_ name: String) throws -> String {
        try db.execute(sql: "CREATE TEMP TABLE \(quoted(name)) (a INTEGER NOT NULL, b INTEGER NOT NULL)")
        return "temp.\(quoted(name))"
    }

    func commaSeparated(_ expression: String) -> String { "group_concat(\(expression))" }
}
