import Foundation
import GRDB

/// Batch requests in SQLite: SQL over rows, one transaction per request, with history and one
/// commit like a save.
extension SQLiteStore {
    /// What one batch request changed, collected while it runs.
    struct BatchChanges {
        /// Keys of new rows by entity, in the order entities first appeared.
        var inserted: [(entity: String, keys: [Int64])] = []
        /// Changed rows with the names of the properties that changed.
        var updated: [(row: RowReference, properties: [String])] = []
        /// Deleted rows.
        var deleted: [RowReference] = []
        /// The kept values of deleted rows (`.preserveValueOnDeletion`).
        var tombstones: [RowReference: [(name: String, value: DatabaseValue)]] = [:]

        var isEmpty: Bool { inserted.allSatisfy { $0.keys.isEmpty } && updated.isEmpty && deleted.isEmpty }
    }

    /// Runs a batch request's writes in one transaction, then records its history and announces
    /// its commit, as a save does.
    func runBatch(
        author: String?, contextName: String?, _ body: (Database) throws -> (BatchChanges, BatchResult)
    ) throws -> BatchResult {
        try checkWritable()
        try checkNotPreparing()
        var timestamp = Date()
        var transactionNumber: Int64?
        let clock = ContinuousClock()
        let asked = clock.now
        do {
            let (changes, written) = try writer.write { db -> (BatchChanges, BatchResult) in
                instrumentation.metrics.recordPoolWait(clock.now - asked)
                // Known before the body runs: a batch delete keeps tombstones only with history.
                let recordsHistory = try historyTurnedOn(in: db)
                let (changes, computed) = try body(db)
                var result = computed
                timestamp = Date()
                if recordsHistory, !changes.isEmpty {
                    let number = try recordHistory(of: changes, author: author, contextName: contextName, timestamp: timestamp, db: db)
                    transactionNumber = number
                    historyAnnouncement.withLock { if $0.isPolling { $0.own.insert(number) } }
                    result.historyToken = HistoryToken(storeIdentifier: identifier, transactionNumber: number)
                }
                return (changes, result)
            }
            var result = written
            let updated = changes.updated.map { objectID($0.row) }
            let deleted = changes.deleted.map(objectID)
            if result.resultType == .objectIDs {
                result.insertedObjectIDs = changes.inserted.flatMap { run in objectIDs(run.entity, run.keys) }
                result.updatedObjectIDs = updated
                result.deletedObjectIDs = deleted
            }
            guard !changes.isEmpty else { return result }
            instrumentation.metrics.saves.increment()
            let commit: StoreCommit
            if let run = changes.inserted.first, changes.inserted.count == 1, deleted.isEmpty {
                // A batch insert's commit keeps its rows as keys: no million IDs made unread.
                commit = StoreCommit(
                    storeIdentifier: identifier, insertedEntityName: run.entity,
                    entityNameHash: nameHash(of: run.entity),
                    insertedKeys: run.keys, updatedObjectIDs: updated, author: author, contextName: contextName,
                    timestamp: timestamp, historyToken: result.historyToken)
            } else {
                commit = StoreCommit(
                    storeIdentifier: identifier,
                    insertedObjectIDs: changes.inserted.flatMap { run in objectIDs(run.entity, run.keys) },
                    updatedObjectIDs: updated, deletedObjectIDs: deleted, author: author, contextName: contextName,
                    timestamp: timestamp, historyToken: result.historyToken)
            }
            commitObservers.notify(commit)
            return result
        } catch {
            if let transactionNumber { historyAnnouncement.withLock { _ = $0.own.remove(transactionNumber) } }
            if let error = error as? StrataError { throw error }
            if let error = error as? DatabaseError, let message = error.message,
                let range = message.range(of: SQLiteFunctions.checkFailure)
            {
                let reason = String(message[range.upperBound...])
                throw StrataError(
                    reason.hasPrefix("missing value") ? .missingValue : reason.hasPrefix("out of range") ? .valueOutOfRange : .typeMismatch,
                    "A batch update computed a value its attribute cannot hold (\(reason)). Nothing was written.",
                    fileURL: url, sql: error.sql, underlyingError: error)
            }
            if let error = error as? DatabaseError, error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                let failure = StrataError(
                    .constraintConflict,
                    "The batch request would break a uniqueness constraint (\(error.message ?? "UNIQUE constraint failed")). Nothing was written.",
                    fileURL: url, sql: error.sql, underlyingError: error)
                instrumentation.conflict(failure)
                throw failure
            }
            // The caller's own errors (a row handler's) come back as they were thrown.
            guard error is DatabaseError else { throw error }
            throw storeError(error, sql: nil)
        }
    }

    private func recordHistory(
        of changes: BatchChanges, author: String?, contextName: String?, timestamp: Date, db: Database
    ) throws -> Int64 {
        let number = try HistoryRecorder.writeTransaction(
            author: author, contextName: contextName, timestamp: timestamp, db: db)
        try HistoryRecorder.writeChangeRows(
            changes.deleted.map { HistoryChangeRow(entity: $0.entity, key: $0.key, kind: 2) }
                + changes.updated.map {
                    HistoryChangeRow(entity: $0.row.entity, key: $0.row.key, kind: 1, properties: $0.properties.joined(separator: ","))
                }, transaction: number, db: db)
        for run in changes.inserted {
            try HistoryRecorder.writeChangeRows(
                entity: run.entity, keys: run.keys, kind: 0, properties: nil, transaction: number, db: db)
        }
        try HistoryRecorder.writeTombstones(changes.tombstones, transaction: number, db: db)
        return number
    }

    func objectID(_ row: RowReference) -> ObjectID {
        ObjectID(
            entityName: row.entity, entityNameHash: schema.entity(named: row.entity)?.nameHash, storeIdentifier: identifier,
            primaryKey: row.key)
    }

    func objectIDs(_ entityName: String, _ keys: [Int64]) -> [ObjectID] {
        InsertedObjects.keys(entityName: entityName, entityNameHash: nameHash(of: entityName), keys: keys)
            .objectIDs(storeIdentifier: identifier)
    }

    /// The hash object IDs of an entity carry, computed once per schema entity.
    func nameHash(of entityName: String) -> UInt64 {
        schema.entity(named: entityName)?.nameHash ?? ObjectID.hash(ofEntityName: entityName)
    }

    /// A JSON array of keys, bound as one parameter and read with `json_each`: any number of keys
    /// in one statement.
    static func keyList(_ keys: some Sequence<Int64>) -> String {
        // Digits written straight into one buffer: lists of many thousand keys are common, and
        // a String per key costs more than the UPDATE's own work on the row.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.underestimatedCount * 8 + 2)
        var digits: [UInt8] = Array(repeating: 0, count: 20)
        for key in keys {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if key < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = key.magnitude
            var count = 0
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `IN (SELECT value FROM json_each(?))`, to bind with ``keyList(_:)``.
    static let inKeyList = "IN (SELECT value FROM json_each(?))"

    /// The rows a plan selects, with each row's entity, in the plan's order when it has a limit.
    /// A table that holds one entity answers from an index alone when the predicate allows:
    /// the entity is known without reading the rows.
    func selectRows(_ plan: FetchPlan, db: Database) throws -> [RowReference] {
        guard var query = try makeQuery(plan) else { return [] }
        let ordered = plan.fetchLimit != nil || plan.fetchOffset > 0
        let tableKinds = layout.entities[plan.entity.rootEntity.name]?.kindNames ?? []
        let onlyEntity = tableKinds.count == 1 ? tableKinds.first : nil
        let sql =
            "SELECT t0.\(quoted(StoreLayout.primaryKeyColumn))"
            + (onlyEntity == nil ? ", t0.\(quoted(StoreLayout.entityColumn))" : "") + query.sql(withOrder: ordered)
        var rows: [RowReference] = []
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(query.arguments))
        while let row = try cursor.next() { rows.append(RowReference(entity: onlyEntity ?? row[1], key: row[0])) }
        return rows
    }
}
