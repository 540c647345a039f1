import Foundation

/// A place where objects are kept: an SQLite file, an in-memory database or a server.
///
/// A store works with rows, not objects: contexts turn objects into a ``StoreChangeSet`` and
/// rows into objects. Every store applies a change set atomically — all of it or none of it —
/// and checks optimistic-lock versions, so that every implementation behaves the same for
/// contexts. Stores are `Sendable` and safe to use from any thread.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's unique identifier, part of every permanent ``ObjectID`` of its objects.
    var identifier: String { get }
    /// The schema the store was opened with.
    var schema: Schema { get }
    /// The store's location, or `nil` for a store that lives only in memory.
    var url: URL? { get }
    /// Whether the store was opened for reading only: every write is refused.
    var isReadOnly: Bool { get }

    /// The rows a plan matches, in its order.
    ///
    /// - Throws: ``StrataError`` when the store cannot be read.
    func fetch(_ plan: FetchPlan) throws -> [StoreRow]

    /// The rows a plan matches, in its order, handed to `body` in consecutive runs as the store
    /// reads them: a store that receives rows over a connection lets the caller work on one run
    /// while the next arrives.
    ///
    /// The default hands ``fetch(_:)``'s whole result over in one run. When `body` throws, no
    /// further run is handed over and the error is rethrown once the store has finished reading.
    /// A store error may come after some runs were handed over: treat them as read only when
    /// the call returns. `body` must not call the store: the store may hold a connection for
    /// the fetch until the last run was taken.
    ///
    /// - Throws: ``StrataError`` when the store cannot be read; what `body` throws.
    func fetch(_ plan: FetchPlan, inRuns body: ([StoreRow]) throws -> Void) throws

    /// The number of rows a plan matches (its limit and offset applied).
    func count(_ plan: FetchPlan) throws -> Int

    /// The IDs of the rows a plan matches, in its order.
    func fetchObjectIDs(_ plan: FetchPlan) throws -> [ObjectID]

    /// The primary keys of the rows a plan matches, in its order, with each row's entity
    /// name when `includingEntityNames` is `true` (`nil` otherwise). Batched fetches keep only
    /// these: eight bytes per row when one entity is fetched.
    func fetchPrimaryKeys(_ plan: FetchPlan, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    )

    /// Property values and aggregates of the rows a request matches, one array per result row
    /// in the order of `request.columns`.
    func fetchValues(_ request: StoreValuesRequest) throws -> [[AttributeValue]]

    /// The objects a to-many relationship of one object holds, in order for ordered
    /// relationships.
    func relatedObjectIDs(of objectID: ObjectID, relationshipNamed name: String) throws -> [ObjectID]

    /// The members of one to-many relationship for many objects at once, in order for ordered
    /// relationships: what prefetching uses to avoid one query per object.
    ///
    /// - Returns: The related IDs by owner; owners with no members may be missing.
    func relatedObjectIDs(of objectIDs: [ObjectID], relationshipNamed name: String) throws -> [ObjectID: [ObjectID]]

    /// Applies a change set atomically.
    ///
    /// - Returns: The permanent IDs of inserted objects and the new versions of every inserted
    ///   and updated object.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/optimisticLockingFailure`` when an
    ///   updated row changed (or disappeared) since it was read,
    ///   ``StrataError/Code/constraintConflict`` when a uniqueness constraint is violated; the
    ///   store is unchanged after any error.
    func save(_ changes: StoreChangeSet) throws -> StoreSaveResult

    /// Applies the change set that `prepare` returns atomically, letting no other writer commit
    /// between the reads `prepare` makes from this store and the write.
    ///
    /// Contexts with a merge policy resolve conflicts in `prepare`, against the store's current
    /// state, so that another context's commit cannot make the resolved change set stale.
    /// `prepare` may read from this store but must not write to it; an error it throws is
    /// rethrown, with nothing written.
    ///
    /// - Returns: As ``save(_:)``.
    /// - Throws: As ``save(_:)``.
    func save(preparedBy prepare: () throws -> StoreChangeSet) throws -> StoreSaveResult

    /// Reserves primary keys for new objects of an entity, so that they get permanent IDs
    /// before they are saved; a later insert with such an ID uses the reserved key.
    ///
    /// - Returns: `count` keys that no other object will ever get.
    func reservePrimaryKeys(forEntityNamed entityName: String, count: Int) throws -> [Int64]

    /// Calls `observer` after every commit of this store, on the thread that saved.
    ///
    /// - Returns: The registration; keep it while you want to be called, cancel or release it
    ///   to stop.
    func addCommitObserver(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation

    /// Looks for commits of other processes and connections every `interval`, and tells the
    /// commit observers of each with a remote ``StoreCommit``. Polling stops when the store
    /// closes or is released; calling this again changes the interval. Stores that nobody
    /// else can write (a private in-memory database) ignore it.
    func startPollingForRemoteChanges(every interval: Duration)

    /// Closes the store; later calls throw ``StrataError/Code/storeClosed``.
    func close() throws

    // MARK: Batch requests

    /// Inserts the rows `nextRow` produces, in one transaction, without objects.
    ///
    /// `nextRow` fills one row of attribute values (by attribute number of the entity, every
    /// value already checked against its attribute's type) and returns `true` when it filled
    /// one, `false` when there are no more; rows are written as they come, so a request of any
    /// size keeps memory flat. An error `nextRow` throws is rethrown with nothing written.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/constraintConflict`` when a row
    ///   breaks a uniqueness constraint and `insert.conflictResolution` is ``BatchInsertConflictResolution/fail``;
    ///   the store is unchanged after any error.
    func batchInsert(_ insert: StoreBatchInsert, rows nextRow: (inout [AttributeValue]) throws -> Bool) throws
        -> BatchResult

    /// Sets new values on the rows a plan matches, in one transaction, raising their
    /// optimistic-lock versions.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/unknownKey`` or
    ///   ``StrataError/Code/typeMismatch`` for a value that does not fit its attribute,
    ///   ``StrataError/Code/constraintConflict`` for a broken uniqueness constraint; the store is
    ///   unchanged after any error.
    func batchUpdate(_ update: StoreBatchUpdate) throws -> BatchResult

    /// Deletes rows in one transaction, applying the schema's delete rules: cascade deletes
    /// the related objects, nullify clears their references, deny refuses the whole request.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/deleteDenied`` when a deny rule
    ///   holds; the store is unchanged after any error.
    func batchDelete(_ delete: StoreBatchDelete) throws -> BatchResult

    // MARK: Persistent history

    /// Whether the store records persistent history: one ``HistoryTransaction`` per save and
    /// batch request, written in the same database transaction as the data.
    var isPersistentHistoryTrackingEnabled: Bool { get }

    /// The transactions a request selects, oldest first.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/persistentHistoryUnavailable`` when
    ///   the store does not track history or the request's token belongs to another store.
    func fetchHistory(_ request: HistoryFetchRequest) throws -> [HistoryTransaction]

    /// Deletes the transactions a request selects, with their changes.
    ///
    /// - Returns: The number of transactions deleted.
    /// - Throws: As ``fetchHistory(_:)``.
    func deleteHistory(_ request: HistoryDeleteRequest) throws -> Int

    /// The token of the store's last transaction, or `nil` before the first one (Core Data's
    /// `currentPersistentHistoryToken(fromStores:)`).
    ///
    /// - Throws: As ``fetchHistory(_:)``.
    func currentHistoryToken() throws -> HistoryToken?

    /// The last transaction each reader of the history has merged, by reader author, as
    /// recorded with ``setLastMergedHistoryToken(_:forAuthor:)``. Kept in the store itself, so
    /// every process that opens it sees every reader's position: what
    /// ``PersistentHistoryTracker`` resumes from and prunes by.
    ///
    /// - Throws: As ``fetchHistory(_:)``.
    func lastMergedHistoryTokens() throws -> [String: HistoryToken]

    /// Records the last transaction `author` has merged, or forgets the author (`nil`), which
    /// then no longer holds back pruning.
    ///
    /// - Throws: As ``fetchHistory(_:)``; ``StrataError/Code/storeNotWritable`` for a read-only
    ///   store.
    func setLastMergedHistoryToken(_ token: HistoryToken?, forAuthor author: String) throws

    // MARK: Consistency

    /// Checks the stored data against the schema the store records, without writing: the
    /// database's own integrity check, missing tables and columns, to-one relationships that
    /// hold the key of an object that does not exist, join rows that name objects that do not
    /// exist, broken uniqueness constraints and required attributes without a value. What
    /// `strata check` reports.
    ///
    /// A store Strata alone wrote has none of these; they come from other programs writing to
    /// the database, damaged disks, or restores of partial backups.
    ///
    /// - Returns: The problems, empty for a consistent store.
    /// - Throws: ``StrataError`` when the store cannot be read (a damaged SQLite file may fail
    ///   with ``StrataError/Code/corruptStore`` before any check runs).
    func checkConsistency() throws -> [StoreConsistencyProblem]

    /// Repairs, in one transaction, the problems ``checkConsistency()`` finds that have one
    /// safe repair: join rows that name objects that do not exist are deleted, and optional
    /// to-one relationships that hold the key of an object that does not exist are emptied.
    /// Nothing else is changed.
    ///
    /// - Returns: What was repaired, each with the number of rows changed.
    /// - Throws: ``StrataError/Code/storeNotWritable`` for a read-only store; store errors,
    ///   after which nothing was changed.
    func repairConsistency() throws -> [StoreConsistencyProblem]
}

extension PersistentStore {
    /// Hands ``fetch(_:)-(FetchPlan)``'s whole result to `body` in one run. Stores that receive rows
    /// over a connection override it to hand them over as they arrive.
    public func fetch(_ plan: FetchPlan, inRuns body: ([StoreRow]) throws -> Void) throws {
        try body(try fetch(plan))
    }

    /// Stores that keep no tables of their own have nothing to check.
    public func checkConsistency() throws -> [StoreConsistencyProblem] { [] }

    /// Stores that keep no tables of their own have nothing to repair.
    public func repairConsistency() throws -> [StoreConsistencyProblem] { [] }

    /// Calls `prepare`, then ``save(_:)``. Stores that can hold other writers off while
    /// `prepare` reads override it; with this one, another writer can commit in between, and the
    /// save then fails as ``save(_:)`` does.
    public func save(preparedBy prepare: () throws -> StoreChangeSet) throws -> StoreSaveResult {
        try save(prepare())
    }

    /// Derives the keys from ``fetchObjectIDs(_:)-(FetchPlan)``; stores that can read keys alone
    /// override it.
    public func fetchPrimaryKeys(_ plan: FetchPlan, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    ) {
        let ids = try fetchObjectIDs(plan).filter { $0.primaryKey != nil }
        return (ids.compactMap(\.primaryKey), includingEntityNames ? ids.map(\.entityName) : nil)
    }

    /// The rows a request matches: ``fetch(_:)-(FetchPlan)`` with the request resolved against
    /// ``schema``.
    ///
    /// ```swift
    /// let rows = try store.fetch(StoreFetchRequest(entityName: "Movie", fetchLimit: 10))
    /// ```
    ///
    /// - Throws: The errors of ``FetchPlan/init(_:in:)`` and of ``fetch(_:)-(FetchPlan)``.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try fetch(FetchPlan(request, in: schema))
    }

    /// The number of rows a request matches: ``count(_:)-(FetchPlan)`` with the request resolved.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        try count(FetchPlan(request, in: schema))
    }

    /// The IDs of the rows a request matches: ``fetchObjectIDs(_:)-(FetchPlan)`` with the request
    /// resolved.
    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ObjectID] {
        try fetchObjectIDs(FetchPlan(request, in: schema))
    }

    /// The primary keys of the rows a request matches:
    /// ``fetchPrimaryKeys(_:includingEntityNames:)-(FetchPlan,_)`` with the request resolved.
    public func fetchPrimaryKeys(_ request: StoreFetchRequest, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    ) {
        try fetchPrimaryKeys(FetchPlan(request, in: schema), includingEntityNames: includingEntityNames)
    }

    /// Loads each owner's members with ``relatedObjectIDs(of:relationshipNamed:)-(ObjectID,_)``;
    /// stores that can do better in one query override it.
    public func relatedObjectIDs(of objectIDs: [ObjectID], relationshipNamed name: String) throws -> [ObjectID:
        [ObjectID]]
    {
        var result: [ObjectID: [ObjectID]] = [:]
        for id in objectIDs { result[id] = try relatedObjectIDs(of: id, relationshipNamed: name) }
        return result
    }
}
