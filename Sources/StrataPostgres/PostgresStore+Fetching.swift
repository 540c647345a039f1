import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// The rows a plan matches, in one query: predicate, order, limit and offset included.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// let rows = try store.fetch(try FetchPlan(request, in: store.schema))   // values by attribute number, no objects
    /// ```
    public func fetch(_ plan: FetchPlan) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try fetch(plan) { rows += $0 }
        return rows
    }

    /// The rows a plan matches, handed to `body` in runs while the rest are still arriving: the
    /// caller turns one run into objects while the connection's event loop receives and decodes
    /// the next, so a large fetch costs about the longer of the two, not their sum. (Orders the
    /// server cannot give, done here, hand over all rows at once.)
    ///
    /// For example:
    ///
    /// ```swift
    /// var count = 0
    /// try store.fetch(try FetchPlan(FetchRequest<Movie>(), in: store.schema)) { run in
    ///     count += run.count   // the next run arrives meanwhile
    /// }
    /// ```
    public func fetch(_ plan: FetchPlan, inRuns body: ([StoreRow]) throws -> Void) throws {
        guard var query = try makeQuery(plan) else { return }
        guard let table = layout.tables.first(where: { $0.name == query.layout.table }) else { return }
        let columnNames = table.columns.map(\.name)
        let columnIndex = Dictionary(columnNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let (sql, sortKeyTypes) = query.rowsSQL(columns: columnNames)
        // Rows are decoded as they arrive, on the connection's event loop, so decoding overlaps
        // the transfer and the raw result is never held whole beside the decoded one.
        let decoding = PostgresFetchDecoding(
            decoders: query.kinds.compactMap { PostgresRowDecoder(entityName: $0, store: self, columnIndex: columnIndex) },
            sortKeyTypes: sortKeyTypes, sortKeyOffset: columnNames.count, storeIdentifier: identifier)
        instrumentation.metrics.fetches.increment()
        if !sortKeyTypes.isEmpty {
            try withSession { session in
                try session.query(sql, query.arguments, onRow: { decoding.add($0) }, onEnd: { decoding.finishReading() })
            }
            let rows = decoding.nextRun() ?? []
            try body(query.sortedOnClient(rows, key: { $0.keys }, primaryKey: { $0.row.objectID.primaryKey ?? 0 }).map(\.row))
            return
        }
        try withSession { session in
            try session.query(sql, query.arguments, onRow: { decoding.add($0) }, onEnd: { decoding.finishReading() }) {
                // After `body` fails, the rest still arrive (the connection must finish the
                // statement) and are dropped.
                var failure: (any Error)?
                while let run = decoding.nextRun() {
                    guard failure == nil else { continue }
                    do {
                        try body(run.map(\.row))
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
            }
        }
    }

    /// The IDs of the rows a plan matches, in its order, without reading their values.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Movie>(predicate: \.year < 1950), in: store.schema)
    /// let ids = try store.fetchObjectIDs(plan)
    /// ```
    public func fetchObjectIDs(_ plan: FetchPlan) throws -> [ObjectID] { try objectIDs(plan) }

    /// The primary keys (and, when asked, entity names) of the rows a plan matches.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), in: store.schema)
    /// let (keys, _) = try store.fetchPrimaryKeys(plan, includingEntityNames: false)   // eight bytes a row
    /// ```
    public func fetchPrimaryKeys(_ plan: FetchPlan, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    ) {
        try primaryKeys(plan, includingEntityNames: includingEntityNames)
    }

    /// The number of rows a plan matches, counted by the server.
    ///
    /// For example:
    ///
    /// ```swift
    /// let classics = try store.count(try FetchPlan(FetchRequest<Movie>(predicate: \.year < 1950), in: store.schema))
    /// ```
    public func count(_ plan: FetchPlan) throws -> Int { try countRows(plan) }

    /// The members of one object's to-many relationship, in order for ordered relationships.
    ///
    /// For example:
    ///
    /// ```swift
    /// let reviewIDs = try store.relatedObjectIDs(of: movie.objectID, relationshipNamed: "reviews")
    /// ```
    public func relatedObjectIDs(of objectID: ObjectID, relationshipNamed name: String) throws -> [ObjectID] {
        try relatedObjectIDs(of: [objectID], relationshipNamed: name)[objectID] ?? []
    }

    /// The members of a to-many relationship for many owners, one query per 1000 owners.
    ///
    /// For example:
    ///
    /// ```swift
    /// let reviewsByMovie = try store.relatedObjectIDs(of: movies.map(\.objectID), relationshipNamed: "reviews")
    /// ```
    public func relatedObjectIDs(of objectIDs: [ObjectID], relationshipNamed name: String) throws -> [ObjectID: [ObjectID]] {
        try relatedMembers(of: objectIDs, relationshipNamed: name)
    }

    // MARK: Queries

    /// Compiles a plan, or returns `nil` when it can match nothing.
    package func makeQuery(_ plan: FetchPlan) throws -> PostgresSelect? {
        try PostgresSelect(plan, schema: schema, layout: layout.base, storeIdentifier: identifier, arguments: PostgresBindings())
    }

    /// Runs a query on the preparing save's connection, or on one of the pool.
    func read(sql: String, _ bindings: PostgresBindings) throws -> PostgresQueryResult {
        instrumentation.metrics.fetches.increment()
        return try withSession { session in try session.query(sql, bindings) }
    }

    /// Runs a query on the preparing save's connection, or on one of the pool, and calls
    /// `body` with each row.
    package func readRows(sql: String, arguments: PostgresBindings, _ body: (PostgresRowReader) throws -> Void) throws {
        for row in try read(sql: sql, arguments).rows { try body(PostgresRowReader(cells: row.makeRandomAccess())) }
    }

}

/// The rows of one fetch, decoded one at a time on the connection's event loop and handed over
/// in runs to the thread that fetches.
///
/// Rows of entities the query does not ask for, and rows another program damaged (NULL keys),
/// are skipped, not trusted.
final class PostgresFetchDecoding: Sendable {
    /// The rows a run gathers before the fetching thread is woken: large enough that waking it
    /// costs nothing per row, small enough that it starts early.
    static let runLength = 1024

    private let decoders: [PostgresRowDecoder]
    private let sortKeyTypes: [AttributeType]
    private let sortKeyOffset: Int
    private let storeIdentifier: String
    private let state = LockedBox(State())

    private struct State {
        var pending: [(row: StoreRow, keys: [AttributeValue])] = []
        var isFinished = false
    }

    init(decoders: [PostgresRowDecoder], sortKeyTypes: [AttributeType], sortKeyOffset: Int, storeIdentifier: String) {
        self.decoders = decoders
        self.sortKeyTypes = sortKeyTypes
        self.sortKeyOffset = sortKeyOffset
        self.storeIdentifier = storeIdentifier
    }

    /// Decodes one row (on the event loop).
    func add(_ row: PostgresRow) {
        let cells = row.makeRandomAccess()
        guard let primaryKey = PostgresValueCoding.integer(cells[0]), let name = cells[1].bytes,
            // The entity name is matched by its bytes: no string is made per row.
            let decoder = decoders.first(where: { $0.entityNameBytes == name })
        else { return }
        let version = PostgresValueCoding.integer(cells[2]) ?? 0
        let decoded = decoder.decode(cells, primaryKey: primaryKey, version: version, storeIdentifier: storeIdentifier)
        var sortValues: [AttributeValue] = []
        if !sortKeyTypes.isEmpty {
            sortValues = sortKeyTypes.enumerated().map { offset, type in
                PostgresValueCoding.attributeValue(cells[sortKeyOffset + offset], type: type)
            }
        }
        state.withLock { state in
            state.pending.append((decoded, sortValues))
            if state.pending.count >= Self.runLength { self.state.signal() }
        }
    }

    /// Called once the statement finished, successfully or not (on the event loop).
    func finishReading() {
        state.withLock { state in
            state.isFinished = true
            self.state.broadcast()
        }
    }

    /// Waits for a run of rows and takes it: every row decoded so far once a run's length has
    /// gathered or the statement finished. `nil` when the statement finished and every row was
    /// taken.
    func nextRun() -> [(row: StoreRow, keys: [AttributeValue])]? {
        state.withLock(waitingUntil: { $0.isFinished || $0.pending.count >= Self.runLength }) { state, _ in
            guard !state.pending.isEmpty else { return nil }
            defer { state.pending = [] }
            return state.pending
        }
    }
}

/// Decodes rows of one entity by column position.
final class PostgresRowDecoder: Sendable {
    let attributeTypes: [AttributeType]
    let attributePositions: [Int?]
    let toOnePositions: [Int?]
    let toOneEntityPositions: [Int?]
    let toOneDestinations: [String]
    let toOneDestinationHashes: [UInt64]
    let entityName: String
    let entityNameHash: UInt64
    /// The entity name as the server sends it, to recognize the entity's rows cheaply.
    let entityNameBytes: ByteBuffer

    init?(entityName: String, store: PostgresStore, columnIndex: [String: Int]) {
        guard let entity = store.schema.entity(named: entityName), let layout = store.layout.base.entities[entityName] else {
            return nil
        }
        self.entityName = entityName
        entityNameHash = entity.nameHash
        entityNameBytes = ByteBuffer(string: entityName)
        attributeTypes = entity.attributes.map(\.type)
        attributePositions = layout.attributeColumns.map { $0.flatMap { columnIndex[$0] } }
        toOnePositions = layout.toOneColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneEntityPositions = layout.toOneEntityColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneDestinations = entity.relationships.map(\.destinationEntityName)
        toOneDestinationHashes = toOneDestinations.map(ObjectID.hash(ofEntityName:))
    }

    func decode(_ cells: PostgresRandomAccessRow, primaryKey: Int64, version: Int64, storeIdentifier: String) -> StoreRow {
        var attributes: [AttributeValue] = []
        attributes.reserveCapacity(attributeTypes.count)
        for (number, position) in attributePositions.enumerated() {
            guard let position else {
                attributes.append(.null)
                continue
            }
            attributes.append(PostgresValueCoding.attributeValue(cells[position], type: attributeTypes[number]))
        }
        var toOne: [ObjectID?] = []
        toOne.reserveCapacity(toOnePositions.count)
        for (number, position) in toOnePositions.enumerated() {
            guard let position, let key = PostgresValueCoding.integer(cells[position]) else {
                toOne.append(nil)
                continue
            }
            if let targetEntity = toOneEntityPositions[number].flatMap({ PostgresValueCoding.string(cells[$0]) }) {
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
