import Foundation
import PostgresNIO
import Strata

/// Batch requests in PostgreSQL: SQL over rows, one transaction per request under the write
/// lock, with history and one commit like a save.
extension PostgresStore {
    /// What one batch request changed.
    struct BatchChanges {
        var inserted: [(entity: String, keys: [Int64])] = []
        var updated: [(row: RowReference, properties: [String])] = []
        var deleted: [RowReference] = []

        var isEmpty: Bool { inserted.allSatisfy { $0.keys.isEmpty } && updated.isEmpty && deleted.isEmpty }
    }

    /// Runs a batch request's writes in one transaction, then records its history and
    /// announces its commit, as a save does.
    func runBatch(
        author: String?, contextName: String?,
        _ body: (PostgresSession, inout PostgresHistoryRecorder) throws -> (BatchChanges, BatchResult)
    ) throws -> BatchResult {
        let timestamp = Date()
        let (changes, written) = try writeTransaction { session, recordsHistory -> (BatchChanges, BatchResult) in
            var history = PostgresHistoryRecorder()
            history.isRecording = recordsHistory
            let (changes, computed) = try body(session, &history)
            var result = computed
            if recordsHistory, !changes.isEmpty {
                let entries =
                    changes.deleted.map { HistoryChangeEntries.Entry(entity: $0.entity, key: $0.key, kind: 2) }
                    + changes.updated.map {
                        HistoryChangeEntries.Entry(
                            entity: $0.row.entity, key: $0.row.key, kind: 1, properties: $0.properties.joined(separator: ","))
                    }
                    + changes.inserted.flatMap { run in run.keys.map { HistoryChangeEntries.Entry(entity: run.entity, key: $0, kind: 0) } }
                let number = try history.write(
                    entries, author: author, contextName: contextName, timestamp: timestamp, session: session)
                result.historyToken = HistoryToken(storeIdentifier: identifier, transactionNumber: number)
            }
            return (changes, result)
        } announce: { changes, result in
            changes.isEmpty
                ? nil
                : notification(
                    inserted: changes.inserted.flatMap { run in run.keys.map { objectID(RowReference(entity: run.entity, key: $0)) } },
                    updated: changes.updated.map { objectID($0.row) }, deleted: changes.deleted.map(objectID), author: author,
                    contextName: contextName, transaction: result.historyToken?.transactionNumber)
        }
        var result = written
        let updated = changes.updated.map { objectID($0.row) }
        let deleted = changes.deleted.map(objectID)
        if result.resultType == .objectIDs {
            result.insertedObjectIDs = changes.inserted.flatMap { run in run.keys.map { objectID(RowReference(entity: run.entity, key: $0)) } }
            result.updatedObjectIDs = updated
            result.deletedObjectIDs = deleted
        }
        guard !changes.isEmpty else { return result }
        let commit: StoreCommit
        if let run = changes.inserted.first, changes.inserted.count == 1, deleted.isEmpty {
            commit = StoreCommit(
                storeIdentifier: identifier, insertedEntityName: run.entity,
                entityNameHash: schema.entity(named: run.entity)?.nameHash ?? 0, insertedKeys: run.keys, updatedObjectIDs: updated,
                author: author, contextName: contextName, timestamp: timestamp, historyToken: result.historyToken)
        } else {
            commit = StoreCommit(
                storeIdentifier: identifier,
                insertedObjectIDs: changes.inserted.flatMap { run in run.keys.map { objectID(RowReference(entity: run.entity, key: $0)) } },
                updatedObjectIDs: updated, deletedObjectIDs: deleted, author: author, contextName: contextName, timestamp: timestamp,
                historyToken: result.historyToken)
        }
        commitObservers.notify(commit)
        return result
    }

    func objectID(_ row: RowReference) -> ObjectID {
        ObjectID(
            entityName: row.entity, entityNameHash: schema.entity(named: row.entity)?.nameHash, storeIdentifier: identifier,
            primaryKey: row.key)
    }

    /// The rows a plan selects, with each row's entity, in the plan's order when it has a limit.
    func selectRows(_ plan: FetchPlan, session: PostgresSession) throws -> [RowReference] {
        guard var query = try makeQuery(plan) else { return [] }
        let ordered = plan.fetchLimit != nil || plan.fetchOffset > 0
        if query.sortsOnClient {
            let (keys, names) = try fetchPrimaryKeys(plan, includingEntityNames: true)
            return zip(keys, names ?? []).map { RowReference(entity: $1, key: $0) }
        }
        let sql =
            "SELECT t0.\(quoted(StoreLayout.primaryKeyColumn)), t0.\(quoted(StoreLayout.entityColumn))" + query.sql(withOrder: ordered)
        return try session.query(sql, query.arguments).rows.compactMap { row in
            let cells = row.makeRandomAccess()
            guard let key = PostgresValueCoding.integer(cells[0]), let entity = PostgresValueCoding.string(cells[1]) else { return nil }
            return RowReference(entity: entity, key: key)
        }
    }

    // MARK: Insert

    /// Rows per statement of a batch insert that cannot conflict.
    static let batchInsertRowsPerStatement = 2_000

    /// Inserts the rows in one transaction under the schema's write lock: up to 2,000 rows per
    /// `INSERT … SELECT FROM unnest(…)` statement, or row by row with `ON CONFLICT` when conflicts
    /// keep or replace the stored row.
    ///
    /// For example:
    ///
    /// ```swift
    /// guard let title = store.schema.entity(named: "Movie")?.attributeNumber(named: "title") else { return }
    /// var titles = ["Heat", "Ronin"].makeIterator()
    /// let result = try store.batchInsert(StoreBatchInsert(entityName: "Movie", resultType: .count)) { row in
    ///     guard let next = titles.next() else { return false }   // false: no more rows
    ///     row[title] = .string(next)
    ///     return true
    /// }
    /// ```
    public func batchInsert(_ request: StoreBatchInsert, rows nextRow: (inout [AttributeValue]) throws -> Bool) throws -> BatchResult {
        let (entity, entityLayout) = try resolve(request.entityName)
        guard !entity.isAbstract else {
            throw StrataError(
                .abstractEntity, "\(entity.name) is abstract; batch-insert rows of one of its subentities.", entityName: entity.name)
        }
        let attributeNumbers = entityLayout.attributeColumns.indices.filter { entityLayout.attributeColumns[$0] != nil }
        let columns =
            [StoreLayout.entityColumn, StoreLayout.versionColumn, StoreLayout.primaryKeyColumn]
            + attributeNumbers.compactMap { entityLayout.attributeColumns[$0] }
        let types = attributeNumbers.map { entity.attributes[$0].type }
        let table = quoted(entityLayout.table)
        let columnList = columns.map(quoted).joined(separator: ", ")
        let names = columns.indices.map { "c\($0)" }
        let selected = zip(names, ["", "", ""] + types.map(PostgresColumnArray.sqlCast)).map { $0 + $1 }.joined(separator: ", ")
        let unnest = "unnest(" + columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ") + ") WITH ORDINALITY AS u(\(names.joined(separator: ", ")), o)"
        let written = attributeNumbers.map { entity.attributes[$0].name }.sorted()
        return try runBatch(author: request.author, contextName: request.contextName) { session, _ in
            var inserted: [Int64] = []
            var newKeys: Set<Int64> = []
            var updated: [Int64] = []
            var values = entity.defaultValues
            var rows: [[AttributeValue]] = []
            /// Writes the rows collected so far.
            func flush() throws {
                guard !rows.isEmpty else { return }
                let keys = try Self.nextKeys(in: entityLayout.table, count: rows.count, session: session)
                switch request.conflictResolution {
                case .fail:
                    var bindings = PostgresBindings()
                    bindings.append(PostgresColumnArray(.text, values: Array(repeating: .string(entity.name), count: rows.count)))
                    bindings.append(PostgresColumnArray(.bigint, values: Array(repeating: .integer(StoreLayout.initialVersion), count: rows.count)))
                    bindings.append(PostgresColumnArray(.bigint, values: keys.map { .integer($0) }))
                    for (index, type) in types.enumerated() {
                        bindings.append(PostgresColumnArray(PostgresColumnArray.Element(type), values: rows.map { $0[index] }))
                    }
                    try session.query("INSERT INTO \(table) (\(columnList)) SELECT \(selected) FROM \(unnest) ORDER BY o", bindings)
                    inserted += keys
                case .keepStored, .replaceStored:
                    // Row by row (sent together), so that each row sees the ones before it, as
                    // in SQLite: a later row may take an earlier one's place.
                    var statements: [(sql: String, binds: PostgresBindings)] = []
                    for (row, key) in zip(rows, keys) {
                        statements.append(upsert(row, key: key, entity: entity, layout: entityLayout, types: types, replace: request.conflictResolution == .replaceStored))
                    }
                    for (outcome, key) in zip(try session.pipeline(statements), keys) {
                        for resultRow in outcome.rows {
                            let cells = resultRow.makeRandomAccess()
                            guard let written = PostgresValueCoding.integer(cells[0]) else { continue }
                            if written == key || newKeys.contains(written) {
                                if newKeys.insert(written).inserted { inserted.append(written) }
                            } else {
                                updated.append(written)
                            }
                        }
                    }
                }
                rows.removeAll(keepingCapacity: true)
            }
            let chunk = request.conflictResolution == .fail ? Self.batchInsertRowsPerStatement : 256
            while try nextRow(&values) {
                rows.append(attributeNumbers.map { $0 < values.count ? values[$0] : .null })
                if rows.count == chunk { try flush() }
            }
            try flush()
            var seen: Set<Int64> = []
            updated = updated.filter { seen.insert($0).inserted }
            var changes = BatchChanges()
            changes.inserted = [(entity.name, inserted)]
            changes.updated = updated.map { (RowReference(entity: entity.name, key: $0), written) }
            let result = BatchResult(
                kind: .insert, resultType: request.resultType, count: inserted.count + updated.count,
                objectIDs: request.resultType == .objectIDs
                    ? (inserted + updated).map { objectID(RowReference(entity: entity.name, key: $0)) } : nil)
            return (changes, result)
        }
    }

    /// One row of an upsert: inserted, or kept out by a stored row with the same unique values
    /// (which takes its values when `replace`, unless it is another entity's). Returns the key
    /// of the row written, if any.
    private func upsert(
        _ row: [AttributeValue], key: Int64, entity: Entity, layout entityLayout: StoreLayout.EntityLayout, types: [AttributeType],
        replace: Bool
    ) -> (sql: String, binds: PostgresBindings) {
        var bindings = PostgresBindings()
        bindings.append(string: entity.name)
        bindings.append(integer: StoreLayout.initialVersion)
        bindings.append(integer: key)
        for value in row { bindings.append(value: value) }
        let attributeColumns = entityLayout.attributeColumns.compactMap { $0 }
        let columns = [StoreLayout.entityColumn, StoreLayout.versionColumn, StoreLayout.primaryKeyColumn] + attributeColumns
        let placeholders = columns.indices.map { index in "$\(index + 1)" + (index >= 3 ? PostgresColumnArray.sqlCast(for: types[index - 3]) : "") }
        let table = quoted(entityLayout.table)
        let pk = quoted(StoreLayout.primaryKeyColumn)
        let insert =
            "INSERT INTO \(table) (" + columns.map(quoted).joined(separator: ", ") + ") VALUES (" + placeholders.joined(separator: ", ")
            + ") ON CONFLICT DO NOTHING RETURNING \(pk)"
        guard replace else { return (insert, bindings) }
        // The stored row a conflict names: equal on every column of one uniqueness constraint.
        var matches: [String] = []
        for constraint in entity.uniquenessConstraints {
            let terms = constraint.compactMap { name -> String? in
                guard let position = attributeColumns.firstIndex(of: name) else { return nil }
                return "\(table).\(quoted(name)) = $\(position + 4)" + PostgresColumnArray.sqlCast(for: types[position])
            }
            if terms.count == constraint.count { matches.append("(" + terms.joined(separator: " AND ") + ")") }
        }
        guard !matches.isEmpty else { return (insert, bindings) }
        let assignments =
            attributeColumns.enumerated().map { "\(quoted($0.element)) = \(placeholders[$0.offset + 3])" }
            + ["\(quoted(StoreLayout.versionColumn)) = \(table).\(quoted(StoreLayout.versionColumn)) + 1"]
        let kinds = entityNameList(layoutKinds(of: entity) ?? [entity.name])
        let sql = """
            WITH inserted AS (\(insert)), \
            updated AS (UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE NOT EXISTS (SELECT 1 FROM inserted) \
            AND \(table).\(quoted(StoreLayout.entityColumn)) = $1 AND \(table).\(quoted(StoreLayout.entityColumn)) IN (\(kinds)) \
            AND (\(matches.joined(separator: " OR "))) RETURNING \(table).\(pk)) \
            SELECT \(pk) FROM inserted UNION ALL SELECT \(pk) FROM updated
            """
        return (sql, bindings)
    }

    private func layoutKinds(of entity: Entity) -> [String]? {
        layout.base.entities[entity.rootEntity.name]?.kindNames
    }

    // MARK: Update

    /// Updates the matching rows with one `UPDATE` of their keys, in a transaction under the
    /// schema's write lock, raising each row's version.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Movie>(predicate: \.year < 1950), in: store.schema)
    /// let result = try store.batchUpdate(
    ///     StoreBatchUpdate(plan: plan, propertiesToUpdate: ["rating": .key("rating") + 1], resultType: .count))
    /// ```
    public func batchUpdate(_ request: StoreBatchUpdate) throws -> BatchResult {
        let entity = request.plan.entity
        let (_, entityLayout) = try resolve(entity.name)
        var compiler = PostgresUpdateCompiler(entity: entity, layout: entityLayout, arguments: PostgresBindings())
        let (assignments, names) = try compiler.assignments(for: request.propertiesToUpdate)
        var bindings = compiler.arguments
        let keysParameter = bindings.count + 1
        let sql =
            "UPDATE \(quoted(entityLayout.table)) SET " + assignments
            + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ANY($\(keysParameter))"
        return try runBatch(author: request.author, contextName: request.contextName) { session, _ in
            let rows = try selectRows(request.plan, session: session)
            if !rows.isEmpty {
                bindings.append(rows.map(\.key))
                do {
                    try session.query(sql, bindings)
                } catch let error as StrataError {
                    throw PostgresDialect.translate(error)
                }
            }
            var changes = BatchChanges()
            changes.updated = rows.map { ($0, names) }
            return (changes, BatchResult(updated: rows.count, by: request) { rows.map(objectID) })
        }
    }

    // MARK: Delete

    /// Deletes the rows, and applies the delete rules, in one transaction under the schema's write
    /// lock; the statements go to the server in one round trip.
    ///
    /// For example:
    ///
    /// ```swift
    /// let result = try store.batchDelete(StoreBatchDelete(selection: .objectIDs(ids), author: "cleanup"))
    /// ```
    public func batchDelete(_ request: StoreBatchDelete) throws -> BatchResult {
        try runBatch(author: request.author, contextName: request.contextName) { session, history in
            let selected: [RowReference]
            switch request.selection {
            case .plan(let plan): selected = try selectRows(plan, session: session)
            case .objectIDs(let objectIDs): selected = try existingRows(objectIDs, session: session)
            }
            var plan = BatchDeletionPlan()
            try plan.delete(selected, schema: schema) { entity, number, keys in
                try relatedRows(of: entity, number: number, keys: keys, session: session)
            }
            var changes = BatchChanges()
            var statements: [(sql: String, binds: PostgresBindings)] = []
            for (relationship, _, survivors) in plan.nullifications {
                statements += clearInverse(of: relationship, on: survivors)
            }
            for entityName in plan.entityOrder {
                guard let keys = plan.rows[entityName], let entity = schema.entity(named: entityName),
                    let entityLayout = layout.base.entities[entityName]
                else { continue }
                if history.isRecording { try history.keepTombstones(of: entity, keys: keys, store: self, session: session) }
                for (table, column) in layout.base.joinColumnsByTable[entityLayout.table] ?? [] {
                    var bindings = PostgresBindings()
                    bindings.append(keys)
                    statements.append(("DELETE FROM \(quoted(table)) WHERE \(quoted(column)) = ANY($1)", bindings))
                }
                var bindings = PostgresBindings()
                bindings.append(keys)
                statements.append(
                    ("DELETE FROM \(quoted(entityLayout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ANY($1)", bindings))
                changes.deleted += keys.map { RowReference(entity: entityName, key: $0) }
            }
            _ = try session.pipeline(statements)
            changes.updated = plan.updatedRows
            let result = BatchResult(
                kind: .delete, resultType: request.resultType, count: selected.count,
                objectIDs: request.resultType == .objectIDs ? selected.map(objectID) : nil)
            return (changes, result)
        }
    }

    /// The rows of these objects that exist, each once, in the order given.
    private func existingRows(_ objectIDs: [ObjectID], session: PostgresSession) throws -> [RowReference] {
        var byTable: [String: [Int64]] = [:]
        for objectID in objectIDs where objectID.storeIdentifier == identifier {
            guard let key = objectID.primaryKey, let entityLayout = layout.base.entities[objectID.entityName] else { continue }
            byTable[entityLayout.table, default: []].append(key)
        }
        var found: [String: [Int64: String]] = [:]
        for (table, keys) in byTable {
            var bindings = PostgresBindings()
            bindings.append(keys)
            let rows = try session.query(
                "SELECT \(quoted(StoreLayout.primaryKeyColumn)), \(quoted(StoreLayout.entityColumn)) FROM \(quoted(table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ANY($1)",
                bindings
            ).rows
            for row in rows {
                let cells = row.makeRandomAccess()
                guard let key = PostgresValueCoding.integer(cells[0]), let entity = PostgresValueCoding.string(cells[1]) else { continue }
                found[table, default: [:]][key] = entity
            }
        }
        var seen: Set<RowReference> = []
        return objectIDs.compactMap { objectID in
            guard objectID.storeIdentifier == identifier, let key = objectID.primaryKey,
                let table = layout.base.entities[objectID.entityName]?.table, let entity = found[table]?[key],
                layout.base.entities[objectID.entityName]?.kindNames.contains(entity) ?? false
            else { return nil }
            let row = RowReference(entity: entity, key: key)
            return seen.insert(row).inserted ? row : nil
        }
    }

    /// The rows one relationship of `keys` (rows of `entity`) holds.
    private func relatedRows(of entity: Entity, number: Int, keys: [Int64], session: PostgresSession) throws -> [RowReference] {
        guard let entityLayout = layout.base.entities[entity.name] else { return [] }
        let relationship = entity.relationships[number]
        guard let destination = schema.entity(named: relationship.destinationEntityName),
            let destinationLayout = layout.base.entities[destination.name]
        else { return [] }
        let pk = quoted(StoreLayout.primaryKeyColumn)
        let entityColumn = quoted(StoreLayout.entityColumn)
        var bindings = PostgresBindings()
        bindings.append(keys)
        let sql: String
        if let column = entityLayout.toOneColumns[number] {
            let targetEntity = entityLayout.toOneEntityColumns[number].map { quoted($0) } ?? "'\(destination.name)'"
            sql = "SELECT \(quoted(column)), \(targetEntity)::text FROM \(quoted(entityLayout.table)) WHERE \(pk) = ANY($1) AND \(quoted(column)) IS NOT NULL"
        } else {
            switch entityLayout.toMany[number] {
            case .inverseColumn(let table, let column, _):
                sql =
                    "SELECT \(pk), \(entityColumn) FROM \(quoted(table)) WHERE \(quoted(column)) = ANY($1) AND \(entityColumn) IN ("
                    + entityNameList(destinationLayout.kindNames) + ")"
            case .joinTable(let table, let sourceColumn, let targetColumn, _):
                sql =
                    "SELECT j.\(quoted(targetColumn)), t.\(entityColumn) FROM \(quoted(table)) j JOIN \(quoted(destinationLayout.table)) t"
                    + " ON t.\(pk) = j.\(quoted(targetColumn)) WHERE j.\(quoted(sourceColumn)) = ANY($1)"
            case nil:
                return []
            }
        }
        return try session.query(sql, bindings).rows.compactMap { row in
            let cells = row.makeRandomAccess()
            guard let key = PostgresValueCoding.integer(cells[0]), let entity = PostgresValueCoding.string(cells[1]) else { return nil }
            return RowReference(entity: entity, key: key)
        }
    }

    /// Clears the references the surviving rows hold to deleted rows, for a nullify rule.
    private func clearInverse(of relationship: RelationshipDescription, on survivors: [RowReference]) -> [(sql: String, binds: PostgresBindings)] {
        guard let inverseName = relationship.inverseName else { return [] }
        var statements: [(sql: String, binds: PostgresBindings)] = []
        for (entityName, group) in Dictionary(grouping: survivors, by: \.entity).sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entity(named: entityName), let number = entity.relationshipNumber(named: inverseName),
                let entityLayout = layout.base.entities[entityName], let column = entityLayout.toOneColumns[number]
            else { continue }
            var assignments = ["\(quoted(column)) = NULL"]
            if let entityColumn = entityLayout.toOneEntityColumns[number] { assignments.append("\(quoted(entityColumn)) = NULL") }
            assignments.append("\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1")
            var bindings = PostgresBindings()
            bindings.append(group.map(\.key))
            statements.append(
                ("UPDATE \(quoted(entityLayout.table)) SET " + assignments.joined(separator: ", ")
                    + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ANY($1)", bindings))
        }
        return statements
    }
}
