import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// Checks the rows against the layout (see ``Strata/PersistentStore/checkConsistency()``)
    /// in one read-only, repeatable-read transaction: one view of the data throughout. The
    /// server keeps its own files consistent, so there is no file check.
    ///
    /// For example:
    ///
    /// ```swift
    /// for problem in try store.checkConsistency() { print(problem) }   // what `strata check` reports
    /// ```
    public func checkConsistency() throws -> [StoreConsistencyProblem] {
        let check = consistencyCheck
        return try withSession { session in
            _ = try session.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do {
                let problems = try check.problems(in: PostgresConsistencyDatabase(session: session))
                _ = try session.query("COMMIT")
                return problems
            } catch {
                if !session.isBroken { _ = try? session.query("ROLLBACK") }
                throw error
            }
        }
    }

    /// Repairs what ``checkConsistency()`` finds that has one safe repair, in one write
    /// transaction holding the schema's write lock (see
    /// ``Strata/PersistentStore/repairConsistency()``).
    ///
    /// For example:
    ///
    /// ```swift
    /// if try store.checkConsistency().contains(where: \.isRepairable) {
    ///     let repaired = try store.repairConsistency()   // each with the number of rows changed
    /// }
    /// ```
    public func repairConsistency() throws -> [StoreConsistencyProblem] {
        let check = consistencyCheck
        return try writeTransaction({ session, _ in
            try check.repair(in: PostgresConsistencyDatabase(session: session))
        }, announce: { _ in nil })
    }

    private var consistencyCheck: StoreConsistencyCheck {
        StoreConsistencyCheck(
            schema: schema, layout: layout.base, tables: layout.tables.map { ($0.name, $0.columns.map(\.name)) })
    }
}

/// A PostgreSQL store's schema inside a check's transaction.
private struct PostgresConsistencyDatabase: ConsistencyCheckDatabase {
    let session: PostgresSession

    func placeholder(_ number: Int) -> String { "$\(number)" }

    func integers(_ sql: String, _ arguments: [AttributeValue]) throws -> [Int64] {
        var bindings = PostgresBindings()
        for argument in arguments { bindings.append(value: argument) }
        return try session.query(sql, bindings).rows.compactMap { $0.first.flatMap(PostgresValueCoding.integer) }
    }

    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        var bindings = PostgresBindings()
        for argument in arguments { bindings.append(value: argument) }
        return try session.query(sql, bindings).metadata.rows ?? 0
    }

    func columnNames(ofTable table: String) throws -> [String] {
        var bindings = PostgresBindings()
        bindings.append(value: .string(table))
        return try session.query(
            "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
            bindings
        ).rows.compactMap { $0.first.flatMap(PostgresValueCoding.string) }
    }

    func integrityProblems() throws -> [String] { [] }
}
