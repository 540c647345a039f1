import Foundation

/// What one save changed in a store: the objects it inserted, updated and deleted, and who
/// saved. Stores report every commit to their observers after the transaction is durable.
///
/// This is the one value a commit produces: the store builds it once, and the container's
/// commit observers, its live queries, ``PersistentContainer/savedChanges()`` and the contexts
/// that merge other contexts' saves all read this same value (the last two as
/// ``ContextChanges``, made from it with ``ContextChanges/init(_:)``).
public struct StoreCommit: Sendable, Hashable {
    /// The store that committed.
    public var storeIdentifier: String
    /// Permanent IDs of the objects inserted.
    ///
    /// A batch insert's commit keeps its new rows as primary keys and makes the IDs when this
    /// is read (a million IDs take some 70 MB; their keys take 8): read it once, or use
    /// ``insertedObjectCount`` and ``changedEntityNames`` where they are enough.
    public var insertedObjectIDs: [ObjectID] {
        get { inserted.objectIDs(storeIdentifier: storeIdentifier) }
        set { inserted = .objectIDs(newValue) }
    }
    /// The inserted objects, as IDs or (for batch inserts) as one entity's primary keys.
    var inserted: InsertedObjects
    /// IDs of the objects updated.
    public var updatedObjectIDs: [ObjectID]
    /// IDs of the objects deleted.
    public var deletedObjectIDs: [ObjectID]
    /// The saving context's transaction author.
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// When the commit happened (for a remote commit read from persistent history: when its
    /// transaction committed; without history: when it was noticed).
    public var timestamp: Date
    /// Whether another process or connection committed, noticed by polling
    /// (``StoreDescription/remoteChangePollingInterval``). In a store with persistent history
    /// the commit names its objects, read from the history; without history they are unknown
    /// (``changedObjectsAreUnknown``).
    public var isRemote: Bool
    /// The commit's transaction in the store's persistent history, when the store tracks it.
    public var historyToken: HistoryToken?
    /// The context that saved, from ``StoreChangeSet``; `nil` for remote commits. Not part of
    /// equality: two descriptions of the same commit are equal wherever they were made.
    package var origin: ObjectIdentifier?

    /// Creates a commit description.
    public init(
        storeIdentifier: String, insertedObjectIDs: [ObjectID], updatedObjectIDs: [ObjectID],
        deletedObjectIDs: [ObjectID],
        author: String?, contextName: String?, timestamp: Date = Date(), isRemote: Bool = false,
        historyToken: HistoryToken? = nil
    ) {
        self.isRemote = isRemote
        self.historyToken = historyToken
        self.storeIdentifier = storeIdentifier
        self.inserted = .objectIDs(insertedObjectIDs)
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
        self.author = author
        self.contextName = contextName
        self.timestamp = timestamp
    }
}

extension StoreCommit {
    /// The commit a history transaction recorded: its objects, each once, author, context
    /// name, time and token. An object both updated and deleted in it counts as deleted.
    ///
    /// - Parameter isRemote: Whether another connection made it (a store noticing other
    ///   processes' commits); a transaction without changes is then a change of unknown objects.
    package init(_ transaction: HistoryTransaction, isRemote: Bool = false) {
        var inserted: [ObjectID] = []
        var updated: [ObjectID] = []
        var deleted: [ObjectID] = []
        var seen: Set<ObjectID> = []
        // Deletions first: an object both updated and deleted counts once, as deleted.
        for change in transaction.changes ?? [] where change.changeType == .delete {
            if seen.insert(change.changedObjectID).inserted { deleted.append(change.changedObjectID) }
        }
        for change in transaction.changes ?? [] where change.changeType != .delete {
            guard seen.insert(change.changedObjectID).inserted else { continue }
            if change.changeType == .insert {
                inserted.append(change.changedObjectID)
            } else {
                updated.append(change.changedObjectID)
            }
        }
        self.init(
            storeIdentifier: transaction.storeIdentifier, insertedObjectIDs: inserted, updatedObjectIDs: updated,
            deletedObjectIDs: deleted, author: transaction.author, contextName: transaction.contextName,
            timestamp: transaction.timestamp, isRemote: isRemote, historyToken: transaction.token)
    }
}

/// The objects a commit inserted: IDs, or the primary keys of one entity's new rows.
enum InsertedObjects: Sendable {
    case objectIDs([ObjectID])
    case keys(entityName: String, entityNameHash: UInt64, keys: [Int64])

    func objectIDs(storeIdentifier: String) -> [ObjectID] {
        switch self {
        case .objectIDs(let ids): ids
        case .keys(let entityName, let hash, let keys):
            keys.map {
                ObjectID(entityName: entityName, entityNameHash: hash, storeIdentifier: storeIdentifier, primaryKey: $0)
            }
        }
    }

    var count: Int {
        switch self {
        case .objectIDs(let ids): ids.count
        case .keys(_, _, let keys): keys.count
        }
    }

    var entityNames: Set<String> {
        switch self {
        case .objectIDs(let ids): Set(ids.map(\.entityName))
        case .keys(let entityName, _, let keys): keys.isEmpty ? [] : [entityName]
        }
    }
}

extension StoreCommit {
    /// Creates the commit of a batch insert of one entity's rows, keeping their keys only.
    package init(
        storeIdentifier: String, insertedEntityName: String, entityNameHash: UInt64, insertedKeys: [Int64],
        updatedObjectIDs: [ObjectID], author: String?, contextName: String?, timestamp: Date, historyToken: HistoryToken?
    ) {
        self.init(
            storeIdentifier: storeIdentifier, insertedObjectIDs: [], updatedObjectIDs: updatedObjectIDs, deletedObjectIDs: [],
            author: author, contextName: contextName, timestamp: timestamp, historyToken: historyToken)
        inserted = .keys(entityName: insertedEntityName, entityNameHash: entityNameHash, keys: insertedKeys)
    }

    /// The number of objects inserted, without making their IDs.
    public var insertedObjectCount: Int { inserted.count }

    /// Whether the commit names no object (a remote commit of a store without history).
    public var namesNoObjects: Bool { inserted.count == 0 && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }

    /// The entities of the objects the commit names, without making the IDs of inserted rows.
    public var changedEntityNames: Set<String> {
        inserted.entityNames.union(updatedObjectIDs.map(\.entityName)).union(deletedObjectIDs.map(\.entityName))
    }

    /// Whether this is another process's commit whose objects are unknown (the store keeps no
    /// history): the ID lists are empty, and anything in the store may have changed.
    public var changedObjectsAreUnknown: Bool { isRemote && namesNoObjects }

    /// Whether two values describe the same commit (the saving context aside).
    public static func == (lhs: StoreCommit, rhs: StoreCommit) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier && lhs.insertedObjectIDs == rhs.insertedObjectIDs
            && lhs.updatedObjectIDs == rhs.updatedObjectIDs && lhs.deletedObjectIDs == rhs.deletedObjectIDs
            && lhs.author == rhs.author && lhs.contextName == rhs.contextName && lhs.timestamp == rhs.timestamp
            && lhs.isRemote == rhs.isRemote && lhs.historyToken == rhs.historyToken
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(insertedObjectIDs)
        hasher.combine(updatedObjectIDs)
        hasher.combine(deletedObjectIDs)
        hasher.combine(author)
        hasher.combine(contextName)
        hasher.combine(timestamp)
        hasher.combine(isRemote)
        hasher.combine(historyToken)
    }
}
