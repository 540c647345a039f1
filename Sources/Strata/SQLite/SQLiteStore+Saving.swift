import Foundation
import GRDB

extension SQLiteStore {
    public func reservePrimaryKeys(forEntityNamed entityName: String, count: Int) throws -> [Int64] {
        let (_, layout) = try resolve(entityName)
        guard count > 0 else { return [] }
        try checkWritable()
        try checkNotPreparing()
        do {
            return try writer.write { db in
                // AUTOINCREMENT keeps the highest key ever used in sqlite_sequence; moving it on
                // reserves the keys in between.
                let recorded = try Self.recordedSequence(of: layout.table, in: db)
                let start = try Self.highestKeyEverUsed(in: layout.table, db: db)
                let end = start + Int64(count)
                if recorded == nil {
                    try db.execute(
                        sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [layout.table, end])
                } else {
                    try db.execute(
                        sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = ?", arguments: [end, layout.table])
                }
                return Array((start + 1)...end)
            }
        } catch {
            throw storeError(error, sql: nil)
        }
    }

    /// The AUTOINCREMENT sequence of `table`: the highest key it ever gave, or `nil` before its
    /// first row.
    static func recordedSequence(of table: String, in db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table])
    }

    /// The highest primary key `table` ever used: its AUTOINCREMENT sequence, or its highest row
    /// where the sequence lags (rows another program wrote with explicit keys). No new row may
    /// get a key at or below it.
    static func highestKeyEverUsed(in table: String, db: Database) throws -> Int64 {
        let highestRow =
            try Int64.fetchOne(db, sql: "SELECT MAX(\(quoted(StoreLayout.primaryKeyColumn))) FROM \(quoted(table))")
            ?? 0
        return max(try recordedSequence(of: table, in: db) ?? 0, highestRow)
    }

    public func save(_ changes: StoreChangeSet) throws -> StoreSaveResult {
        guard !changes.isEmpty else { return StoreSaveResult() }
        return try save(preparedBy: { changes })
    }

    /// Runs `prepare` inside the write transaction, whose reads of this store see its current
    /// state through the writer connection, then applies the change set in the same
    /// transaction.
    public func save(preparedBy prepare: () throws -> StoreChangeSet) throws -> StoreSaveResult {
        try checkWritable()
        try checkNotPreparing()
        var currentSQL: String?
        var timestamp = Date()
        var transactionNumber: Int64?
        let clock = ContinuousClock()
        let asked = clock.now
        do {
            let (changes, result) = try writer.write { db in
                instrumentation.metrics.recordPoolWait(clock.now - asked)
                let changes = try Self.$preparingSave.withValue(ObjectIdentifier(self)) { try prepare() }
                timestamp = Date()  // in the transaction: history timestamps follow transaction order
                // Known before the rows change: deletions keep their tombstones.
                let recordsHistory = try changes.isEmpty ? false : historyTurnedOn(in: db)
                var writer = ChangeWriter(store: self, db: db)
                defer { currentSQL = writer.lastSQL }
                try writer.apply(changes)
                if recordsHistory {
                    let number = try writer.history.write(
                        changes, permanentIDs: writer.result.permanentIDs, timestamp: timestamp, schema: schema, db: db)
                    transactionNumber = number
                    historyAnnouncement.withLock { if $0.isPolling { $0.own.insert(number) } }
                }
                return (changes, writer.result)
            }
            guard !changes.isEmpty else { return result }
            instrumentation.metrics.saves.increment()
            let inserted = changes.inserts.compactMap { result.permanentIDs[$0.objectID] }
            var commit = StoreCommit(
                storeIdentifier: identifier, insertedObjectIDs: inserted,
                updatedObjectIDs: changes.updates.map(\.objectID),
                deletedObjectIDs: changes.deletes.map(\.objectID), author: changes.author,
                contextName: changes.contextName, timestamp: timestamp,
                historyToken: transactionNumber.map { HistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
            commit.origin = changes.origin
            commitObservers.notify(commit)
            return result
        } catch {
            // The transaction rolled back: its number was not used, and another writer may get it.
            if let transactionNumber { historyAnnouncement.withLock { _ = $0.own.remove(transactionNumber) } }
            let failure = saveError(error, sql: currentSQL)
            instrumentation.conflict(failure)
            throw failure
        }
    }

    private func saveError(_ error: any Error, sql currentSQL: String?) -> StrataError {
        if let error = error as? StrataError { return error }
        if let error = error as? DatabaseError, error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            return StrataError(
                .constraintConflict,
                "Saving would break a uniqueness constraint (\(error.message ?? "UNIQUE constraint failed")). Nothing was saved.",
                fileURL: url, sql: currentSQL ?? error.sql, underlyingError: error)
        }
        return storeError(error, sql: currentSQL)
    }

    /// The store whose ``save(preparedBy:)`` is preparing a change set on this thread: its
    /// reads go through the write transaction.
    @TaskLocal static var preparingSave: ObjectIdentifier?

    /// Whether this store is preparing a save on this thread.
    var isPreparingSave: Bool { Self.preparingSave == ObjectIdentifier(self) }

    /// Refuses a write from inside ``save(preparedBy:)``'s `prepare`, which would wait for the
    /// transaction it runs in.
    func checkNotPreparing() throws {
        guard isPreparingSave else { return }
        throw StrataError(
            .storeError, "A store cannot be written while it prepares a save; the preparation may only read.",
            fileURL: url)
    }
}

/// Applies one change set inside a write transaction.
struct ChangeWriter: SQLChangeWriter {
    let store: SQLiteStore
    let db: Database
    var result = StoreSaveResult()
    var lastSQL: String?
    /// The history entries of the change set, when the store records history.
    var history = HistoryRecorder()

    init(store: SQLiteStore, db: Database) {
        self.store = store
        self.db = db
    }

    /// The permanent form of an ID: saved objects keep theirs, objects inserted in this save
    /// get the one just assigned.
    func permanent(_ objectID: ObjectID) throws -> ObjectID { try result.permanent(objectID) }

    /// Prepared inserts per entity, and update statements' SQL per set of columns.
    var insertStatements: [InsertKey: PreparedInsert] = [:]
    var updateSQL: [UpdateKey: String] = [:]
    /// The statement of the last update, for the next update of the same columns (a save
    /// usually changes the same attributes of many objects): no SQL built or looked up.
    var lastUpdate: (key: UpdateKey, statement: StatementBinder)?

    struct InsertKey: Hashable {
        var entityName: String
        var rows: Int
    }

    struct PreparedInsert {
        var statement: StatementBinder
        var entityName: String
        /// The attribute numbers bound after the fixed columns, in column order.
        var attributeNumbers: [Int]
        /// The to-one relationship numbers bound after the attributes, in column order.
        var toOne: [(number: Int, hasEntityColumn: Bool)]
    }

    struct UpdateKey: Hashable {
        var table: String
        var columns: [String]
    }

    /// The insert statement of an entity: fixed columns, attributes, then each to-one
    /// relationship's key column (and entity column, where its destination has subentities).
    mutating func prepareInsert(entityName: String, rows: Int) throws -> PreparedInsert {
        let (entity, layout) = try store.resolve(entityName)
        var columns = [StoreLayout.entityColumn, StoreLayout.versionColumn, StoreLayout.primaryKeyColumn]
        let attributeNumbers = layout.attributeColumns.indices.filter { layout.attributeColumns[$0] != nil }
        columns += attributeNumbers.compactMap { layout.attributeColumns[$0] }
        var toOne: [(number: Int, hasEntityColumn: Bool)] = []
        for (number, column) in layout.toOneColumns.enumerated() {
            guard let column else { continue }
            columns.append(column)
            let entityColumn = number < layout.toOneEntityColumns.count ? layout.toOneEntityColumns[number] : nil
            if let entityColumn { columns.append(entityColumn) }
            toOne.append((number, entityColumn != nil))
        }
        let row = "(" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
        let sql =
            "INSERT INTO \(quoted(layout.table)) (" + columns.map(quoted).joined(separator: ", ") + ") VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
        return PreparedInsert(
            statement: try statement(sql), entityName: entity.name, attributeNumbers: attributeNumbers, toOne: toOne)
    }

    /// The most rows one INSERT statement writes.
    static let maximumRowsPerInsert = 64

    /// How many rows of an entity one INSERT writes at most: a power of two, at most
    /// ``maximumRowsPerInsert``, and few enough for the connection's limit on parameters.
    mutating func rowsPerInsert(entityName: String) throws -> Int {
        let (_, layout) = try store.resolve(entityName)
        let columns =
            3 + layout.attributeColumns.count { $0 != nil } + layout.toOneColumns.count { $0 != nil }
            + layout.toOneEntityColumns.count { $0 != nil }
        // The connection's own limit: 32,766 since SQLite 3.32, 999 before.
        let limit = db.maximumStatementArgumentCount
        var rows = Self.maximumRowsPerInsert
        while rows > 1 && rows * columns > limit { rows /= 2 }
        return rows
    }

    /// Gives every new object its permanent ID: its reserved key, or the next key of its
    /// table, never one used before (AUTOINCREMENT's sequence and the table's highest key).
    mutating func assignKeys(to inserts: [StoreChangeSet.Insert]) throws {
        // Keys reserved earlier may lie above the sequence (a change set saved straight to the
        // store can carry any permanent ID): new keys start above the highest of them too.
        var highestReserved: [String: Int64] = [:]
        for insert in inserts {
            guard let reserved = insert.objectID.primaryKey else { continue }
            let (_, layout) = try store.resolve(insert.objectID.entityName)
            highestReserved[layout.table] = Swift.max(highestReserved[layout.table] ?? 0, reserved)
        }
        lastSQL = nil  // an error names its own statement (GRDB's DatabaseError.sql)
        var lastKeys: [String: Int64] = [:]
        let (store, db) = (store, db)
        try result.recordPermanentIDs(of: inserts, storeIdentifier: store.identifier) { entityName in
            let (_, layout) = try store.resolve(entityName)
            let last: Int64
            if let assigned = lastKeys[layout.table] {
                last = assigned
            } else {
                let highest = try SQLiteStore.highestKeyEverUsed(in: layout.table, db: db)
                last = Swift.max(highest, highestReserved[layout.table] ?? 0)
            }
            guard last < Int64.max else {
                throw StrataError(
                    .storeError, "\(layout.table) has used every primary key up to \(Int64.max).",
                    entityName: entityName, fileURL: store.url)
            }
            lastKeys[layout.table] = last + 1
            return last + 1
        }
    }

    /// The INSERT of `rows` rows of an entity, prepared once per entity and row count.
    mutating func preparedInsert(entityName: String, rows: Int) throws -> PreparedInsert {
        let key = InsertKey(entityName: entityName, rows: rows)
        if let cached = insertStatements[key] { return cached }
        let prepared = try prepareInsert(entityName: entityName, rows: rows)
        insertStatements[key] = prepared
        return prepared
    }

    /// Writes the rows of consecutive new objects of one entity with one statement; their keys
    /// were assigned by ``assignKeys(to:)``.
    mutating func insertRun(_ inserts: ArraySlice<StoreChangeSet.Insert>) throws {
        guard let first = inserts.first else { return }
        let prepared = try preparedInsert(entityName: first.objectID.entityName, rows: inserts.count)
        let statement = prepared.statement
        lastSQL = statement.sql
        var index: Int32 = 1
        for insert in inserts {
            try statement.bind(prepared.entityName, at: index)
            try statement.bind(StoreLayout.initialVersion, at: index + 1)
            try statement.bind(try permanent(insert.objectID).primaryKey ?? 0, at: index + 2)
            index += 3
            for number in prepared.attributeNumbers {
                try statement.bind(number < insert.attributes.count ? insert.attributes[number] : .null, at: index)
                index += 1
            }
            for (number, hasEntityColumn) in prepared.toOne {
                var targetKey: Int64?
                var targetEntity: String?
                if number < insert.toOne.count, let target = insert.toOne[number] {
                    let targetID = try permanent(target)
                    targetKey = targetID.primaryKey
                    targetEntity = targetID.entityName
                }
                try statement.bind(targetKey.map { .integer($0) } ?? .null, at: index)
                index += 1
                if hasEntityColumn {
                    try statement.bind(targetEntity.map { .string($0) } ?? .null, at: index)
                    index += 1
                }
            }
        }
        defer { statement.clearBindings() }  // a cached 64-row statement would keep every value
        try statement.execute()
    }

    /// A cached statement for `sql`, ready to bind.
    mutating func statement(_ sql: String) throws -> StatementBinder {
        lastSQL = sql
        return StatementBinder(try db.cachedStatement(sql: sql), sql: sql, in: db)
    }

    mutating func execute(_ sql: String, _ arguments: StatementArguments) throws {
        lastSQL = sql
        let statement = try db.cachedStatement(sql: sql)
        try statement.execute(arguments: arguments)
    }

    /// Deleted objects, checking their versions, and the join rows that mention them.
    mutating func deleteRows(_ deletes: [(objectID: ObjectID, expectedVersion: Int64)]) throws {
        for (objectID, expectedVersion) in deletes {
            let (entity, layout) = try store.resolve(objectID.entityName)
            guard let primaryKey = objectID.primaryKey else { continue }
            if store.isPersistentHistoryTrackingEnabled {
                try history.keepTombstone(of: objectID, entity: entity, layout: layout, db: db)
            }
            let delete = try statement(
                "DELETE FROM \(quoted(layout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ? AND \(quoted(StoreLayout.versionColumn)) = ?"
            )
            try delete.bind(primaryKey, at: 1)
            try delete.bind(expectedVersion, at: 2)
            try delete.execute()
            guard db.changesCount == 1 else {
                throw lockingFailure(objectID, entity: entity.name, deleted: try rowVersion(layout, primaryKey) == nil)
            }
            for (table, column) in store.layout.joinColumnsByTable[layout.table] ?? [] {
                try execute("DELETE FROM \(quoted(table)) WHERE \(quoted(column)) = ?", [primaryKey])
            }
        }
    }

    /// Changed objects, checking that nobody changed them since they were read. To-one
    /// references to new objects are written once those have keys, by ``writeReferences(_:)``.
    ///
    /// - Returns: The to-one references to new objects, written by ``writeReferences(_:)``.
    mutating func updateRows(
        _ updates: [StoreChangeSet.Update]
    ) throws -> [(objectID: ObjectID, number: Int, target: ObjectID)] {
        var deferredToOne: [(objectID: ObjectID, number: Int, target: ObjectID)] = []
        for update in updates {
            let (entity, layout) = try store.resolve(update.objectID.entityName)
            guard let primaryKey = update.objectID.primaryKey else { continue }
            var assignments: [(column: String, value: AttributeValue)] = []
            for (number, value) in update.attributes.sorted(by: { $0.key < $1.key }) {
                guard number < layout.attributeColumns.count, let column = layout.attributeColumns[number] else {
                    continue
                }
                assignments.append((column, value))
            }
            for (number, target) in update.toOne.sorted(by: { $0.key < $1.key }) {
                guard number < layout.toOneColumns.count, let column = layout.toOneColumns[number] else { continue }
                if let target, target.isTemporaryID {
                    deferredToOne.append((update.objectID, number, target))
                    continue
                }
                assignments.append((column, target?.primaryKey.map { .integer($0) } ?? .null))
                if let entityColumn = layout.toOneEntityColumns[number] {
                    assignments.append((entityColumn, target.map { .string($0.entityName) } ?? .null))
                }
            }
            let columns = assignments.map(\.column)
            let key = UpdateKey(table: layout.table, columns: columns)
            let statement: StatementBinder
            if let last = lastUpdate, last.key == key {
                statement = last.statement
                lastSQL = statement.sql
            } else {
                statement = try self.statement(updateStatementSQL(for: key))
                lastUpdate = (key, statement)
            }
            for (offset, assignment) in assignments.enumerated() {
                try statement.bind(assignment.value, at: Int32(offset + 1))
            }
            try statement.bind(primaryKey, at: Int32(assignments.count + 1))
            try statement.bind(update.expectedVersion, at: Int32(assignments.count + 2))
            try statement.execute()
            guard db.changesCount == 1 else {
                throw lockingFailure(
                    update.objectID, entity: entity.name, deleted: try rowVersion(layout, primaryKey) == nil)
            }
            result.versions[update.objectID] = update.expectedVersion + 1
        }
        return deferredToOne
    }

    /// The UPDATE statement for a table and columns: sets them, raises the version, and
    /// matches the row by key and expected version.
    mutating func updateStatementSQL(for key: UpdateKey) -> String {
        if let cached = updateSQL[key] { return cached }
        let sql =
            "UPDATE \(quoted(key.table)) SET "
            + (key.columns.map { "\(quoted($0)) = ?" } + [
                "\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1"
            ])
            .joined(separator: ", ")
            + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ? AND \(quoted(StoreLayout.versionColumn)) = ?"
        updateSQL[key] = sql
        return sql
    }

    /// Rows of new objects with their to-one references. Every new object gets its key
    /// first (a key reserved when its permanent ID was obtained early, or the next of its
    /// table's AUTOINCREMENT sequence), so that references between new objects are
    /// written with the rows. Consecutive objects of one entity share one multi-row
    /// INSERT: the statement's fixed cost and AUTOINCREMENT's bookkeeping in
    /// sqlite_sequence are paid once per run instead of once per row.
    mutating func insertRows(_ inserts: [StoreChangeSet.Insert]) throws {
        try assignKeys(to: inserts)
        var runStart = inserts.startIndex
        while runStart < inserts.endIndex {
            let entityName = inserts[runStart].objectID.entityName
            let limit = try rowsPerInsert(entityName: entityName)
            var runEnd = runStart + 1
            while runEnd < inserts.endIndex, runEnd - runStart < limit,
                inserts[runEnd].objectID.entityName == entityName
            {
                runEnd += 1
            }
            // Runs split into powers of two (37 rows: 32, 4, 1), so that an entity needs at
            // most seven statements however its saves are sized.
            while runStart < runEnd {
                var size = 1
                while size * 2 <= runEnd - runStart { size *= 2 }
                try insertRun(inserts[runStart..<runStart + size])
                runStart += size
            }
        }
    }

    /// To-one references of changed objects to objects this save inserts, once those have keys.
    mutating func writeReferences(_ references: [(objectID: ObjectID, number: Int, target: ObjectID)]) throws {
        for (owner, number, target) in references {
            let (_, layout) = try store.resolve(owner.entityName)
            guard number < layout.toOneColumns.count, let column = layout.toOneColumns[number],
                let primaryKey = try permanent(owner).primaryKey
            else { continue }
            let targetID = try permanent(target)
            var assignments: [(String, DatabaseValue)] = [(column, (targetID.primaryKey ?? 0).databaseValue)]
            if let entityColumn = layout.toOneEntityColumns[number] {
                assignments.append((entityColumn, targetID.entityName.databaseValue))
            }
            let sql =
                "UPDATE \(quoted(layout.table)) SET "
                + assignments.map { "\(quoted($0.0)) = ?" }.joined(separator: ", ")
                + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ?"
            try execute(sql, StatementArguments(assignments.map(\.1) + [primaryKey.databaseValue]))
        }
    }

    /// To-many relationships the store keeps itself. Both sides of a many-to-many
    /// relationship describe the same join rows: the owning side's contents are written
    /// first, then the other side's positions, when it is ordered.
    mutating func writeToManyRelationships(_ toManyUpdates: [StoreChangeSet.ToManyUpdate]) throws {
        var inverseSidePositions: [(table: String, column: String, source: Int64, targets: [Int64])] = []
        for change in toManyUpdates {
            let (_, layout) = try store.resolve(change.objectID.entityName)
            let objectID = try permanent(change.objectID)
            guard let primaryKey = objectID.primaryKey, change.relationshipNumber < layout.toMany.count else {
                continue
            }
            let targets = try change.targets.map { try permanent($0).primaryKey ?? 0 }
            switch layout.toMany[change.relationshipNumber] {
            case .joinTable(let table, let sourceColumn, let targetColumn, let positionColumn):
                guard sourceColumn == StoreLayout.joinSourceColumn else {
                    if let positionColumn { inverseSidePositions.append((table, positionColumn, primaryKey, targets)) }
                    continue
                }
                // Keep the other side's positions of the rows that stay.
                var kept: [Int64: DatabaseValue] = [:]
                for row in try Row.fetchAll(
                    db,
                    sql:
                        "SELECT \(quoted(targetColumn)), \(quoted(StoreLayout.joinInversePositionColumn)) FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = ?",
                    arguments: [primaryKey])
                {
                    kept[row[0]] = row[1]
                }
                try execute("DELETE FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = ?", [primaryKey])
                let insert =
                    "INSERT INTO \(quoted(table)) (\(quoted(sourceColumn)), \(quoted(targetColumn)), \(quoted(StoreLayout.joinPositionColumn)), \(quoted(StoreLayout.joinInversePositionColumn))) VALUES (?, ?, ?, ?)"
                for (position, target) in targets.enumerated() {
                    let ownPosition: DatabaseValue = positionColumn == nil ? .null : Int64(position).databaseValue
                    try execute(insert, [primaryKey, target, ownPosition, kept[target] ?? .null])
                }
            case .inverseColumn(let table, _, let orderColumn):
                guard let orderColumn else { continue }
                let sql =
                    "UPDATE \(quoted(table)) SET \(quoted(orderColumn)) = ? WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ?"
                for (position, target) in targets.enumerated() {
                    try execute(sql, [Int64(position), target])
                }
            case nil:
                continue
            }
        }
        for (table, column, source, targets) in inverseSidePositions {
            let sql =
                "UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE \(quoted(StoreLayout.joinTargetColumn)) = ? AND \(quoted(StoreLayout.joinSourceColumn)) = ?"
            for (position, target) in targets.enumerated() {
                try execute(sql, [Int64(position), source, target])
            }
        }
    }

    func rowVersion(_ layout: StoreLayout.EntityLayout, _ primaryKey: Int64) throws -> Int64? {
        try Int64.fetchOne(
            db,
            sql:
                "SELECT \(quoted(StoreLayout.versionColumn)) FROM \(quoted(layout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ?",
            arguments: [primaryKey])
    }

    func lockingFailure(_ objectID: ObjectID, entity: String, deleted: Bool) -> StrataError {
        .lockingFailure(objectID, entity: entity, deleted: deleted)
    }
}
