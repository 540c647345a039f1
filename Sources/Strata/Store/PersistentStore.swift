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

/// What a store fetch asks for, by name: the unresolved form of a ``FetchPlan``.
public struct StoreFetchRequest: Sendable, Hashable {
    /// The entity whose rows are wanted.
    public var entityName: String
    /// Whether rows of subentities are included.
    public var includesSubentities: Bool
    /// Only rows with these primary keys, when set.
    public var primaryKeys: [Int64]?
    /// Only rows whose properties equal these values (attribute values, or for a to-one
    /// relationship the target's ``AttributeValue/integer(_:)`` primary key; ``AttributeValue/null``
    /// matches no value), when set.
    public var matching: [String: AttributeValue]?
    /// Only rows that satisfy this predicate, when set.
    public var predicate: QueryPredicate?
    /// The order of the rows; ties (and everything, when empty) in primary-key order.
    public var sortDescriptors: [QuerySortDescriptor]
    /// At most this many rows, when set.
    public var fetchLimit: Int?
    /// Rows to skip before the first one returned.
    public var fetchOffset: Int

    /// Creates a fetch request for `entityName`.
    public init(
        entityName: String, includesSubentities: Bool = true, primaryKeys: [Int64]? = nil,
        matching: [String: AttributeValue]? = nil, predicate: QueryPredicate? = nil,
        sortDescriptors: [QuerySortDescriptor] = [], fetchLimit: Int? = nil, fetchOffset: Int = 0
    ) {
        self.entityName = entityName
        self.includesSubentities = includesSubentities
        self.primaryKeys = primaryKeys
        self.matching = matching
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }
}

/// A fetch of property values and aggregates instead of objects: Core Data's dictionary
/// result type, `propertiesToGroupBy` and aggregate expressions.
public struct StoreValuesRequest: Sendable {
    /// One column of the result.
    public typealias Column = ResultColumn

    /// Which rows, in what order, how many.
    public var plan: FetchPlan
    /// The result columns.
    public var columns: [Column]
    /// Key paths to group by; each result row is one group.
    public var groupBy: [String]
    /// Whether duplicate result rows are left out.
    public var returnsDistinctResults: Bool

    /// Creates a values request.
    public init(
        plan: FetchPlan, columns: [Column], groupBy: [String] = [], returnsDistinctResults: Bool = false
    ) {
        self.plan = plan
        self.columns = columns
        self.groupBy = groupBy
        self.returnsDistinctResults = returnsDistinctResults
    }
}

/// One row a store returned: an object's committed state.
public struct StoreRow: Sendable, Hashable {
    /// The object's ID.
    public var objectID: ObjectID
    /// The optimistic-lock version of the row.
    public var version: Int64
    /// Attribute values by attribute number of the row's entity; transient attributes are
    /// ``AttributeValue/null``.
    public var attributes: [AttributeValue]
    /// To-one relationship targets by relationship number; `nil` for empty to-one
    /// relationships and for to-many relationships (which are loaded on demand).
    public var toOne: [ObjectID?]

    /// Creates a row.
    public init(objectID: ObjectID, version: Int64, attributes: [AttributeValue], toOne: [ObjectID?]) {
        self.objectID = objectID
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
    }
}

/// The changes of one save, in the form stores apply.
public struct StoreChangeSet: Sendable {
    /// A new object.
    public struct Insert: Sendable {
        /// The object's temporary ID.
        public var objectID: ObjectID
        /// Attribute values by attribute number.
        public var attributes: [AttributeValue]
        /// To-one targets by relationship number (`nil` for none and for to-many relationships).
        public var toOne: [ObjectID?]

        /// Creates an insert.
        public init(objectID: ObjectID, attributes: [AttributeValue], toOne: [ObjectID?]) {
            self.objectID = objectID
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    /// Changed values of a saved object.
    public struct Update: Sendable {
        /// The object's permanent ID.
        public var objectID: ObjectID
        /// The version the object was read at; the save fails if the row's version differs.
        public var expectedVersion: Int64
        /// Changed attribute values by attribute number.
        public var attributes: [Int: AttributeValue]
        /// Changed to-one targets by relationship number.
        public var toOne: [Int: ObjectID?]

        /// Creates an update.
        public init(
            objectID: ObjectID, expectedVersion: Int64, attributes: [Int: AttributeValue], toOne: [Int: ObjectID?]
        ) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    /// The new contents of a to-many relationship that the store keeps itself (many-to-many,
    /// without inverse, or ordered).
    public struct ToManyUpdate: Sendable {
        /// The object that holds the relationship (temporary or permanent ID).
        public var objectID: ObjectID
        /// The relationship's number in the object's entity.
        public var relationshipNumber: Int
        /// The related objects, in order.
        public var targets: [ObjectID]

        /// Creates a to-many update.
        public init(objectID: ObjectID, relationshipNumber: Int, targets: [ObjectID]) {
            self.objectID = objectID
            self.relationshipNumber = relationshipNumber
            self.targets = targets
        }
    }

    /// New objects.
    public var inserts: [Insert] = []
    /// Changed objects.
    public var updates: [Update] = []
    /// Deleted objects (permanent IDs) with the version they were read at.
    public var deletes: [(objectID: ObjectID, expectedVersion: Int64)] = []
    /// To-many relationships to rewrite.
    public var toManyUpdates: [ToManyUpdate] = []
    /// Who made the changes (recorded in history).
    public var author: String?
    /// The name of the context that saved (recorded in history).
    public var contextName: String?
    /// The context that saved, passed on in the ``StoreCommit`` so that the container does not
    /// hand a context its own save to merge.
    package var origin: ObjectIdentifier?

    /// Creates an empty change set.
    public init() {}

    /// Whether there is nothing to save.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && toManyUpdates.isEmpty }
}

/// What a store reports after applying a change set.
public struct StoreSaveResult: Sendable {
    /// The permanent ID of each inserted object, by its temporary ID.
    public var permanentIDs: [ObjectID: ObjectID] = [:]
    /// The new version of each inserted and updated object, by permanent ID.
    public var versions: [ObjectID: Int64] = [:]

    /// Creates an empty result.
    public init() {}
}
