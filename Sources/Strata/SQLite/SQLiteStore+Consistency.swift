import Foundation
import GRDB

extension SQLiteStore {
    /// Checks the file with SQLite's `integrity_check`, then the rows against the layout (see
    /// ``PersistentStore/checkConsistency()``), in one read transaction.
    public func checkConsistency() throws -> [StoreConsistencyProblem] {
        let check = consistencyCheck
        return try read(sql: "PRAGMA integrity_check") { db in
            try check.problems(in: SQLiteConsistencyDatabase(db: db))
        }
    }

    /// Repairs what ``checkConsistency()`` finds that has one safe repair, in one write
    /// transaction (see ``PersistentStore/repairConsistency()``).
    public func repairConsistency() throws -> [StoreConsistencyProblem] {
        try checkWritable()
        try checkNotPreparing()
        let check = consistencyCheck
        do {
            return try writer.write { db in try check.repair(in: SQLiteConsistencyDatabase(db: db)) }
        } catch {
            throw storeError(error, sql: nil)
        }
    }

    private var consistencyCheck: StoreConsistencyCheck {
        StoreConsistencyCheck(
            schema: schema, layout: layout, tables: layout.tables.map { ($0.name, $0.columns.map(\.name)) })
    }
}

/// An SQLite store's database inside a check's transaction.
private struct SQLiteConsistencyDatabase: ConsistencyCheckDatabase {
    let db: Database

    func placeholder(_ number: Int) -> String { "?" }

    func integers(_ sql: String, _ arguments: [AttributeValue]) throws -> [Int64] {
        try Int64.fetchAll(db, sql: sql, arguments: StatementArguments(arguments.map(SQLiteValueCoding.databaseValue)))
    }

    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        try db.execute(sql: sql, arguments: StatementArguments(arguments.map(SQLiteValueCoding.databaseValue)))
        return db.changesCount
    }

    func columnNames(ofTable table: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
    }

    func integrityProblems() throws -> [String] {
        let lines = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        return lines == ["ok"] ? [] : lines.map { "The database file is damaged: \($0)." }
    }
}
