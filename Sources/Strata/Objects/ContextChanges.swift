import Foundation

/// The `Sendable` form of a ``ContextNotification``: the IDs of the objects it names.
public struct ContextChanges: Sendable, Hashable {
    /// What happened.
    public var name: ContextNotification.Name
    /// IDs of inserted objects (permanent IDs after a save).
    public var insertedObjectIDs: Set<ObjectID> {
        get { objectIDs.set(of: .insert) }
        set { objectIDs.replace(.insert, with: newValue) }
    }
    /// IDs of updated objects.
    public var updatedObjectIDs: Set<ObjectID> {
        get { objectIDs.set(of: .update) }
        set { objectIDs.replace(.update, with: newValue) }
    }
    /// IDs of deleted objects.
    public var deletedObjectIDs: Set<ObjectID> {
        get { objectIDs.set(of: .delete) }
        set { objectIDs.replace(.delete, with: newValue) }
    }
    /// The IDs of the changed objects: the sets given, or the store commit the changes are,
    /// read when asked. A save's commit reaches every stream of saved changes and every
    /// merging context as the store made it; each reads the IDs it needs from it.
    private var objectIDs: ChangedObjectIDs
    /// The author of a save.
    public var author: String?
    /// The name of the context.
    public var contextName: String?
    /// Whether another process changed the store and which objects changed is unknown
    /// (noticed by polling a store without persistent history, see
    /// ``StoreDescription/remoteChangePollingInterval`` and
    /// ``StoreCommit/changedObjectsAreUnknown``); the ID sets are then empty. Other processes'
    /// commits to a store with history name their objects and are not remote changes in this
    /// sense.
    public var isRemoteChange: Bool
    /// IDs of objects reloaded from the store (`objectsDidChange` only; see
    /// ``ContextNotification/refreshedObjects``).
    public var refreshedObjectIDs: Set<ObjectID>

    /// Creates a change summary.
    ///
    /// For example:
    ///
    /// ```swift
    /// let changes = ContextChanges(name: .didSave, deletedObjectIDs: [movie.objectID], author: "sync")
    /// otherContext.mergeChanges(from: changes)   // otherContext forgets the movie
    /// ```
    public init(
        name: ContextNotification.Name, insertedObjectIDs: Set<ObjectID> = [], updatedObjectIDs: Set<ObjectID> = [],
        deletedObjectIDs: Set<ObjectID> = [], author: String? = nil, contextName: String? = nil,
        isRemoteChange: Bool = false, refreshedObjectIDs: Set<ObjectID> = []
    ) {
        self.isRemoteChange = isRemoteChange
        self.refreshedObjectIDs = refreshedObjectIDs
        self.name = name
        self.objectIDs = .listed(inserted: insertedObjectIDs, updated: updatedObjectIDs, deleted: deletedObjectIDs)
        self.author = author
        self.contextName = contextName
    }

    /// The saved changes of one store commit: its object IDs, author and context name, named
    /// ``ContextNotification/Name/didSave``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observation = container.addCommitObserver { commit in
    ///     let changes = ContextChanges(commit)
    /// }
    /// ```
    public init(_ commit: StoreCommit) {
        self.init(
            name: .didSave, author: commit.author, contextName: commit.contextName,
            isRemoteChange: commit.changedObjectsAreUnknown)
        objectIDs = .commit(commit)
    }

    /// The store commit these changes are, when they are one.
    package var commit: StoreCommit? {
        if case .commit(let commit) = objectIDs { commit } else { nil }
    }

    /// The IDs of the objects of one kind of change, each once, without building a set for a
    /// commit's (a merge reads them one by one).
    func objectIDs(_ kind: HistoryChange.ChangeType) -> [ObjectID] {
        objectIDs.list(of: kind)
    }

    /// The names of the entities whose objects changed (read from the commit without building
    /// its IDs, when the changes are one).
    var changedEntityNames: Set<String> {
        if let commit { return commit.changedEntityNames }
        var names: Set<String> = []
        for kind in [HistoryChange.ChangeType.insert, .update, .delete] {
            for objectID in objectIDs.set(of: kind) { names.insert(objectID.entityName) }
        }
        return names
    }

    /// Whether no object is named (a remote change never counts as empty).
    public var isEmpty: Bool {
        !isRemoteChange && objectIDs.isEmpty && refreshedObjectIDs.isEmpty
    }

    /// Whether two summaries name the same objects, context, author and kind of change — made
    /// from a commit or from sets alike.
    public static func == (lhs: ContextChanges, rhs: ContextChanges) -> Bool {
        lhs.name == rhs.name && lhs.author == rhs.author && lhs.contextName == rhs.contextName
            && lhs.isRemoteChange == rhs.isRemoteChange && lhs.refreshedObjectIDs == rhs.refreshedObjectIDs
            && lhs.insertedObjectIDs == rhs.insertedObjectIDs && lhs.updatedObjectIDs == rhs.updatedObjectIDs
            && lhs.deletedObjectIDs == rhs.deletedObjectIDs
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(author)
        hasher.combine(contextName)
        hasher.combine(isRemoteChange)
        hasher.combine(refreshedObjectIDs)
        hasher.combine(insertedObjectIDs)
        hasher.combine(updatedObjectIDs)
        hasher.combine(deletedObjectIDs)
    }
}

/// The IDs a ``ContextChanges`` names: sets, or a store commit read when asked.
private enum ChangedObjectIDs: Sendable {
    case listed(inserted: Set<ObjectID>, updated: Set<ObjectID>, deleted: Set<ObjectID>)
    case commit(StoreCommit)

    func set(of kind: HistoryChange.ChangeType) -> Set<ObjectID> {
        switch self {
        case .listed(let inserted, let updated, let deleted):
            switch kind {
            case .insert: inserted
            case .update: updated
            case .delete: deleted
            }
        case .commit: Set(list(of: kind))
        }
    }

    func list(of kind: HistoryChange.ChangeType) -> [ObjectID] {
        switch self {
        case .listed: Array(set(of: kind))
        case .commit(let commit):
            switch kind {
            case .insert: commit.insertedObjectIDs
            case .update: commit.updatedObjectIDs
            case .delete: commit.deletedObjectIDs
            }
        }
    }

    var isEmpty: Bool {
        switch self {
        case .listed(let inserted, let updated, let deleted): inserted.isEmpty && updated.isEmpty && deleted.isEmpty
        case .commit(let commit): commit.namesNoObjects
        }
    }

    /// Replaces one kind's IDs; a commit becomes the sets it names first.
    mutating func replace(_ kind: HistoryChange.ChangeType, with ids: Set<ObjectID>) {
        var inserted = set(of: .insert)
        var updated = set(of: .update)
        var deleted = set(of: .delete)
        switch kind {
        case .insert: inserted = ids
        case .update: updated = ids
        case .delete: deleted = ids
        }
        self = .listed(inserted: inserted, updated: updated, deleted: deleted)
    }
}
