import Foundation
import GRDB

extension SQLiteStore {
    public func batchUpdate(_ request: StoreBatchUpdate) throws -> BatchResult {
        let entity = request.plan.entity
        let (_, layout) = try resolve(entity.name)
        // Every value is checked before anything is written.
        var compiler = SQLiteUpdateCompiler(entity: entity, layout: layout, arguments: [])
        let (assignments, names) = try compiler.assignments(for: request.propertiesToUpdate)
        let arguments = compiler.arguments
        let sql =
            "UPDATE \(quoted(layout.table)) SET " + assignments
            + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(Self.inKeyList)"
        return try runBatch(author: request.author, contextName: request.contextName) { db in
            var changes = BatchChanges()
            // The rows first (from an index, often), then one UPDATE of exactly those rows.
            let rows = try selectRows(request.plan, db: db)
            if !rows.isEmpty {
                try db.execute(sql: sql, arguments: StatementArguments(arguments + [Self.keyList(rows.map(\.key)).databaseValue]))
            }
            changes.updated = rows.map { ($0, names) }
            return (changes, BatchResult(updated: rows.count, by: request) { rows.map(objectID) })
        }
    }
}
