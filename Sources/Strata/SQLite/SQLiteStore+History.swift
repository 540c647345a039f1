import Foundation
import GRDB

/// Persistent history in SQLite: three tables next to the data, written in the same
/// transaction as each save.
///
/// | table | rows |
/// | --- | --- |
/// | `_strata_history_transaction` | one per save or batch request: number (AUTOINCREMENT, never reused), timestamp, author, context name |
/// | `_strata_history_change` | one per changed object: transaction, entity, primary key, kind, updated property names |
/// | `_strata_history_tombstone` | one per value kept of a deleted object (`.preserveValueOnDeletion`) |
/// | `_strata_history_reader` | the last transaction each reader author merged |
///
/// The metadata key `historyTracking` marks a store that records history; once set, every
/// open of the file records, whatever its description says, so that no reader misses a
/// transaction.
extension SQLiteStore {
    static let historyMetadataKey = "historyTracking"

    static let historyCreationStatements = [
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyTransactionTable)) (
        "number" INTEGER PRIMARY KEY AUTOINCREMENT, "timestamp" REAL NOT NULL, "author" TEXT, "context_name" TEXT)
        """,
        "CREATE INDEX IF NOT EXISTS \"_strata_history_transaction_by_timestamp\" ON \(quoted(StoreLayout.historyTransactionTable)) (\"timestamp\")",
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyChangeTable)) (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT, "transaction_number" INTEGER NOT NULL, "entity" TEXT NOT NULL,
        "object_key" INTEGER NOT NULL, "kind" INTEGER NOT NULL, "updated_properties" TEXT)
        """,
        "CREATE INDEX IF NOT EXISTS \"_strata_history_change_by_transaction\" ON \(quoted(StoreLayout.historyChangeTable)) (\"transaction_number\")",
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyTombstoneTable)) (
        "change_id" INTEGER NOT NULL, "attribute" TEXT NOT NULL, "value", PRIMARY KEY ("change_id", "attribute")) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyReaderTable)) (
        "author" TEXT PRIMARY KEY NOT NULL, "transaction_number" INTEGER NOT NULL, "timestamp" REAL NOT NULL)
        """,
    ]

    /// Whether another connection turned history on since this store was opened (inside a write
    /// transaction, where the answer holds until it commits).
    func historyTurnedOn(in db: Database) throws -> Bool {
        guard !isPersistentHistoryTrackingEnabled else { return true }
        let recorded =
            try Data.fetchOne(
                db, sql: "SELECT value FROM \(quoted(StoreLayout.metadataTable)) WHERE key = ?",
                arguments: [Self.historyMetadataKey]) != nil
        if recorded { historyTracking.withLock { $0 = true } }
        return recorded
    }

    /// Whether the store at hand records history: asked for by its description, or recorded by
    /// an earlier open. Creates the history tables when they are asked for and missing (never
    /// in a read-only store, where a store without them simply has no history).
    static func prepareHistory(_ writer: any DatabaseWriter, requested: Bool, isReadOnly: Bool) throws -> Bool {
        let recorded = try writer.read { db in
            try Data.fetchOne(
                db, sql: "SELECT value FROM \(quoted(StoreLayout.metadataTable)) WHERE key = ?",
                arguments: [historyMetadataKey]) != nil
        }
        guard requested, !recorded, !isReadOnly else { return recorded }
        try writer.write { db in
            for statement in historyCreationStatements { try db.execute(sql: statement) }
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(quoted(StoreLayout.metadataTable)) (key, value) VALUES (?, ?)",
                arguments: [historyMetadataKey, Data("1".utf8)])
        }
        return true
    }

    func checkHistoryTracking() throws {
        guard isPersistentHistoryTrackingEnabled else {
            throw StrataError(
                .persistentHistoryUnavailable,
                "The store\(url.map { " at \($0.path)" } ?? "") does not record persistent history. Open it with isPersistentHistoryTrackingEnabled (StoreDescription.sqlite(url, persistentHistoryTracking: true)).",
                fileURL: url)
        }
    }

    func checkToken(_ token: HistoryToken?) throws {
        guard let token, token.storeIdentifier != identifier else { return }
        throw StrataError(
            .persistentHistoryUnavailable,
            "The history token \(token) belongs to another store than \(identifier); ask that store for its history.",
            fileURL: url)
    }

    // MARK: Reading

    public func fetchHistory(_ request: HistoryFetchRequest) throws -> [HistoryTransaction] {
        try checkHistoryTracking()
        try checkToken(request.token)
        if let limit = request.fetchLimit, limit <= 0 { return [] }
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let token = request.token {
            conditions.append("\"number\" > ?")
            arguments.append(token.transactionNumber)
        }
        if let date = request.date {
            conditions.append("\"timestamp\" >= ?")
            arguments.append(date.timeIntervalSinceReferenceDate)
        }
        if let authors = request.authors {
            conditions.append("\"author\" IN (\(authors.map { _ in "?" }.joined(separator: ", ")))")
            arguments += authors.sorted() as [any DatabaseValueConvertible]
        }
        if !request.excludedAuthors.isEmpty {
            conditions.append(
                "(\"author\" IS NULL OR \"author\" NOT IN (\(request.excludedAuthors.map { _ in "?" }.joined(separator: ", "))))")
            arguments += request.excludedAuthors.sorted() as [any DatabaseValueConvertible]
        }
        if let names = request.contextNames {
            conditions.append("\"context_name\" IN (\(names.map { _ in "?" }.joined(separator: ", ")))")
            arguments += names.sorted() as [any DatabaseValueConvertible]
        }
        var sql = "SELECT \"number\", \"timestamp\", \"author\", \"context_name\" FROM \(quoted(StoreLayout.historyTransactionTable))"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY \"number\""
        if let limit = request.fetchLimit {
            sql += " LIMIT ?"
            arguments.append(limit)
        }
        do {
            return try gatedRead { db in
                if let token = request.token { try checkNotExpired(token, in: db) }
                var transactions = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                    HistoryTransaction(
                        token: HistoryToken(storeIdentifier: identifier, transactionNumber: row[0]),
                        timestamp: Date(timeIntervalSinceReferenceDate: row[1]), author: row[2], contextName: row[3],
                        changes: nil)
                }
                if request.includesChanges, let first = transactions.first, let last = transactions.last {
                    let changes = try readChanges(
                        from: first.transactionNumber, through: last.transactionNumber, in: db)
                    for index in transactions.indices {
                        transactions[index].changes = changes[transactions[index].transactionNumber] ?? []
                    }
                }
                return transactions
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw storeError(error, sql: sql)
        }
    }

    /// Throws ``StrataError/Code/historyTokenExpired`` when history after `token` was pruned.
    ///
    /// Transaction numbers have no gaps but pruned ones (AUTOINCREMENT numbers are taken in
    /// the writing transaction, so a rolled-back save takes none): history after the token is
    /// whole exactly when the first transaction after it is the next number, or when no number
    /// after it was ever given out.
    private func checkNotExpired(_ token: HistoryToken, in db: Database) throws {
        let table = quoted(StoreLayout.historyTransactionTable)
        let next = try Int64.fetchOne(db, sql: "SELECT MIN(\"number\") FROM \(table) WHERE \"number\" > ?", arguments: [token.transactionNumber])
        let lastGiven =
            next == nil
            ? try Int64.fetchOne(db, sql: "SELECT \"seq\" FROM sqlite_sequence WHERE \"name\" = ?", arguments: [StoreLayout.historyTransactionTable])
            : nil
        if let next, next == token.transactionNumber + 1 { return }
        if next == nil, (lastGiven ?? 0) <= token.transactionNumber { return }
        throw StrataError.historyTokenExpired(token, oldestKept: next, fileURL: url)
    }

    /// The changes of the transactions numbered `first` through `last`, by transaction.
    private func readChanges(from first: Int64, through last: Int64, in db: Database) throws -> [Int64: [HistoryChange]] {
        var changes: [Int64: [HistoryChange]] = [:]
        var deletions: [Int64: (transaction: Int64, index: Int)] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT "id", "transaction_number", "entity", "object_key", "kind", "updated_properties"
                FROM \(quoted(StoreLayout.historyChangeTable)) WHERE "transaction_number" BETWEEN ? AND ? ORDER BY "id"
                """,
            arguments: [first, last])
        while let row = try rows.next() {
            let changeID: Int64 = row[0]
            let transaction: Int64 = row[1]
            let entityName: String = row[2]
            let kind: Int = row[4]
            let properties: String? = row[5]
            let type: HistoryChange.ChangeType = kind == 0 ? .insert : kind == 1 ? .update : .delete
            let change = HistoryChange(
                changeID: changeID,
                changedObjectID: ObjectID(
                    entityName: entityName, entityNameHash: schema.entity(named: entityName)?.nameHash,
                    storeIdentifier: identifier, primaryKey: row[3]),
                changeType: type,
                updatedProperties: type == .update
                    ? Set((properties ?? "").split(separator: ",").map(String.init)) : nil)
            changes[transaction, default: []].append(change)
            if type == .delete { deletions[changeID] = (transaction, changes[transaction]!.count - 1) }
        }
        guard !deletions.isEmpty else { return changes }
        let tombstones = try Row.fetchCursor(
            db,
            sql: """
                SELECT "change_id", "attribute", "value" FROM \(quoted(StoreLayout.historyTombstoneTable))
                WHERE "change_id" BETWEEN ? AND ?
                """,
            arguments: [deletions.keys.min() ?? 0, deletions.keys.max() ?? 0])
        while let row = try tombstones.next() {
            let changeID: Int64 = row[0]
            guard let (transaction, index) = deletions[changeID], var list = changes[transaction] else { continue }
            let name: String = row[1]
            let stored: DatabaseValue = row[2]
            let entity = schema.entity(named: list[index].changedObjectID.entityName)
            let value =
                entity?.attribute(named: name).map { SQLiteValueCoding.attributeValue(stored, type: $0.type) }
                ?? Self.untypedValue(stored)
            list[index].tombstone = (list[index].tombstone ?? [:]).merging([name: value]) { $1 }
            changes[transaction] = list
        }
        for (transaction, index) in deletions.values where changes[transaction]?[index].tombstone == nil {
            changes[transaction]?[index].tombstone = [:]
        }
        return changes
    }

    /// A stored value of an attribute the schema no longer has, by its SQLite type.
    private static func untypedValue(_ value: DatabaseValue) -> AttributeValue {
        switch value.storage {
        case .null: .null
        case .int64(let number): .integer(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .blob(let data): .data(data)
        }
    }

    public func currentHistoryToken() throws -> HistoryToken? {
        try checkHistoryTracking()
        let sql = "SELECT MAX(\"number\") FROM \(quoted(StoreLayout.historyTransactionTable))"
        do {
            return try gatedRead { db in try Int64.fetchOne(db, sql: sql) }
                .map { HistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
        } catch {
            throw storeError(error, sql: sql)
        }
    }

    // MARK: Deleting

    public func deleteHistory(_ request: HistoryDeleteRequest) throws -> Int {
        try checkHistoryTracking()
        try checkToken(request.token)
        try checkWritable()
        try checkNotPreparing()
        let deletion = HistoryDeletion<SQLiteDialect>(request, arguments: [])
        do {
            return try writer.write { db in
                for sql in deletion.statements { try db.execute(sql: sql, arguments: StatementArguments(deletion.arguments)) }
                return db.changesCount
            }
        } catch {
            throw storeError(error, sql: deletion.statements.first)
        }
    }

    // MARK: Readers

    public func lastMergedHistoryTokens() throws -> [String: HistoryToken] {
        try checkHistoryTracking()
        let sql = "SELECT \"author\", \"transaction_number\" FROM \(quoted(StoreLayout.historyReaderTable))"
        do {
            return try gatedRead { db in
                var tokens: [String: HistoryToken] = [:]
                for row in try Row.fetchAll(db, sql: sql) {
                    tokens[row[0]] = HistoryToken(storeIdentifier: identifier, transactionNumber: row[1])
                }
                return tokens
            }
        } catch {
            throw storeError(error, sql: sql)
        }
    }

    public func setLastMergedHistoryToken(_ token: HistoryToken?, forAuthor author: String) throws {
        try checkHistoryTracking()
        try checkToken(token)
        try checkWritable()
        try checkNotPreparing()
        do {
            try writer.write { db in
                if let token {
                    try db.execute(
                        sql: """
                            INSERT INTO \(quoted(StoreLayout.historyReaderTable)) ("author", "transaction_number", "timestamp")
                            VALUES (?, ?, ?) ON CONFLICT ("author") DO UPDATE
                            SET "transaction_number" = excluded."transaction_number", "timestamp" = excluded."timestamp"
                            """,
                        arguments: [author, token.transactionNumber, Date().timeIntervalSinceReferenceDate])
                } else {
                    try db.execute(
                        sql: "DELETE FROM \(quoted(StoreLayout.historyReaderTable)) WHERE \"author\" = ?", arguments: [author])
                }
            }
        } catch {
            throw storeError(error, sql: nil)
        }
    }

    // MARK: Announcing other processes' transactions

    /// The transactions other connections committed since the last look, as remote commits
    /// that name their objects; this store's own transactions were announced when saved.
    func remoteCommitsFromHistory() -> [StoreCommit]? {
        let last = historyAnnouncement.withLock { $0.lastSeen }
        let transactions: [HistoryTransaction]
        do {
            transactions = try fetchHistory(
                HistoryFetchRequest(after: last.map { HistoryToken(storeIdentifier: identifier, transactionNumber: $0) }))
        } catch let error as StrataError where error.code == .historyTokenExpired {
            // Pruned past what this store had read: every transaction left is newer (the
            // unknown changes are announced below).
            guard let remaining = try? fetchHistory(HistoryFetchRequest()) else { return nil }
            transactions = remaining
        } catch {
            return nil
        }
        let own = historyAnnouncement.withLock { state -> Set<Int64> in
            if let newest = transactions.last?.transactionNumber {
                state.lastSeen = max(state.lastSeen ?? 0, newest)
                let own = state.own
                state.own = state.own.filter { $0 > newest }
                return own
            }
            return state.own
        }
        var commits: [StoreCommit] = []
        if let last, let first = transactions.first, first.transactionNumber > last + 1 {
            // Transaction numbers have no holes but pruned ones: history this store had not
            // read yet was deleted, and what it held is unknown.
            commits.append(
                StoreCommit(
                    storeIdentifier: identifier, insertedObjectIDs: [], updatedObjectIDs: [], deletedObjectIDs: [],
                    author: nil, contextName: nil, isRemote: true))
        }
        return commits + transactions.filter { !own.contains($0.transactionNumber) }.map { transaction in
            instrumentation.metrics.recordNotificationLatency(since: transaction.timestamp)
            return StoreCommit(transaction, isRemote: true)
        }
    }
}

/// What the store's polling has announced of the history.
struct HistoryAnnouncementState {
    /// Whether polling runs: only then does the store remember its own transactions.
    var isPolling = false
    /// The newest transaction the polling has looked at.
    var lastSeen: Int64?
    /// Transactions this store wrote that the polling has not passed yet: announced already.
    var own: Set<Int64> = []
}

/// The history entries of one change set, written by the change writer after the data.
struct HistoryRecorder {
    /// The kept values of deleted objects, read before their rows went.
    var tombstones: [RowReference: [(name: String, value: DatabaseValue)]] = [:]

    /// Reads the values of `objectID`'s attributes marked to be kept, before its row is deleted.
    mutating func keepTombstone(of objectID: ObjectID, entity: Entity, layout: StoreLayout.EntityLayout, db: Database)
        throws
    {
        guard let primaryKey = objectID.primaryKey else { return }
        tombstones.merge(try Self.readTombstones(of: entity, keys: [primaryKey], layout: layout, db: db)) { $1 }
    }

    /// The kept values (`.preserveValueOnDeletion`) of rows of `entity`, by row; empty when the
    /// entity keeps none.
    static func readTombstones(of entity: Entity, keys: [Int64], layout: StoreLayout.EntityLayout, db: Database) throws
        -> [RowReference: [(name: String, value: DatabaseValue)]]
    {
        let kept = entity.attributes.indices.compactMap { number -> (name: String, column: String)? in
            guard entity.attributes[number].preservesValueOnDeletion, number < layout.attributeColumns.count,
                let column = layout.attributeColumns[number]
            else { return nil }
            return (entity.attributes[number].name, column)
        }
        guard !kept.isEmpty, !keys.isEmpty else { return [:] }
        let sql =
            "SELECT \(quoted(StoreLayout.primaryKeyColumn)), " + kept.map { quoted($0.column) }.joined(separator: ", ")
            + " FROM \(quoted(layout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(SQLiteStore.inKeyList)"
        var tombstones: [RowReference: [(name: String, value: DatabaseValue)]] = [:]
        for row in try Row.fetchAll(db, sql: sql, arguments: [SQLiteStore.keyList(keys)]) {
            tombstones[RowReference(entity: entity.name, key: row[0])] = kept.enumerated().map {
                ($0.element.name, row[$0.offset + 1])
            }
        }
        return tombstones
    }

    /// Writes the transaction entry and one change entry per object.
    ///
    /// - Returns: The transaction's number.
    func write(
        _ changes: StoreChangeSet, permanentIDs: [ObjectID: ObjectID], timestamp: Date, schema: Schema, db: Database
    ) throws -> Int64 {
        let number = try Self.writeTransaction(
            author: changes.author, contextName: changes.contextName, timestamp: timestamp, db: db)
        let rows = HistoryChangeEntries(changes, permanentIDs: permanentIDs, schema: schema).entries.map {
            HistoryChangeRow(entity: $0.entity, key: $0.key, kind: $0.kind, properties: $0.properties)
        }
        try Self.writeChangeRows(rows, transaction: number, db: db)
        try Self.writeTombstones(tombstones, transaction: number, db: db)
        return number
    }

    /// Writes a transaction entry.
    ///
    /// - Returns: Its number.
    static func writeTransaction(author: String?, contextName: String?, timestamp: Date, db: Database) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO \(quoted(StoreLayout.historyTransactionTable)) ("timestamp", "author", "context_name")
                VALUES (?, ?, ?)
                """,
            arguments: [timestamp.timeIntervalSinceReferenceDate, author, contextName])
        return db.lastInsertedRowID
    }

    /// Writes the kept values of deleted objects, for the delete changes of a transaction
    /// already written.
    static func writeTombstones(
        _ tombstones: [RowReference: [(name: String, value: DatabaseValue)]], transaction: Int64, db: Database
    ) throws {
        guard !tombstones.isEmpty else { return }
        let ids = try Row.fetchCursor(
            db,
            sql: """
                SELECT "id", "entity", "object_key" FROM \(quoted(StoreLayout.historyChangeTable))
                WHERE "transaction_number" = ? AND "kind" = 2
                """, arguments: [transaction])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO \(quoted(StoreLayout.historyTombstoneTable)) (\"change_id\", \"attribute\", \"value\") VALUES (?, ?, ?)")
        var found: [(Int64, [(name: String, value: DatabaseValue)])] = []
        while let row = try ids.next() {
            if let values = tombstones[RowReference(entity: row[1], key: row[2])] { found.append((row[0], values)) }
        }
        for (changeID, values) in found {
            for (name, value) in values { try insert.execute(arguments: [changeID, name, value]) }
        }
    }

    /// Change entries for rows of one entity all changed the same way, written straight from
    /// their keys (a batch insert of a million rows never builds a million entries first).
    static func writeChangeRows(
        entity: String, keys: [Int64], kind: Int, properties: String?, transaction: Int64, db: Database
    ) throws {
        var start = 0
        while start < keys.count {
            let size = Swift.min(64, keys.count - start)
            try writeChangeStatement(size: size, db: db) { statement, index in
                for offset in 0..<size {
                    let base = index + Int32(offset * 5)
                    try statement.bind(transaction, at: base)
                    try statement.bind(entity, at: base + 1)
                    try statement.bind(keys[start + offset], at: base + 2)
                    try statement.bind(Int64(kind), at: base + 3)
                    try statement.bind(properties.map { .string($0) } ?? AttributeValue.null, at: base + 4)
                }
            }
            start += size
        }
    }

    /// The change rows, up to 64 per INSERT.
    static func writeChangeRows(_ rows: [HistoryChangeRow], transaction: Int64, db: Database) throws {
        var start = 0
        while start < rows.count {
            let size = Swift.min(64, rows.count - start)
            try writeChangeStatement(size: size, db: db) { statement, index in
                for (offset, row) in rows[start..<start + size].enumerated() {
                    let base = index + Int32(offset * 5)
                    try statement.bind(transaction, at: base)
                    try statement.bind(row.entity, at: base + 1)
                    try statement.bind(row.key, at: base + 2)
                    try statement.bind(Int64(row.kind), at: base + 3)
                    try statement.bind(row.properties.map { .string($0) } ?? AttributeValue.null, at: base + 4)
                }
            }
            start += size
        }
    }

    /// Runs one multi-row INSERT into the change table, `bind` filling its `size` rows.
    private static func writeChangeStatement(
        size: Int, db: Database, bind: (StatementBinder, Int32) throws -> Void
    ) throws {
        let sql =
            "INSERT INTO \(quoted(StoreLayout.historyChangeTable)) (\"transaction_number\", \"entity\", \"object_key\", \"kind\", \"updated_properties\") VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?)", count: size).joined(separator: ", ")
        let statement = StatementBinder(try db.cachedStatement(sql: sql), sql: sql, in: db)
        defer { statement.clearBindings() }
        try bind(statement, 1)
        try statement.execute()
    }
}

/// One change entry to write: an object and what happened to it (0 insert, 1 update, 2 delete).
struct HistoryChangeRow {
    var entity: String
    var key: Int64
    var kind: Int
    var properties: String?
}

