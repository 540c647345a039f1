import Foundation

/// The `Sendable` form of a ``ContextNotification``: the IDs of the objects it names.
public struct ContextChanges: Sendable, Hashable {
    /// What happened.
    public var name: ContextNotification.Name
    /// IDs of inserted objects (permanent IDs after a save).
    public var insertedObjectIDs: Set<ObjectID>
    /// IDs of updated objects.
    public var updatedObjectIDs: Set<ObjectID>
    /// IDs of deleted objects.
    public var deletedObjectIDs: Set<ObjectID>
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
        self.insertedObjectIDs = insertedObjectIDs
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
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
            name: .didSave, insertedObjectIDs: Set(commit.insertedObjectIDs),
            updatedObjectIDs: Set(commit.updatedObjectIDs), deletedObjectIDs: Set(commit.deletedObjectIDs),
            author: commit.author, contextName: commit.contextName,
            isRemoteChange: commit.changedObjectsAreUnknown)
    }

    /// Whether no object is named (a remote change never counts as empty).
    public var isEmpty: Bool {
        !isRemoteChange && insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty
            && refreshedObjectIDs.isEmpty
    }
}
