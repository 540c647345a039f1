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
    public var insertedObjectIDs: [ObjectID]
    /// IDs of the objects updated.
    public var updatedObjectIDs: [ObjectID]
    /// IDs of the objects deleted.
    public var deletedObjectIDs: [ObjectID]
    /// The saving context's transaction author.
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// When the commit happened (for a remote commit: when it was noticed).
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
    var origin: ObjectIdentifier?

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
        self.insertedObjectIDs = insertedObjectIDs
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
        self.author = author
        self.contextName = contextName
        self.timestamp = timestamp
    }
}

extension StoreCommit {
    /// Whether this is another process's commit whose objects are unknown (the store keeps no
    /// history): the ID lists are empty, and anything in the store may have changed.
    public var changedObjectsAreUnknown: Bool {
        isRemote && insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty
    }

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

/// A registration of a commit observer; the observer stops being called when the observation
/// is cancelled or released.
public final class StoreObservation: Sendable {
    private let onCancel: LockedBox<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedBox(onCancel)
    }

    /// Stops the observer. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}

/// The observers of one store, called in registration order.
final class CommitObservers: Sendable {
    private let observers = LockedBox<[(id: UUID, call: @Sendable (StoreCommit) -> Void)]>([])

    func add(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        let id = UUID()
        observers.withLock { $0.append((id, observer)) }
        return StoreObservation { [weak self] in
            self?.observers.withLock { $0.removeAll { $0.id == id } }
        }
    }

    var count: Int { observers.withLock { $0.count } }

    func notify(_ commit: StoreCommit) {
        for observer in observers.withLock({ $0 }) { observer.call(commit) }
    }
}
