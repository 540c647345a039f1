import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// Takes `count` keys from the PostgreSQL sequence of the entity's table, which never gives a key
    /// twice, whichever server asks.
    ///
    /// For example:
    ///
    /// ```swift
    /// let keys = try store.reservePrimaryKeys(forEntityNamed: "Movie", count: 3)
    /// ```
    public func reservePrimaryKeys(forEntityNamed entityName: String, count: Int) throws -> [Int64] {
        let (_, entityLayout) = try resolve(entityName)
        guard count > 0 else { return [] }
        try checkWritable()
        try checkNotPreparing()
        return try pool.withConnection { session in
            try Self.nextKeys(in: entityLayout.table, count: count, session: session)
        }
    }

    /// `count` keys from a table's sequence, which never gives a key twice.
    static func nextKeys(in table: String, count: Int, session: PostgresSession) throws -> [Int64] {
        var bindings = PostgresBindings()
        bindings.append(integer: Int64(count))
        let sequence = quoted(PostgresLayout.keySequence(of: table))
        let rows = try session.query("SELECT nextval('\(sequence)') FROM generate_series(1, $1)", bindings).rows
        return rows.compactMap { $0.makeRandomAccess().first.flatMap(PostgresValueCoding.integer) }
    }

    /// Applies the change set as ``save(preparedBy:)`` does, in one transaction under the schema's
    /// write lock; an empty change set does not reach the server.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Review>(predicate: \.stars == 0), in: store.schema)
    /// var changes = StoreChangeSet()
    /// changes.deletes = try store.fetch(plan).map { (objectID: $0.objectID, expectedVersion: $0.version) }
    /// changes.author = "cleanup"
    /// let result = try store.save(changes)   // optimisticLockingFailure if one changed since it was read
    /// ```
    public func save(_ changes: StoreChangeSet) throws -> StoreSaveResult {
        guard !changes.isEmpty else { return StoreSaveResult() }
        return try save(preparedBy: { changes })
    }

    /// Runs `prepare` inside the write transaction, holding the schema's write lock, so that
    /// its reads see the state the save writes over and no writer (on any server) commits in
    /// between; then applies the change set in the same transaction.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Review>(predicate: \.stars == 0), in: store.schema)
    /// let result = try store.save(preparedBy: {
    ///     var changes = StoreChangeSet()   // read under the write lock: no server commits in between
    ///     changes.deletes = try store.fetch(plan).map { (objectID: $0.objectID, expectedVersion: $0.version) }
    ///     return changes
    /// })
    /// ```
    public func save(preparedBy prepare: () throws -> StoreChangeSet) throws -> StoreSaveResult {
        let (changes, result, timestamp, token) = try writeTransaction { session, recordsHistory in
            let changes = try Self.$preparingSave.withValue(PreparingSave(store: ObjectIdentifier(self), session: session)) {
                try prepare()
            }
            let timestamp = Date()
            guard !changes.isEmpty else { return (changes, StoreSaveResult(), timestamp, HistoryToken?.none) }
            var writer = PostgresChangeWriter(store: self, session: session)
            if recordsHistory { try writer.keepTombstones(of: changes.deletes.map(\.objectID)) }
            try writer.apply(changes)
            var token: HistoryToken?
            if recordsHistory {
                let number = try writer.recordHistory(of: changes, timestamp: timestamp)
                token = HistoryToken(storeIdentifier: identifier, transactionNumber: number)
            }
            return (changes, writer.result, timestamp, token)
        } announce: { changes, result, _, token in
            changes.isEmpty
                ? nil
                : notification(
                    inserted: changes.inserts.compactMap { result.permanentIDs[$0.objectID] }, updated: changes.updates.map(\.objectID),
                    deleted: changes.deletes.map(\.objectID), author: changes.author, contextName: changes.contextName,
                    transaction: token?.transactionNumber)
        }
        guard !changes.isEmpty else { return result }
        let inserted = changes.inserts.compactMap { result.permanentIDs[$0.objectID] }
        var commit = StoreCommit(
            storeIdentifier: identifier, insertedObjectIDs: inserted, updatedObjectIDs: changes.updates.map(\.objectID),
            deletedObjectIDs: changes.deletes.map(\.objectID), author: changes.author, contextName: changes.contextName,
            timestamp: timestamp, historyToken: token)
        commit.origin = changes.origin
        commitObservers.notify(commit)
        return result
    }

    /// Runs `body` in a write transaction holding the schema's write lock: no writer on any
    /// server commits between its reads and its writes. `body` learns whether the store records
    /// history (asked inside the transaction: another server may have turned it on).
    func writeTransaction<T>(
        _ body: (PostgresSession, Bool) throws -> T, announce: (T) -> (sql: String, binds: PostgresBindings)?
    ) throws -> T {
        try checkWritable()
        try checkNotPreparing()
        return try pool.withConnection { session in
            var lock = PostgresBindings()
            lock.append(integer: writeLockKey)
            // One round trip: begin, lock, and look whether history is on and whether the store
            // still has this store's schema (a migration that ran while this server had lost
            // its connection would have changed it).
            let opened = try session.pipeline([
                ("BEGIN", PostgresBindings()), ("SELECT pg_advisory_xact_lock($1)", lock),
                (
                    "SELECT key, value FROM \(quoted(PostgresLayout.metadataTable)) WHERE key IN ('\(Self.historyMetadataKey)', 'versionHash')",
                    PostgresBindings()
                ),
            ])
            var metadata: [String: Data] = [:]
            for row in opened.last?.rows ?? [] {
                let cells = Array(row)
                guard cells.count == 2, let key = PostgresValueCoding.string(cells[0]) else { continue }
                metadata[key] = PostgresValueCoding.data(cells[1]) ?? Data()
            }
            guard metadata["versionHash"] == Data(schema.versionHash.utf8) else {
                _ = try? session.query("ROLLBACK")
                schemaWasMigrated.withLock { $0 = true }
                throw StrataError(
                    .incompatibleSchema,
                    "The store \(configuration) was migrated to another schema while this container had it open; nothing was saved. Open a new container with the new schema.",
                    fileURL: url)
            }
            let recordsHistory = isPersistentHistoryTrackingEnabled || metadata[Self.historyMetadataKey] != nil
            if recordsHistory { historyTracking.withLock { $0 = true } }
            let result: T
            do {
                result = try body(session, recordsHistory)
            } catch {
                if !session.isBroken { _ = try? session.query("ROLLBACK") }
                if let error = error as? StrataError { instrumentation.conflict(error) }
                throw error
            }
            // The notice goes with the commit, in one round trip; PostgreSQL delivers it only
            // if the transaction commits.
            var closing: [(sql: String, binds: PostgresBindings)] = []
            if let notice = announce(result) { closing.append(notice) }
            closing.append(("COMMIT", PostgresBindings()))
            do {
                _ = try session.pipeline(closing)
            } catch {
                if !session.isBroken { _ = try? session.query("ROLLBACK") }
                if let error = error as? StrataError { instrumentation.conflict(error) }
                throw error
            }
            instrumentation.metrics.saves.increment()
            return result
        }
    }
}

/// Applies one change set inside a write transaction.
struct PostgresChangeWriter: SQLChangeWriter {
    let store: PostgresStore
    let session: PostgresSession
    var result = StoreSaveResult()

    init(store: PostgresStore, session: PostgresSession) {
        self.store = store
        self.session = session
    }

    /// The permanent form of an ID: saved objects keep theirs, objects inserted in this save
    /// get the one just assigned.
    func permanent(_ objectID: ObjectID) throws -> ObjectID { try result.permanent(objectID) }

    /// The history entries of this save, when the store records history.
    var history = PostgresHistoryRecorder()

    /// Reads the values deleted objects keep in history, before their rows go.
    mutating func keepTombstones(of objectIDs: [ObjectID]) throws {
        for (entityName, ids) in Dictionary(grouping: objectIDs, by: \.entityName) {
            guard let entity = store.schema.entity(named: entityName), entity.attributes.contains(where: \.preservesValueOnDeletion)
            else { continue }
            try history.keepTombstones(of: entity, keys: ids.compactMap(\.primaryKey), store: store, session: session)
        }
    }

    /// Writes the history of a change set just applied.
    ///
    /// - Returns: The transaction's number.
    func recordHistory(of changes: StoreChangeSet, timestamp: Date) throws -> Int64 {
        try history.write(
            HistoryChangeEntries(changes, permanentIDs: result.permanentIDs, schema: store.schema).entries,
            author: changes.author, contextName: changes.contextName, timestamp: timestamp, session: session)
    }

    /// Deleted objects, checking their versions, and the join rows that mention them: all the
    /// statements sent at once.
    mutating func deleteRows(_ deletes: [(objectID: ObjectID, expectedVersion: Int64)]) throws {
        guard !deletes.isEmpty else { return }
        var statements: [(sql: String, binds: PostgresBindings)] = []
        var checked: [(objectID: ObjectID, entity: String, layout: StoreLayout.EntityLayout, key: Int64)] = []
        var keysByTable: [String: [Int64]] = [:]
        for (objectID, expectedVersion) in deletes {
            let (entity, entityLayout) = try store.resolve(objectID.entityName)
            guard let primaryKey = objectID.primaryKey else { continue }
            var bindings = PostgresBindings()
            bindings.append(integer: primaryKey)
            bindings.append(integer: expectedVersion)
            statements.append(
                ("DELETE FROM \(quoted(entityLayout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = $1 AND \(quoted(StoreLayout.versionColumn)) = $2", bindings))
            checked.append((objectID, entity.name, entityLayout, primaryKey))
            keysByTable[entityLayout.table, default: []].append(primaryKey)
        }
        let results = try session.pipeline(statements)
        for (index, result) in results.enumerated() where result.metadata.rows != 1 {
            let (objectID, entity, entityLayout, key) = checked[index]
            throw try lockingFailure(objectID, entity: entity, deleted: rowVersion(entityLayout, key) == nil)
        }
        var joinStatements: [(sql: String, binds: PostgresBindings)] = []
        for (table, keys) in keysByTable.sorted(by: { $0.key < $1.key }) {
            for (joinTable, column) in store.layout.base.joinColumnsByTable[table] ?? [] {
                var bindings = PostgresBindings()
                bindings.append(keys)
                joinStatements.append(("DELETE FROM \(quoted(joinTable)) WHERE \(quoted(column)) = ANY($1)", bindings))
            }
        }
        _ = try session.pipeline(joinStatements)
    }

    /// Changed objects, checking that nobody changed them since they were read: all the
    /// statements sent at once. To-one references to new objects are written once those have
    /// keys.
    mutating func updateRows(_ updates: [StoreChangeSet.Update]) throws -> [(objectID: ObjectID, number: Int, target: ObjectID)] {
        var deferredToOne: [(objectID: ObjectID, number: Int, target: ObjectID)] = []
        var statements: [(sql: String, binds: PostgresBindings)] = []
        var checked: [(update: StoreChangeSet.Update, entity: String, layout: StoreLayout.EntityLayout, key: Int64)] = []
        for update in updates {
            let (entity, entityLayout) = try store.resolve(update.objectID.entityName)
            guard let primaryKey = update.objectID.primaryKey else { continue }
            var assignments: [String] = []
            var bindings = PostgresBindings()
            for (number, value) in update.attributes.sorted(by: { $0.key < $1.key }) {
                guard number < entityLayout.attributeColumns.count, let column = entityLayout.attributeColumns[number] else { continue }
                bindings.append(value: value)
                assignments.append("\(quoted(column)) = $\(bindings.count)")
            }
            for (number, target) in update.toOne.sorted(by: { $0.key < $1.key }) {
                guard number < entityLayout.toOneColumns.count, let column = entityLayout.toOneColumns[number] else { continue }
                if let target, target.isTemporaryID {
                    deferredToOne.append((update.objectID, number, target))
                    continue
                }
                bindings.append(value: target?.primaryKey.map { .integer($0) } ?? .null)
                assignments.append("\(quoted(column)) = $\(bindings.count)")
                if let entityColumn = entityLayout.toOneEntityColumns[number] {
                    bindings.append(value: target.map { .string($0.entityName) } ?? .null)
                    assignments.append("\(quoted(entityColumn)) = $\(bindings.count)")
                }
            }
            assignments.append("\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1")
            bindings.append(integer: primaryKey)
            bindings.append(integer: update.expectedVersion)
            statements.append(
                ("UPDATE \(quoted(entityLayout.table)) SET " + assignments.joined(separator: ", ")
                    + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = $\(bindings.count - 1) AND \(quoted(StoreLayout.versionColumn)) = $\(bindings.count)",
                 bindings))
            checked.append((update, entity.name, entityLayout, primaryKey))
        }
        let results = try session.pipeline(statements)
        for (index, outcome) in results.enumerated() {
            let (update, entity, entityLayout, key) = checked[index]
            guard outcome.metadata.rows == 1 else {
                throw try lockingFailure(update.objectID, entity: entity, deleted: rowVersion(entityLayout, key) == nil)
            }
            result.versions[update.objectID] = update.expectedVersion + 1
        }
        return deferredToOne
    }

    /// Gives every new object its permanent ID: its reserved key, or the next of its table's
    /// sequence, never one used before.
    mutating func assignKeys(to inserts: [StoreChangeSet.Insert]) throws {
        var needed: [String: Int] = [:]
        var highestGiven: [String: Int64] = [:]
        for insert in inserts {
            let (_, entityLayout) = try store.resolve(insert.objectID.entityName)
            if let key = insert.objectID.primaryKey {
                highestGiven[entityLayout.table] = max(highestGiven[entityLayout.table] ?? .min, key)
            } else {
                needed[entityLayout.table, default: 0] += 1
            }
        }
        var fresh: [String: IndexingIterator<[Int64]>] = [:]
        for (table, count) in needed.sorted(by: { $0.key < $1.key }) {
            fresh[table] = try PostgresStore.nextKeys(in: table, count: count, session: session).makeIterator()
        }
        // Keys given with the change set may lie beyond the sequence: move it past them.
        for (table, highest) in highestGiven.sorted(by: { $0.key < $1.key }) {
            var bindings = PostgresBindings()
            bindings.append(integer: highest)
            let sequence = quoted(PostgresLayout.keySequence(of: table))
            try session.query(
                "SELECT setval('\(sequence)', $1) FROM \(sequence) WHERE last_value < $1 OR NOT is_called", bindings)
        }
        let store = store
        try result.recordPermanentIDs(of: inserts, storeIdentifier: store.identifier) { entityName in
            let (_, entityLayout) = try store.resolve(entityName)
            guard let next = fresh[entityLayout.table]?.next() else {
                throw StrataError(.storeError, "The sequence of \(entityLayout.table) gave too few keys.", entityName: entityName)
            }
            return next
        }
    }

    /// Rows of new objects, one statement per entity whatever their number: each column goes
    /// as one array parameter, unnested by the server.
    mutating func insertRows(_ inserts: [StoreChangeSet.Insert]) throws {
        guard !inserts.isEmpty else { return }
        try assignKeys(to: inserts)
        var order: [String] = []
        var byEntity: [String: [StoreChangeSet.Insert]] = [:]
        for insert in inserts {
            if byEntity[insert.objectID.entityName] == nil { order.append(insert.objectID.entityName) }
            byEntity[insert.objectID.entityName, default: []].append(insert)
        }
        var statements: [(sql: String, binds: PostgresBindings)] = []
        for entityName in order {
            let (entity, entityLayout) = try store.resolve(entityName)
            let rows = byEntity[entityName] ?? []
            var columns = [StoreLayout.entityColumn, StoreLayout.versionColumn, StoreLayout.primaryKeyColumn]
            var arrays = [
                PostgresColumnArray(.text, values: Array(repeating: .string(entity.name), count: rows.count)),
                PostgresColumnArray(.bigint, values: Array(repeating: .integer(StoreLayout.initialVersion), count: rows.count)),
                PostgresColumnArray(.bigint, values: try rows.map { .integer(try permanent($0.objectID).primaryKey ?? 0) }),
            ]
            var casts = ["", "", ""]
            for (number, column) in entityLayout.attributeColumns.enumerated() {
                guard let column else { continue }
                let type = entity.attributes[number].type
                columns.append(column)
                casts.append(PostgresColumnArray.sqlCast(for: type))
                arrays.append(
                    PostgresColumnArray(
                        PostgresColumnArray.Element(type),
                        values: rows.map { number < $0.attributes.count ? $0.attributes[number] : .null }))
            }
            for (number, column) in entityLayout.toOneColumns.enumerated() {
                guard let column else { continue }
                var keys: [AttributeValue] = []
                var names: [AttributeValue] = []
                for row in rows {
                    if number < row.toOne.count, let target = row.toOne[number] {
                        let targetID = try permanent(target)
                        keys.append(targetID.primaryKey.map { .integer($0) } ?? .null)
                        names.append(.string(targetID.entityName))
                    } else {
                        keys.append(.null)
                        names.append(.null)
                    }
                }
                columns.append(column)
                casts.append("")
                arrays.append(PostgresColumnArray(.bigint, values: keys))
                if let entityColumn = entityLayout.toOneEntityColumns[number] {
                    columns.append(entityColumn)
                    casts.append("")
                    arrays.append(PostgresColumnArray(.text, values: names))
                }
            }
            var bindings = PostgresBindings()
            for array in arrays { bindings.append(array) }
            let names = columns.indices.map { "c\($0)" }
            let columnList: String = columns.map(quoted).joined(separator: ", ")
            let selected: String = zip(names, casts).map { (name: String, cast: String) in name + cast }.joined(separator: ", ")
            let parameters: String = arrays.indices.map { (index: Int) in "$\(index + 1)" }.joined(separator: ", ")
            let sql =
                "INSERT INTO \(quoted(entityLayout.table)) (\(columnList)) SELECT \(selected) FROM unnest(\(parameters)) AS u(\(names.joined(separator: ", ")))"
            statements.append((sql, bindings))
        }
        _ = try session.pipeline(statements)
    }

    /// To-one references of changed objects to objects this save inserts, once those have keys.
    mutating func writeReferences(_ references: [(objectID: ObjectID, number: Int, target: ObjectID)]) throws {
        var statements: [(sql: String, binds: PostgresBindings)] = []
        for (owner, number, target) in references {
            let (_, entityLayout) = try store.resolve(owner.entityName)
            guard number < entityLayout.toOneColumns.count, let column = entityLayout.toOneColumns[number],
                let primaryKey = try permanent(owner).primaryKey
            else { continue }
            let targetID = try permanent(target)
            var bindings = PostgresBindings()
            bindings.append(integer: targetID.primaryKey ?? 0)
            var assignments = ["\(quoted(column)) = $1"]
            if let entityColumn = entityLayout.toOneEntityColumns[number] {
                bindings.append(string: targetID.entityName)
                assignments.append("\(quoted(entityColumn)) = $2")
            }
            bindings.append(integer: primaryKey)
            statements.append(
                ("UPDATE \(quoted(entityLayout.table)) SET " + assignments.joined(separator: ", ")
                    + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = $\(bindings.count)", bindings))
        }
        _ = try session.pipeline(statements)
    }

    /// To-many relationships the store keeps itself. Both sides of a many-to-many
    /// relationship describe the same join rows: the owning side's contents are written
    /// first, then the other side's positions, when it is ordered.
    mutating func writeToManyRelationships(_ toManyUpdates: [StoreChangeSet.ToManyUpdate]) throws {
        var inverseSidePositions: [(table: String, column: String, source: Int64, targets: [Int64])] = []
        var statements: [(sql: String, binds: PostgresBindings)] = []
        for change in toManyUpdates {
            let (_, entityLayout) = try store.resolve(change.objectID.entityName)
            let objectID = try permanent(change.objectID)
            guard let primaryKey = objectID.primaryKey, change.relationshipNumber < entityLayout.toMany.count else { continue }
            let targets = try change.targets.map { try permanent($0).primaryKey ?? 0 }
            switch entityLayout.toMany[change.relationshipNumber] {
            case .joinTable(let table, let sourceColumn, let targetColumn, let positionColumn):
                guard sourceColumn == StoreLayout.joinSourceColumn else {
                    if let positionColumn { inverseSidePositions.append((table, positionColumn, primaryKey, targets)) }
                    continue
                }
                // Rewrites the rows, keeping the other side's positions of the rows that stay.
                var bindings = PostgresBindings()
                bindings.append(integer: primaryKey)
                bindings.append(targets)
                bindings.append(positionColumn == nil ? [Int64]() : targets.indices.map { Int64($0) })
                let source = quoted(sourceColumn)
                let target = quoted(targetColumn)
                let position = quoted(StoreLayout.joinPositionColumn)
                let inverse = quoted(StoreLayout.joinInversePositionColumn)
                statements.append(
                    ("""
                    WITH old AS (DELETE FROM \(quoted(table)) WHERE \(source) = $1 RETURNING \(target) AS target, \(inverse) AS inverse), \
                    new AS (SELECT t.target, t.ordinality FROM unnest($2::bigint[]) WITH ORDINALITY AS t(target, ordinality)) \
                    INSERT INTO \(quoted(table)) (\(source), \(target), \(position), \(inverse)) \
                    SELECT $1, new.target, (SELECT p FROM unnest($3::bigint[]) WITH ORDINALITY AS q(p, o) WHERE q.o = new.ordinality), \
                    (SELECT old.inverse FROM old WHERE old.target = new.target LIMIT 1) FROM new ORDER BY new.ordinality
                    """, bindings))
            case .inverseColumn(let table, _, let orderColumn):
                guard let orderColumn, !targets.isEmpty else { continue }
                var bindings = PostgresBindings()
                bindings.append(targets)
                statements.append(
                    ("UPDATE \(quoted(table)) SET \(quoted(orderColumn)) = t.ordinality - 1 FROM unnest($1::bigint[]) WITH ORDINALITY AS t(key, ordinality) WHERE \(quoted(table)).\(quoted(StoreLayout.primaryKeyColumn)) = t.key",
                     bindings))
            case nil:
                continue
            }
        }
        _ = try session.pipeline(statements)
        var positions: [(sql: String, binds: PostgresBindings)] = []
        for (table, column, source, targets) in inverseSidePositions where !targets.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(integer: source)
            bindings.append(targets)
            positions.append(
                ("UPDATE \(quoted(table)) SET \(quoted(column)) = t.ordinality - 1 FROM unnest($2::bigint[]) WITH ORDINALITY AS t(key, ordinality) WHERE \(quoted(table)).\(quoted(StoreLayout.joinTargetColumn)) = $1 AND \(quoted(table)).\(quoted(StoreLayout.joinSourceColumn)) = t.key",
                 bindings))
        }
        _ = try session.pipeline(positions)
    }

    func rowVersion(_ entityLayout: StoreLayout.EntityLayout, _ primaryKey: Int64) throws -> Int64? {
        var bindings = PostgresBindings()
        bindings.append(integer: primaryKey)
        let rows = try session.query(
            "SELECT \(quoted(StoreLayout.versionColumn)) FROM \(quoted(entityLayout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = $1",
            bindings
        ).rows
        return rows.first.flatMap { $0.makeRandomAccess().first.flatMap(PostgresValueCoding.integer) }
    }

    func lockingFailure(_ objectID: ObjectID, entity: String, deleted: Bool) -> StrataError {
        .lockingFailure(objectID, entity: entity, deleted: deleted)
    }
}
