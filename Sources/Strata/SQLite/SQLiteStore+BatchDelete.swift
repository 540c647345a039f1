import Foundation
import GRDB

extension SQLiteStore {
    public func batchDelete(_ request: StoreBatchDelete) throws -> BatchResult {
        try runBatch(author: request.author, contextName: request.contextName) { db in
            let selected: [RowReference]
            switch request.selection {
            case .plan(let plan):
                selected = try selectRows(plan, db: db)
            case .objectIDs(let objectIDs):
                selected = try existingRows(objectIDs, db: db)
            }
            var deletion = BatchDeletion(store: self, db: db)
            try deletion.delete(selected)
            let changes = try deletion.apply()
            let result = BatchResult(
                kind: .delete, resultType: request.resultType, count: selected.count,
                objectIDs: request.resultType == .objectIDs ? selected.map(objectID) : nil)
            return (changes, result)
        }
    }

    /// The rows of these objects that exist, each once, in the order given.
    private func existingRows(_ objectIDs: [ObjectID], db: Database) throws -> [RowReference] {
        var byTable: [String: [Int64]] = [:]
        for objectID in objectIDs where objectID.storeIdentifier == identifier {
            guard let key = objectID.primaryKey, let layout = layout.entities[objectID.entityName] else { continue }
            byTable[layout.table, default: []].append(key)
        }
        // The entity of each row found, by table and key.
        var found: [String: [Int64: String]] = [:]
        for (table, keys) in byTable {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(quoted(StoreLayout.primaryKeyColumn)), \(quoted(StoreLayout.entityColumn)) FROM \(quoted(table))
                    WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(Self.inKeyList)
                    """, arguments: [Self.keyList(keys)])
            for row in rows { found[table, default: [:]][row[0]] = row[1] }
        }
        var seen: Set<RowReference> = []
        return objectIDs.compactMap { objectID in
            guard objectID.storeIdentifier == identifier, let key = objectID.primaryKey,
                let table = layout.entities[objectID.entityName]?.table, let entity = found[table]?[key],
                // The ID's entity is the row's or one of its parents.
                layout.entities[objectID.entityName]?.kindNames.contains(entity) ?? false
            else { return nil }
            let row = RowReference(entity: entity, key: key)
            return seen.insert(row).inserted ? row : nil
        }
    }
}
/// Deletes rows and everything their delete rules reach: first every row to delete is found
/// and every deny rule checked (nothing written yet), then references are cleared, join rows
/// removed and the rows deleted.
private struct BatchDeletion {
    let store: SQLiteStore
    let db: Database
    var plan = BatchDeletionPlan()

    init(store: SQLiteStore, db: Database) {
        self.store = store
        self.db = db
    }

    /// Marks rows for deletion and follows their delete rules.
    mutating func delete(_ selected: [RowReference]) throws {
        let this = self
        try plan.delete(selected, schema: store.schema) { entity, number, keys in
            try this.relatedRows(of: entity, number: number, keys: keys)
        }
    }

    /// The rows one relationship of `keys` (rows of `entity`) holds.
    func relatedRows(of entity: Entity, number: Int, keys: [Int64]) throws -> [RowReference] {
        guard let layout = store.layout.entities[entity.name] else { return [] }
        let relationship = entity.relationships[number]
        guard let destination = store.schema.entity(named: relationship.destinationEntityName),
            let destinationLayout = store.layout.entities[destination.name]
        else { return [] }
        let pk = quoted(StoreLayout.primaryKeyColumn)
        let entityColumn = quoted(StoreLayout.entityColumn)
        let list = SQLiteStore.keyList(keys)
        let sql: String
        if let column = layout.toOneColumns[number] {
            // The target's entity: its own column where the destination has subentities.
            let targetEntity = layout.toOneEntityColumns[number].map { quoted($0) } ?? "?"
            let arguments: StatementArguments =
                layout.toOneEntityColumns[number] == nil ? [destination.name, list] : [list]
            sql =
                "SELECT \(quoted(column)), \(targetEntity) FROM \(quoted(layout.table)) WHERE \(pk) \(SQLiteStore.inKeyList) AND \(quoted(column)) IS NOT NULL"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { RowReference(entity: $0[1], key: $0[0]) }
        }
        switch layout.toMany[number] {
        case .inverseColumn(let table, let column, _):
            sql =
                "SELECT \(pk), \(entityColumn) FROM \(quoted(table)) WHERE \(quoted(column)) \(SQLiteStore.inKeyList)"
                + " AND \(entityColumn) IN (" + destinationLayout.kindNames.map { _ in "?" }.joined(separator: ", ") + ")"
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments([list] + destinationLayout.kindNames))
                .map { RowReference(entity: $0[1], key: $0[0]) }
        case .joinTable(let table, let sourceColumn, let targetColumn, _):
            sql =
                "SELECT j.\(quoted(targetColumn)), t.\(entityColumn) FROM \(quoted(table)) j JOIN \(quoted(destinationLayout.table)) t"
                + " ON t.\(pk) = j.\(quoted(targetColumn)) WHERE j.\(quoted(sourceColumn)) \(SQLiteStore.inKeyList)"
            return try Row.fetchAll(db, sql: sql, arguments: [list]).map { RowReference(entity: $0[1], key: $0[0]) }
        case nil:
            return []
        }
    }

    /// Writes the deletion: clears references, removes join rows, keeps tombstones, deletes.
    mutating func apply() throws -> SQLiteStore.BatchChanges {
        var changes = SQLiteStore.BatchChanges()
        for (relationship, _, survivors) in plan.nullifications {
            try clearInverse(of: relationship, on: survivors)
        }
        // Tombstones, join rows and rows, per entity.
        for entityName in plan.entityOrder {
            guard let keys = plan.rows[entityName], let entity = store.schema.entity(named: entityName),
                let layout = store.layout.entities[entityName]
            else { continue }
            let list = SQLiteStore.keyList(keys)
            if store.isPersistentHistoryTrackingEnabled {
                changes.tombstones.merge(
                    try HistoryRecorder.readTombstones(of: entity, keys: keys, layout: layout, db: db)) { $1 }
            }
            for (table, column) in store.layout.joinColumnsByTable[layout.table] ?? [] {
                try db.execute(
                    sql: "DELETE FROM \(quoted(table)) WHERE \(quoted(column)) \(SQLiteStore.inKeyList)", arguments: [list])
            }
            try db.execute(
                sql: "DELETE FROM \(quoted(layout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(SQLiteStore.inKeyList)",
                arguments: [list])
            changes.deleted += keys.map { RowReference(entity: entityName, key: $0) }
        }
        changes.updated = plan.updatedRows
        return changes
    }

    /// Clears the references the surviving rows hold to deleted rows, for a nullify rule.
    func clearInverse(of relationship: RelationshipDescription, on survivors: [RowReference]) throws {
        guard let inverseName = relationship.inverseName else { return }
        // The inverse is a to-one relationship of the survivors: its column points at the
        // deleted rows. (A to-many inverse is derived from rows that go, or kept in join rows
        // that go.)
        for (entityName, group) in Dictionary(grouping: survivors, by: \.entity) {
            guard let entity = store.schema.entity(named: entityName),
                let number = entity.relationshipNumber(named: inverseName),
                let layout = store.layout.entities[entityName], let column = layout.toOneColumns[number]
            else { continue }
            var assignments = ["\(quoted(column)) = NULL"]
            if let entityColumn = layout.toOneEntityColumns[number] { assignments.append("\(quoted(entityColumn)) = NULL") }
            assignments.append(
                "\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1")
            try db.execute(
                sql: "UPDATE \(quoted(layout.table)) SET " + assignments.joined(separator: ", ")
                    + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(SQLiteStore.inKeyList)",
                arguments: [SQLiteStore.keyList(group.map(\.key))])
        }
    }
}
