import Foundation
import GRDB

extension SQLiteStore {
    /// The rows a plan matches, in one SQL query: predicate, order, limit and offset included.
    public func fetch(_ plan: FetchPlan) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try fetch(plan, runLength: .max) { rows += $0 }
        return rows
    }

    /// The rows a plan matches, handed to `body` in runs of 1,024 as SQLite steps through them,
    /// all in one read transaction: a caller that writes rows out (an export, say) holds one
    /// run at a time, never the whole result.
    public func fetch(_ plan: FetchPlan, inRuns body: ([StoreRow]) throws -> Void) throws {
        try fetch(plan, runLength: 1_024, body)
    }

    private func fetch(_ plan: FetchPlan, runLength: Int, _ body: ([StoreRow]) throws -> Void) throws {
        guard var query = try makeQuery(plan) else { return }
        guard let table = self.layout.tables.first(where: { $0.name == query.layout.table }) else { return }
        let columnNames = table.columns.map(\.name)
        let sql = query.rowsSQL(columns: columnNames).sql
        let values = query.arguments
        let columnIndex = Dictionary(columnNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        // Per entity: the SELECT positions of its attributes and to-one columns.
        var decoders: [String: RowDecoder] = [:]
        // What `body` throws ends the read and is rethrown as it is, not as a store error.
        var failure: (any Error)?
        do {
            try read(sql: sql) { db in
                var rows: [StoreRow] = []
                if runLength < .max { rows.reserveCapacity(runLength) }
                var last: RowDecoder?
                func handOver() -> Bool {
                    do {
                        try body(rows)
                    } catch {
                        failure = error
                        return false
                    }
                    rows.removeAll(keepingCapacity: true)
                    return true
                }
                try StatementRows(db, sql: sql, values: values).forEach { row in
                    // Rows another program damaged (NULL or mistyped keys) are skipped, not trusted.
                    guard let primaryKey = row.int64(at: 0) else { return }
                    let version = row.int64(at: 2) ?? 0
                    // Most results hold one entity: compare its name in place before making a string.
                    let decoder: RowDecoder
                    if let last, row.hasText(last.entityName, at: 1) {
                        decoder = last
                    } else {
                        guard let entityName = row.string(at: 1) else { return }
                        if let cached = decoders[entityName] {
                            decoder = cached
                        } else {
                            guard let made = RowDecoder(entityName: entityName, store: self, columnIndex: columnIndex)
                            else {
                                return  // a row of an entity this schema does not know
                            }
                            decoders[entityName] = made
                            decoder = made
                        }
                        last = decoder
                    }
                    rows.append(decoder.decode(row, primaryKey: primaryKey, version: version, storeIdentifier: identifier))
                    if rows.count == runLength, !handOver() { throw CancellationError() }
                }
                if !rows.isEmpty || runLength == .max { _ = handOver() }
            }
        } catch {
            throw failure ?? error
        }
        if let failure { throw failure }
    }

    /// The IDs of the rows a plan matches, in its order, without reading their values.
    public func fetchObjectIDs(_ plan: FetchPlan) throws -> [ObjectID] { try objectIDs(plan) }

    /// The primary keys (and, when asked, entity names) of the rows a plan matches, read
    /// without making an ID per row.
    public func fetchPrimaryKeys(_ plan: FetchPlan, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    ) {
        try primaryKeys(plan, includingEntityNames: includingEntityNames)
    }

    /// The number of rows a plan matches, counted by SQLite.
    public func count(_ plan: FetchPlan) throws -> Int { try countRows(plan) }

    /// Compiles a plan, or returns `nil` when it can match nothing.
    package func makeQuery(_ plan: FetchPlan) throws -> SQLiteSelect? {
        try SQLiteSelect(plan, schema: schema, layout: layout, storeIdentifier: identifier, arguments: [])
    }

    /// Runs a query on a reader (inside a save's preparation, on the writer) and calls `body`
    /// with each row.
    package func readRows(sql: String, arguments: [DatabaseValue], _ body: (StatementRows) throws -> Void) throws {
        try read(sql: sql) { db in try StatementRows(db, sql: sql, values: arguments).forEach(body) }
    }

    /// The members of one object's to-many relationship, in order for ordered relationships.
    public func relatedObjectIDs(of objectID: ObjectID, relationshipNamed name: String) throws -> [ObjectID] {
        try relatedMembers(of: [objectID], relationshipNamed: name)[objectID] ?? []
    }

    /// The members of a to-many relationship for many owners, with one query per 500 owners.
    public func relatedObjectIDs(of objectIDs: [ObjectID], relationshipNamed name: String) throws -> [ObjectID:
        [ObjectID]]
    {
        try relatedMembers(of: objectIDs, relationshipNamed: name)
    }

    // MARK: Helpers

    func read<T>(sql: String, _ body: (Database) throws -> T) throws -> T {
        instrumentation.metrics.fetches.increment()
        do {
            // Inside a save's preparation this thread holds the write transaction: the writer
            // connection reads the state the save will write over.
            return try isPreparingSave ? writer.unsafeReentrantRead(body) : gatedRead(body)
        } catch let error as StrataError {
            throw error
        } catch {
            throw storeError(error, sql: sql)
        }
    }

    func storeError(_ error: any Error, sql: String?) -> StrataError {
        if let error = error as? StrataError { return error }
        guard let database = error as? DatabaseError else {
            return StrataError(.storeError, "The store failed: \(error.localizedDescription)", fileURL: url)
        }
        let code: StrataError.Code =
            switch database.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB: .corruptStore
            case .SQLITE_READONLY, .SQLITE_PERM: .storeNotWritable
            case .SQLITE_MISUSE: .storeClosed
            default: .storeError
            }
        if code == .corruptStore {
            corruptionDetected.withLock { $0 = true }
            instrumentation.logger.error(
                "The store file is damaged; writes are refused until it is opened again",
                metadata: ["strata.message": "\(database.message ?? "\(database.resultCode)")"])
        }
        return StrataError(
            code, "SQLite: \(database.message ?? "\(database.resultCode)")", fileURL: url, sql: sql ?? database.sql,
            underlyingError: database)
    }
}

/// Decodes rows of one entity by column position.
///
/// A class: a fetch hands the same decoder to every row of an entity, and a struct of six
/// arrays would be copied (six retains and releases) per row.
final class RowDecoder {
    let attributeTypes: [AttributeType]
    let attributePositions: [Int?]
    let toOnePositions: [Int?]
    let toOneEntityPositions: [Int?]
    let toOneDestinations: [String]
    let toOneDestinationHashes: [UInt64]
    let entityName: String
    let entityNameHash: UInt64

    init?(entityName: String, store: SQLiteStore, columnIndex: [String: Int]) {
        guard let entity = store.schema.entity(named: entityName), let layout = store.layout.entities[entityName] else {
            return nil
        }
        self.entityName = entityName
        self.entityNameHash = entity.nameHash
        attributeTypes = entity.attributes.map(\.type)
        attributePositions = layout.attributeColumns.map { $0.flatMap { columnIndex[$0] } }
        toOnePositions = layout.toOneColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneEntityPositions = layout.toOneEntityColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneDestinations = entity.relationships.map(\.destinationEntityName)
        toOneDestinationHashes = toOneDestinations.map(ObjectID.hash(ofEntityName:))
    }

    func decode(_ row: StatementRows, primaryKey: Int64, version: Int64, storeIdentifier: String) -> StoreRow {
        var attributes: [AttributeValue] = []
        attributes.reserveCapacity(attributeTypes.count)
        for (number, position) in attributePositions.enumerated() {
            guard let position else {
                attributes.append(.null)
                continue
            }
            attributes.append(row.attributeValue(at: Int32(position), type: attributeTypes[number]))
        }
        var toOne: [ObjectID?] = []
        toOne.reserveCapacity(toOnePositions.count)
        for (number, position) in toOnePositions.enumerated() {
            guard let position, let key = row.int64(at: Int32(position)) else {
                toOne.append(nil)
                continue
            }
            if let targetEntity = toOneEntityPositions[number].flatMap({ row.string(at: Int32($0)) }) {
                toOne.append(ObjectID(entityName: targetEntity, storeIdentifier: storeIdentifier, primaryKey: key))
            } else {
                toOne.append(
                    ObjectID(
                        entityName: toOneDestinations[number], entityNameHash: toOneDestinationHashes[number],
                        storeIdentifier: storeIdentifier, primaryKey: key))
            }
        }
        return StoreRow(
            objectID: ObjectID(
                entityName: entityName, entityNameHash: entityNameHash, storeIdentifier: storeIdentifier,
                primaryKey: primaryKey),
            version: version, attributes: attributes, toOne: toOne)
    }
}

/// Counts, keys and values through the queries every SQL store shares.
extension SQLiteStore: SQLStore {
    package typealias Dialect = SQLiteDialect
    package typealias RowReader = StatementRows

    package var storeLayout: StoreLayout { layout }

    /// Property values and aggregates computed by SQLite, one array per row or group.
    public func fetchValues(_ request: StoreValuesRequest) throws -> [[AttributeValue]] {
        do {
            return try values(request, exactIntegerSums: false)
        } catch let error as StrataError
            where (error.underlyingError as? DatabaseError)?.message == "integer overflow"
        {
            // SQLite's SUM fails when an integer sum leaves Int64's range, even on the way back;
            // the exact sum (a Swift aggregate, slower than SUM) is only needed then.
            return try values(request, exactIntegerSums: true)
        }
    }
}

extension Row {
    /// The integer in a column, or `nil` for NULL or a value of another type (never a trap).
    func int64(at index: Int) -> Int64? {
        let value: DatabaseValue = self[index]
        if case .int64(let number) = value.storage { return number }
        return nil
    }

    /// The text in a column, or `nil` for NULL or a value of another type (never a trap).
    func string(at index: Int) -> String? {
        let value: DatabaseValue = self[index]
        if case .string(let text) = value.storage { return text }
        return nil
    }
}
