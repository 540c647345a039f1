import Foundation
import PostgresNIO
import Strata

/// Persistent history in PostgreSQL: the SQLite store's tables with PostgreSQL's types, written
/// in the same transaction as each save.
///
/// | table | rows |
/// | --- | --- |
/// | `_strata_history_transaction` | one per save or batch request: number, timestamp, author, context name |
/// | `_strata_history_change` | one per changed object: transaction, entity, primary key, kind, updated property names |
/// | `_strata_history_tombstone` | one per value kept of a deleted object, in its binary form |
/// | `_strata_history_reader` | the last transaction each reader author merged |
/// | `_strata_history_counter` | the last transaction number: raised inside each writing transaction, so numbers follow commit order with no gaps, and are never reused |
extension PostgresStore {
    static let historyCounterTable = "_strata_history_counter"
    static let historyMetadataKey = "history"

    static let historyCreationStatements = [
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyTransactionTable)) (
        "number" bigint PRIMARY KEY, "timestamp" double precision NOT NULL, "author" text COLLATE "C", "context_name" text COLLATE "C")
        """,
        "CREATE INDEX IF NOT EXISTS \"_strata_history_transaction.timestamp\" ON \(quoted(StoreLayout.historyTransactionTable)) (\"timestamp\")",
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyChangeTable)) (
        "id" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "transaction_number" bigint NOT NULL, "entity" text COLLATE "C" NOT NULL,
        "object_key" bigint NOT NULL, "kind" smallint NOT NULL, "updated_properties" text COLLATE "C")
        """,
        "CREATE INDEX IF NOT EXISTS \"_strata_history_change.transaction\" ON \(quoted(StoreLayout.historyChangeTable)) (\"transaction_number\")",
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyTombstoneTable)) (
        "change_id" bigint NOT NULL, "attribute" text COLLATE "C" NOT NULL, "value" bytea, PRIMARY KEY ("change_id", "attribute"))
        """,
        """
        CREATE TABLE IF NOT EXISTS \(quoted(StoreLayout.historyReaderTable)) (
        "author" text COLLATE "C" PRIMARY KEY, "transaction_number" bigint NOT NULL, "timestamp" double precision NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS \(quoted(historyCounterTable)) (\"last\" bigint NOT NULL)",
        "INSERT INTO \(quoted(historyCounterTable)) (\"last\") SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM \(quoted(historyCounterTable)))",
    ]

    func checkHistoryTracking() throws {
        guard isPersistentHistoryTrackingEnabled else {
            throw StrataError(
                .persistentHistoryUnavailable,
                "The store \(configuration) does not record persistent history. Open it with StoreDescription.postgres(configuration, persistentHistoryTracking: true).",
                fileURL: url)
        }
    }

    func checkToken(_ token: HistoryToken?) throws {
        guard let token, token.storeIdentifier != identifier else { return }
        throw StrataError(
            .persistentHistoryUnavailable,
            "The history token \(token) belongs to another store than \(identifier); ask that store for its history.", fileURL: url)
    }

    // MARK: Reading

    /// Reads the transactions from `_strata_history_transaction` in number order, which is commit
    /// order, and their changes, when asked for, in one more query.
    ///
    /// For example:
    ///
    /// ```swift
    /// let transactions = try store.fetchHistory(HistoryFetchRequest(after: token, excludedAuthors: ["app"]))
    /// ```
    public func fetchHistory(_ request: HistoryFetchRequest) throws -> [HistoryTransaction] {
        try checkHistoryTracking()
        try checkToken(request.token)
        if let limit = request.fetchLimit, limit <= 0 { return [] }
        var conditions: [String] = []
        var bindings = PostgresBindings()
        if let token = request.token {
            bindings.append(integer: token.transactionNumber)
            conditions.append("\"number\" > $\(bindings.count)")
        }
        if let date = request.date {
            bindings.append(value: .double(date.timeIntervalSinceReferenceDate))
            conditions.append("\"timestamp\" >= $\(bindings.count)")
        }
        if let authors = request.authors {
            bindings.append(authors.sorted())
            conditions.append("\"author\" = ANY($\(bindings.count))")
        }
        if !request.excludedAuthors.isEmpty {
            bindings.append(request.excludedAuthors.sorted())
            conditions.append("(\"author\" IS NULL OR NOT \"author\" = ANY($\(bindings.count)))")
        }
        if let names = request.contextNames {
            bindings.append(names.sorted())
            conditions.append("\"context_name\" = ANY($\(bindings.count))")
        }
        var sql = "SELECT \"number\", \"timestamp\", \"author\", \"context_name\" FROM \(quoted(StoreLayout.historyTransactionTable))"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY \"number\""
        if let limit = request.fetchLimit { sql += " LIMIT \(limit)" }
        return try withSession { session in
            var transactions = try session.query(sql, bindings).rows.compactMap { row -> HistoryTransaction? in
                let cells = row.makeRandomAccess()
                guard let number = PostgresValueCoding.integer(cells[0]) else { return nil }
                var bytes = cells[1].bytes
                let seconds = bytes.flatMap { buffer -> Double? in
                    var buffer = buffer
                    return PostgresValueCoding.double(&buffer, cells[1].dataType)
                }
                _ = bytes?.readableBytes
                bytes = nil
                return HistoryTransaction(
                    token: HistoryToken(storeIdentifier: identifier, transactionNumber: number),
                    timestamp: Date(timeIntervalSinceReferenceDate: seconds ?? 0), author: PostgresValueCoding.string(cells[2]),
                    contextName: PostgresValueCoding.string(cells[3]), changes: nil)
            }
            if request.includesChanges, let first = transactions.first, let last = transactions.last {
                let changes = try readChanges(from: first.transactionNumber, through: last.transactionNumber, session: session)
                for index in transactions.indices {
                    transactions[index].changes = changes[transactions[index].transactionNumber] ?? []
                }
            }
            // Checked after reading: history pruned meanwhile is reported too.
            if let token = request.token { try checkNotExpired(token, session: session) }
            return transactions
        }
    }

    /// Throws ``StrataError/Code/historyTokenExpired`` when history after `token` was pruned.
    ///
    /// Transaction numbers come from the counter table inside each writing transaction, so
    /// they have no gaps but pruned ones: history after the token is whole exactly when the
    /// first transaction after it is the next number, or when no number after it was given out.
    private func checkNotExpired(_ token: HistoryToken, session: PostgresSession) throws {
        var bindings = PostgresBindings()
        bindings.append(integer: token.transactionNumber)
        let row = try session.query(
            """
            SELECT (SELECT MIN("number") FROM \(quoted(StoreLayout.historyTransactionTable)) WHERE "number" > $1),
            (SELECT MAX("last") FROM \(quoted(Self.historyCounterTable)))
            """, bindings
        ).rows.first?.makeRandomAccess()
        let next = row.flatMap { PostgresValueCoding.integer($0[0]) }
        let lastGiven = row.flatMap { PostgresValueCoding.integer($0[1]) } ?? 0
        if let next, next == token.transactionNumber + 1 { return }
        if next == nil, lastGiven <= token.transactionNumber { return }
        throw StrataError.historyTokenExpired(token, oldestKept: next, fileURL: url)
    }

    /// The changes of the transactions numbered `first` through `last`, by transaction.
    private func readChanges(from first: Int64, through last: Int64, session: PostgresSession) throws -> [Int64: [HistoryChange]] {
        var changes: [Int64: [HistoryChange]] = [:]
        var deletions: [Int64: (transaction: Int64, index: Int)] = [:]
        var bindings = PostgresBindings()
        bindings.append(integer: first)
        bindings.append(integer: last)
        let rows = try session.query(
            """
            SELECT "id", "transaction_number", "entity", "object_key", "kind"::bigint, "updated_properties"
            FROM \(quoted(StoreLayout.historyChangeTable)) WHERE "transaction_number" BETWEEN $1 AND $2 ORDER BY "id"
            """, bindings
        ).rows
        for row in rows {
            let cells = row.makeRandomAccess()
            guard let changeID = PostgresValueCoding.integer(cells[0]), let transaction = PostgresValueCoding.integer(cells[1]),
                let entityName = PostgresValueCoding.string(cells[2]), let key = PostgresValueCoding.integer(cells[3]),
                let kind = PostgresValueCoding.integer(cells[4])
            else { continue }
            let type: HistoryChange.ChangeType = kind == 0 ? .insert : kind == 1 ? .update : .delete
            let properties = PostgresValueCoding.string(cells[5])
            let change = HistoryChange(
                changeID: changeID,
                changedObjectID: ObjectID(
                    entityName: entityName, entityNameHash: schema.entity(named: entityName)?.nameHash, storeIdentifier: identifier,
                    primaryKey: key),
                changeType: type,
                updatedProperties: type == .update ? Set((properties ?? "").split(separator: ",").map(String.init)) : nil)
            changes[transaction, default: []].append(change)
            if type == .delete { deletions[changeID] = (transaction, changes[transaction]!.count - 1) }
        }
        guard !deletions.isEmpty else { return changes }
        var tombstoneBindings = PostgresBindings()
        tombstoneBindings.append(Array(deletions.keys))
        let tombstones = try session.query(
            "SELECT \"change_id\", \"attribute\", \"value\" FROM \(quoted(StoreLayout.historyTombstoneTable)) WHERE \"change_id\" = ANY($1)",
            tombstoneBindings
        ).rows
        for row in tombstones {
            let cells = row.makeRandomAccess()
            guard let changeID = PostgresValueCoding.integer(cells[0]), let name = PostgresValueCoding.string(cells[1]),
                let (transaction, index) = deletions[changeID], var list = changes[transaction]
            else { continue }
            let entity = schema.entity(named: list[index].changedObjectID.entityName)
            let stored = PostgresValueCoding.data(cells[2])
            let value: AttributeValue =
                if let stored, let type = entity?.attribute(named: name)?.type {
                    PostgresValueCoding.tombstoneValue(stored, type: type)
                } else {
                    stored.map { .data($0) } ?? .null
                }
            list[index].tombstone = (list[index].tombstone ?? [:]).merging([name: value]) { $1 }
            changes[transaction] = list
        }
        for (transaction, index) in deletions.values where changes[transaction]?[index].tombstone == nil {
            changes[transaction]?[index].tombstone = [:]
        }
        return changes
    }

    /// The token of the highest transaction number in `_strata_history_transaction`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let token = try store.currentHistoryToken()   // nil before the first save
    /// ```
    public func currentHistoryToken() throws -> HistoryToken? {
        try checkHistoryTracking()
        let rows = try read(sql: "SELECT MAX(\"number\") FROM \(quoted(StoreLayout.historyTransactionTable))", PostgresBindings()).rows
        return rows.first.flatMap { $0.makeRandomAccess().first.flatMap(PostgresValueCoding.integer) }
            .map { HistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
    }

    // MARK: Deleting

    /// Deletes the transactions with their changes and tombstones, in one transaction.
    ///
    /// For example:
    ///
    /// ```swift
    /// let monthAgo = Date.now.addingTimeInterval(-30 * 24 * 3600)
    /// let deleted = try store.deleteHistory(HistoryDeleteRequest(before: monthAgo))
    /// ```
    public func deleteHistory(_ request: HistoryDeleteRequest) throws -> Int {
        try checkHistoryTracking()
        try checkToken(request.token)
        try checkWritable()
        try checkNotPreparing()
        let deletion = HistoryDeletion<PostgresDialect>(request, arguments: PostgresBindings())
        return try pool.withConnection { session in
            try session.transaction {
                var deleted = 0
                for sql in deletion.statements {
                    deleted = Int(try session.query(sql, deletion.arguments).metadata.rows ?? 0)
                }
                return deleted
            }
        }
    }

    // MARK: Readers

    /// Reads every reader's position from `_strata_history_reader`, which every server sees.
    ///
    /// For example:
    ///
    /// ```swift
    /// for (author, token) in try store.lastMergedHistoryTokens() { print(author, token.transactionNumber) }
    /// ```
    public func lastMergedHistoryTokens() throws -> [String: HistoryToken] {
        try checkHistoryTracking()
        var tokens: [String: HistoryToken] = [:]
        for row in try read(sql: "SELECT \"author\", \"transaction_number\" FROM \(quoted(StoreLayout.historyReaderTable))", PostgresBindings()).rows {
            let cells = row.makeRandomAccess()
            guard let author = PostgresValueCoding.string(cells[0]), let number = PostgresValueCoding.integer(cells[1]) else { continue }
            tokens[author] = HistoryToken(storeIdentifier: identifier, transactionNumber: number)
        }
        return tokens
    }

    /// Writes the author's row of `_strata_history_reader`, or deletes it for `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// try store.setLastMergedHistoryToken(token, forAuthor: "importer")
    /// try store.setLastMergedHistoryToken(nil, forAuthor: "widget")   // no longer holds pruning back
    /// ```
    public func setLastMergedHistoryToken(_ token: HistoryToken?, forAuthor author: String) throws {
        try checkHistoryTracking()
        try checkToken(token)
        try checkWritable()
        try checkNotPreparing()
        var bindings = PostgresBindings()
        bindings.append(string: author)
        let sql: String
        if let token {
            bindings.append(integer: token.transactionNumber)
            bindings.append(value: .double(Date().timeIntervalSinceReferenceDate))
            sql = """
                INSERT INTO \(quoted(StoreLayout.historyReaderTable)) ("author", "transaction_number", "timestamp") VALUES ($1, $2, $3)
                ON CONFLICT ("author") DO UPDATE SET "transaction_number" = excluded."transaction_number", "timestamp" = excluded."timestamp"
                """
        } else {
            sql = "DELETE FROM \(quoted(StoreLayout.historyReaderTable)) WHERE \"author\" = $1"
        }
        _ = try pool.withConnection { session in try session.query(sql, bindings) }
    }
}

/// The history entries of one save or batch request, written in its transaction after the data.
struct PostgresHistoryRecorder {
    /// Whether the store records history in this transaction.
    var isRecording = false
    /// The kept values of deleted objects by entity and key, read before their rows went.
    var tombstones: [String: [Int64: [(name: String, value: AttributeValue)]]] = [:]

    /// Reads the values marked to be kept (`.preserveValueOnDeletion`) of rows of `entity`.
    mutating func keepTombstones(of entity: Entity, keys: [Int64], store: PostgresStore, session: PostgresSession) throws {
        guard let entityLayout = store.layout.base.entities[entity.name] else { return }
        let kept = entity.attributes.indices.compactMap { number -> (name: String, column: String, type: AttributeType)? in
            guard entity.attributes[number].preservesValueOnDeletion, number < entityLayout.attributeColumns.count,
                let column = entityLayout.attributeColumns[number]
            else { return nil }
            return (entity.attributes[number].name, column, entity.attributes[number].type)
        }
        guard !kept.isEmpty, !keys.isEmpty else { return }
        var bindings = PostgresBindings()
        bindings.append(keys)
        let sql =
            "SELECT \(quoted(StoreLayout.primaryKeyColumn)), " + kept.map { quoted($0.column) }.joined(separator: ", ")
            + " FROM \(quoted(entityLayout.table)) WHERE \(quoted(StoreLayout.primaryKeyColumn)) = ANY($1)"
        for row in try session.query(sql, bindings).rows {
            let cells = row.makeRandomAccess()
            guard let key = PostgresValueCoding.integer(cells[0]) else { continue }
            tombstones[entity.name, default: [:]][key] = kept.enumerated().map {
                ($0.element.name, PostgresValueCoding.attributeValue(cells[$0.offset + 1], type: $0.element.type))
            }
        }
    }

    /// Writes one transaction: its entry, its change entries and its tombstones.
    ///
    /// - Returns: The transaction's number.
    func write(
        _ entries: [HistoryChangeEntries.Entry], author: String?, contextName: String?, timestamp: Date,
        session: PostgresSession
    ) throws -> Int64 {
        let counter = try session.query(
            "UPDATE \(quoted(PostgresStore.historyCounterTable)) SET \"last\" = \"last\" + 1 RETURNING \"last\"")
        guard let number = counter.rows.first.flatMap({ $0.makeRandomAccess().first.flatMap(PostgresValueCoding.integer) }) else {
            throw StrataError(.corruptStore, "The store's history counter is missing.")
        }
        var transaction = PostgresBindings()
        transaction.append(integer: number)
        transaction.append(value: .double(timestamp.timeIntervalSinceReferenceDate))
        transaction.append(value: author.map { .string($0) } ?? .null)
        transaction.append(value: contextName.map { .string($0) } ?? .null)
        var statements: [(sql: String, binds: PostgresBindings)] = [
            ("INSERT INTO \(quoted(StoreLayout.historyTransactionTable)) (\"number\", \"timestamp\", \"author\", \"context_name\") VALUES ($1, $2, $3, $4)",
             transaction)
        ]
        var entities: [AttributeValue] = []
        var keys: [AttributeValue] = []
        var kinds: [AttributeValue] = []
        var properties: [AttributeValue] = []
        for entry in entries {
            entities.append(.string(entry.entity))
            keys.append(.integer(entry.key))
            kinds.append(.integer(Int64(entry.kind)))
            properties.append(entry.properties.map { .string($0) } ?? .null)
        }
        if !entities.isEmpty {
            var changes = PostgresBindings()
            changes.append(integer: number)
            changes.append(PostgresColumnArray(.text, values: entities))
            changes.append(PostgresColumnArray(.bigint, values: keys))
            changes.append(PostgresColumnArray(.bigint, values: kinds))
            changes.append(PostgresColumnArray(.text, values: properties))
            statements.append(
                ("""
                INSERT INTO \(quoted(StoreLayout.historyChangeTable)) ("transaction_number", "entity", "object_key", "kind", "updated_properties")
                SELECT $1, e, k, n, p FROM unnest($2, $3, $4, $5) WITH ORDINALITY AS u(e, k, n, p, o) ORDER BY o
                """, changes))
        }
        var tombstoneEntities: [AttributeValue] = []
        var tombstoneKeys: [AttributeValue] = []
        var names: [AttributeValue] = []
        var values: [AttributeValue] = []
        for (entity, rows) in tombstones.sorted(by: { $0.key < $1.key }) {
            for (key, kept) in rows.sorted(by: { $0.key < $1.key }) {
                for (name, value) in kept {
                    tombstoneEntities.append(.string(entity))
                    tombstoneKeys.append(.integer(key))
                    names.append(.string(name))
                    values.append(PostgresValueCoding.tombstoneBytes(value).map { .data($0) } ?? .null)
                }
            }
        }
        if !names.isEmpty {
            var kept = PostgresBindings()
            kept.append(integer: number)
            kept.append(PostgresColumnArray(.text, values: tombstoneEntities))
            kept.append(PostgresColumnArray(.bigint, values: tombstoneKeys))
            kept.append(PostgresColumnArray(.text, values: names))
            kept.append(PostgresColumnArray(.bytea, values: values))
            statements.append(
                ("""
                INSERT INTO \(quoted(StoreLayout.historyTombstoneTable)) ("change_id", "attribute", "value")
                SELECT c."id", u.a, u.v FROM unnest($2, $3, $4, $5) AS u(e, k, a, v)
                JOIN \(quoted(StoreLayout.historyChangeTable)) c ON c."transaction_number" = $1 AND c."kind" = 2 AND c."entity" = u.e AND c."object_key" = u.k
                """, kept))
        }
        _ = try session.pipeline(statements)
        return number
    }
}

extension PostgresValueCoding {
    /// A value's bytes for the tombstone table: its binary form as a bound parameter.
    static func tombstoneBytes(_ value: AttributeValue) -> Data? {
        guard !value.isNull else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: 16)
        PostgresValue(value).encode(into: &buffer, context: .default)
        return Data(buffer.readableBytesView)
    }

    /// A tombstone's value, read back as its attribute's type.
    static func tombstoneValue(_ data: Data, type: AttributeType) -> AttributeValue {
        var buffer = ByteBufferAllocator().buffer(capacity: data.count)
        buffer.writeBytes(data)
        let element = PostgresColumnArray.Element(type)
        let dataType: PostgresDataType =
            switch type {
            case .decimal: .text
            case .codable: .json
            default: element.elementType
            }
        let cell = PostgresCell(bytes: buffer, dataType: dataType, format: .binary, columnName: "value", columnIndex: 0)
        return attributeValue(cell, type: type)
    }
}
