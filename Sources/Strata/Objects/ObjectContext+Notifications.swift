import Foundation

/// A change notification of one context: objects that changed, or the changes a save is about to
/// write or has written.
///
/// Callbacks registered with ``ObjectContext/addObserver(for:_:)`` receive notifications with
/// the objects themselves, on the context's isolation domain. Code elsewhere uses the `Sendable`
/// form, ``ContextChanges`` (object IDs), from ``ObjectContext/changes(for:)`` or
/// ``PersistentContainer/savedChanges()``.
///
/// ```swift
/// let observation = context.addObserver(for: .didSave) { notification in
///     print("saved", notification.insertedObjects.count, "new objects")
/// }
/// ```
public struct ContextNotification {
    /// The kinds of notification, as in Core Data.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        /// Posted when the context processes its pending changes (``ObjectContext/processPendingChanges()``,
        /// which every save does first): the objects inserted, updated and deleted since the last time.
        case objectsDidChange
        /// Posted when a save starts, before validation, with the objects it is about to write.
        /// Observers may still change objects; the save includes those changes.
        case willSave
        /// Posted after a save succeeded, with the objects it wrote (new objects with their
        /// permanent IDs).
        case didSave
    }

    /// What happened.
    public let name: Name
    /// Objects inserted (for saves: new objects the save wrote).
    public let insertedObjects: Set<ManagedObject>
    /// Saved objects whose values changed.
    public let updatedObjects: Set<ManagedObject>
    /// Objects deleted.
    public let deletedObjects: Set<ManagedObject>
    /// The context's ``ObjectContext/transactionAuthor`` (saves only).
    public let author: String?
    /// The context's ``ObjectContext/name``.
    public let contextName: String?
    /// Whether this reports a merged change of another process whose objects are unknown (see
    /// ``StoreDescription/remoteChangePollingInterval``; a store with persistent history names
    /// them instead): the context refreshed every object it holds, and `updatedObjects` lists
    /// them.
    public internal(set) var isRemoteChange = false

    /// Objects whose values were reloaded from the store (`objectsDidChange` only; Core Data's
    /// `NSRefreshedObjectsKey`): by ``ObjectContext/refresh(_:mergeChanges:)``, or by a merge of
    /// another context's or process's save — merged objects are also in ``updatedObjects``.
    public internal(set) var refreshedObjects: Set<ManagedObject> = []

    /// Whether the notification names no object.
    public var isEmpty: Bool {
        insertedObjects.isEmpty && updatedObjects.isEmpty && deletedObjects.isEmpty && refreshedObjects.isEmpty
    }

    /// The `Sendable` form of the notification: the objects' IDs.
    public var changes: ContextChanges {
        ContextChanges(
            name: name, insertedObjectIDs: Set(insertedObjects.map(\.objectID)),
            updatedObjectIDs: Set(updatedObjects.map(\.objectID)), deletedObjectIDs: Set(deletedObjects.map(\.objectID)),
            author: author, contextName: contextName, isRemoteChange: isRemoteChange,
            refreshedObjectIDs: Set(refreshedObjects.map(\.objectID)))
    }
}

@available(*, unavailable, message: "Notifications carry managed objects; pass `changes` (object IDs) across isolation domains.")
extension ContextNotification: Sendable {}

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

/// A registration made with ``ObjectContext/addObserver(for:_:)``; cancelling it, or releasing
/// it, removes the registration.
public final class ContextObservation {
    private var removal: (() -> Void)?

    init(removal: @escaping () -> Void) {
        self.removal = removal
    }

    /// Stops the callbacks. Calling it again does nothing.
    public func cancel() {
        removal?()
        removal = nil
    }

    deinit { cancel() }
}

@available(*, unavailable, message: "An observation belongs to its context's isolation domain.")
extension ContextObservation: Sendable {}

/// An `AsyncSequence` of ``ContextChanges``: notifications of one context or of every context of
/// a container, in the order they were posted.
///
/// The sequence registers when it is made: its first iteration receives every notification
/// since then. Each later iteration of the same value registers when it starts, and receives
/// every notification from then on. An iteration buffers what its consumer has not read yet,
/// so a slow consumer never blocks a save; ending it (cancelling its task, or breaking out of
/// the loop) removes its registration, and so does releasing a sequence never iterated.
public struct ContextChangesSequence: AsyncSequence, Sendable {
    /// The type of the values the sequence yields.
    public typealias Element = ContextChanges
    /// The error iteration can throw (none).
    public typealias Failure = Never

    let source: StreamSource<ContextChanges, ContextNotification.Name>

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(base: source.makeStream().makeAsyncIterator()) }

    /// The iterator of a ``ContextChangesSequence``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<ContextChanges>.Iterator

        /// The next notification, or `nil` when the iteration was cancelled.
        public mutating func next() async -> ContextChanges? { await base.next() }

        /// The next notification, in the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ContextChanges? {
            await base.next(isolation: actor)
        }
    }
}

/// The streams of ``ContextChangesSequence``s: of one context, or of a container's saves.
typealias ChangeStreams = StreamBroadcast<ContextChanges, ContextNotification.Name>

extension StreamBroadcast where Element == ContextChanges, Topic == ContextNotification.Name {
    /// A new sequence receiving the notifications named in `names`.
    func makeSequence(for names: Set<ContextNotification.Name>) -> ContextChangesSequence {
        ContextChangesSequence(source: StreamSource(self, topics: names))
    }

    /// Hands `changes` to every stream that wants notifications of their name.
    func post(_ changes: ContextChanges) { post(changes, topic: changes.name) }
}

/// A context's observers and the changes not yet announced by `objectsDidChange`.
final class ContextObservers {
    private struct Callback {
        var id: Int
        var name: ContextNotification.Name
        var handler: (ContextNotification) -> Void
    }

    private var callbacks: [Callback] = []
    private var nextID = 0
    let streams = ChangeStreams()

    /// Whether changes are recorded for `objectsDidChange`: only once someone asked for it, so
    /// that contexts nobody observes pay nothing per change.
    private(set) var tracksChanges = ContextNotificationHub.shared.wants(.objectsDidChange)
    var pendingInserted: [ObjectIdentifier: ManagedObject] = [:]
    var pendingUpdated: [ObjectIdentifier: ManagedObject] = [:]
    var pendingDeleted: [ObjectIdentifier: ManagedObject] = [:]
    var pendingRefreshed: [ObjectIdentifier: ManagedObject] = [:]
    /// Whether the view context's `objectsDidChange` is scheduled for the end of the turn.
    var isPostingScheduled = false
    /// Whether these are the observers of a container's view context (which posts on the main
    /// actor).
    var isViewContext = false

    func add(_ name: ContextNotification.Name, _ handler: @escaping (ContextNotification) -> Void) -> Int {
        nextID += 1
        callbacks.append(Callback(id: nextID, name: name, handler: handler))
        if name == .objectsDidChange { tracksChanges = true }
        return nextID
    }

    func remove(_ id: Int) {
        callbacks.removeAll { $0.id == id }
    }

    func startTrackingChanges() { tracksChanges = true }

    /// The number of registrations, callbacks and streams.
    var count: Int { callbacks.count + streams.count }

    func wants(_ name: ContextNotification.Name) -> Bool {
        callbacks.contains { $0.name == name } || streams.wants(name) || ContextNotificationHub.shared.wants(name)
    }

    /// Calls the callbacks registered for the notification's name (those registered at the time
    /// it was posted), then hands its IDs to the streams.
    func post(_ notification: ContextNotification) {
        for callback in callbacks where callback.name == notification.name {
            callback.handler(notification)
        }
        if streams.wants(notification.name) { streams.post(notification.changes) }
        ContextNotificationHub.shared.post(notification, fromViewContext: isViewContext)
    }

    func clearPendingChanges() {
        pendingInserted.removeAll()
        pendingUpdated.removeAll()
        pendingDeleted.removeAll()
        pendingRefreshed.removeAll()
    }
}

extension ObjectContext {
    /// Registers `handler` for the notifications named `name` of this context.
    ///
    /// The handler runs synchronously on the context's isolation domain, in the order of
    /// registration, when the notification is posted: `willSave` before the save validates,
    /// `didSave` after it succeeded, `objectsDidChange` when pending changes are processed.
    ///
    /// ```swift
    /// let observation = context.addObserver(for: .objectsDidChange) { notification in
    ///     for movie in notification.updatedObjects.compactMap({ $0 as? Movie }) { print(movie.title) }
    /// }
    /// observation.cancel()  // or let it go
    /// ```
    ///
    /// - Returns: The registration; it lasts until cancelled or released.
    public func addObserver(
        for name: ContextNotification.Name, _ handler: @escaping (ContextNotification) -> Void
    ) -> ContextObservation {
        let id = observers.add(name, handler)
        return ContextObservation { [weak self] in self?.observers.remove(id) }
    }

    /// The notifications of this context named in `names`, as their `Sendable` form.
    ///
    /// ```swift
    /// for await changes in context.changes(for: [.didSave]) {
    ///     print(changes.insertedObjectIDs)
    /// }
    /// ```
    public func changes(
        for names: Set<ContextNotification.Name> = Set(ContextNotification.Name.allCases)
    ) -> ContextChangesSequence {
        if names.contains(.objectsDidChange) { observers.startTrackingChanges() }
        return observers.streams.makeSequence(for: names)
    }

    /// Posts `objectsDidChange` for the objects inserted, updated, deleted and refreshed since
    /// the last time, if there are any and anyone observes it. Every save does this first.
    ///
    /// Changes are recorded from the moment the first `objectsDidChange` observer registers.
    /// As Core Data does at the end of each run-loop turn, the view context calls this by
    /// itself at the end of the main actor's current turn, and
    /// ``PersistentContainer/performBackgroundTask(author:_:)`` when its work ends; call it
    /// yourself to announce changes sooner, or in contexts you made.
    ///
    /// ```swift
    /// let observation = context.addObserver(for: .objectsDidChange) { print($0.insertedObjects.count) }
    /// _ = Movie(context: context)
    /// context.processPendingChanges()   // prints 1
    /// ```
    public func processPendingChanges() {
        keptByMerge.removeAll()
        mergeCollectedChanges()
        observers.isPostingScheduled = false
        guard observers.tracksChanges else { return }
        let inserted = observers.pendingInserted
        let updated = observers.pendingUpdated.filter { inserted[$0.key] == nil && observers.pendingDeleted[$0.key] == nil }
        let deleted = observers.pendingDeleted
        let refreshed = observers.pendingRefreshed.filter { observers.pendingDeleted[$0.key] == nil }
        observers.clearPendingChanges()
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !refreshed.isEmpty,
            observers.wants(.objectsDidChange)
        else { return }
        var notification = ContextNotification(
            name: .objectsDidChange, insertedObjects: Set(inserted.values), updatedObjects: Set(updated.values),
            deletedObjects: Set(deleted.values), author: nil, contextName: name)
        notification.refreshedObjects = Set(refreshed.values)
        observers.post(notification)
    }

    /// Schedules the view context's `objectsDidChange` for the end of the main actor's turn,
    /// once per turn.
    func schedulePostingIfViewContext() {
        guard isViewContext, !observers.isPostingScheduled, let container else { return }
        observers.isPostingScheduled = true
        Task { @MainActor [weak container] in container?.viewContext.processPendingChanges() }
    }

    /// The number of observer registrations (callbacks and streams) of this context.
    var observerCount: Int { observers.count }

    // Change recording for `objectsDidChange`, called where the context tracks changes.

    func recordInsertion(_ object: ManagedObject) {
        guard observers.tracksChanges else { return }
        observers.pendingInserted[ObjectIdentifier(object)] = object
        schedulePostingIfViewContext()
    }

    func recordUpdate(_ object: ManagedObject) {
        guard observers.tracksChanges else { return }
        observers.pendingUpdated[ObjectIdentifier(object)] = object
        schedulePostingIfViewContext()
    }

    func recordRefresh(_ object: ManagedObject) {
        guard observers.tracksChanges else { return }
        observers.pendingRefreshed[ObjectIdentifier(object)] = object
        schedulePostingIfViewContext()
    }

    func recordDeletion(_ object: ManagedObject, wasInserted: Bool) {
        guard observers.tracksChanges else { return }
        schedulePostingIfViewContext()
        let key = ObjectIdentifier(object)
        observers.pendingUpdated[key] = nil
        // An object inserted and deleted before anyone heard of it never existed for observers.
        if wasInserted, observers.pendingInserted.removeValue(forKey: key) != nil { return }
        observers.pendingDeleted[key] = object
    }

    /// Posts `willSave` with the changes about to be saved.
    func postWillSave() {
        guard observers.wants(.willSave) else { return }
        observers.post(
            ContextNotification(
                name: .willSave, insertedObjects: insertedObjects, updatedObjects: updatedObjects,
                deletedObjects: deletedObjects, author: transactionAuthor?.name, contextName: name))
    }

    /// Posts `didSave` to this context's observers. The container's
    /// ``PersistentContainer/savedChanges()`` and the other contexts hear of the save from the
    /// store's ``StoreCommit`` instead, the same value for every listener.
    func postDidSave(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) {
        guard observers.wants(.didSave) else { return }
        observers.post(
            ContextNotification(
                name: .didSave, insertedObjects: Set(inserted), updatedObjects: Set(updated),
                deletedObjects: Set(deleted), author: transactionAuthor?.name, contextName: name))
    }
}
