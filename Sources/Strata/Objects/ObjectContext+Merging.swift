import Foundation

/// Saves of other contexts waiting to be merged into one context. Any thread may add to it; the
/// context drains it on its own isolation domain.
final class MergeInbox: Sendable {
    private let pending = LockedBox<[ContextChanges]>([])
    /// Called (on the saving thread) when changes arrive in an empty inbox.
    private let onArrival: (@Sendable () -> Void)?
    /// The context whose own saves this inbox does not want.
    let owner: ObjectIdentifier?
    /// Which changes the inbox wants (all when `nil`).
    private let filter: (@Sendable (ContextChanges) -> Bool)?

    init(
        owner: ObjectIdentifier? = nil, filter: (@Sendable (ContextChanges) -> Bool)? = nil,
        onArrival: (@Sendable () -> Void)? = nil
    ) {
        self.owner = owner
        self.filter = filter
        self.onArrival = onArrival
    }

    /// Adds `changes` (if the inbox wants them) without calling ``onArrival``.
    ///
    /// - Returns: The wake-up to call once every inbox has the changes, when they arrived in
    ///   an empty inbox.
    func add(_ changes: ContextChanges) -> (@Sendable () -> Void)? {
        if let filter, !filter(changes) { return nil }
        let wasEmpty = pending.withLock { pending -> Bool in
            defer { pending.append(changes) }
            return pending.isEmpty
        }
        return wasEmpty ? onArrival : nil
    }

    func drain() -> [ContextChanges] {
        pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}

/// The inboxes of a container's contexts that merge automatically, held weakly.
final class MergeInboxes: Sendable {
    private struct Entry: Sendable {
        weak var inbox: MergeInbox?
    }

    private let entries = LockedBox<[Entry]>([])

    func add(_ inbox: MergeInbox) {
        entries.withLock { entries in
            entries.removeAll { $0.inbox == nil }
            entries.append(Entry(inbox: inbox))
        }
    }

    func remove(_ inbox: MergeInbox) {
        entries.withLock { $0.removeAll { $0.inbox == nil || $0.inbox === inbox } }
    }

    /// Hands `changes` to every inbox but those of the context that saved them, then wakes
    /// the inboxes' owners.
    ///
    /// Every inbox has the changes before any owner wakes: a live query woken by its own inbox
    /// merges from its context's inbox next, and must find the save there — whichever of the
    /// two was registered first.
    func post(_ changes: ContextChanges, fromContext source: ObjectIdentifier?) {
        let inboxes = entries.withLock { $0.compactMap(\.inbox) }
        var wakeUps: [@Sendable () -> Void] = []
        for inbox in inboxes where source == nil || inbox.owner != source {
            if let wakeUp = inbox.add(changes) { wakeUps.append(wakeUp) }
        }
        for wakeUp in wakeUps { wakeUp() }
    }

    var count: Int { entries.withLock { $0.filter { $0.inbox != nil }.count } }
}

extension ObjectContext {
    /// Whether this context merges the saves of the container's other contexts by itself
    /// (Core Data's `automaticallyMergesChangesFromParent`).
    ///
    /// When `true`, saves of other contexts are collected as they happen, on any thread, and
    /// merged with ``mergeChanges(from:)-(ContextChanges)`` before this context next fetches, looks up an
    /// object, processes its changes or saves. The ``PersistentContainer/viewContext`` also
    /// merges them on the main actor as soon as they arrive. Fetches afterwards are consistent
    /// with those saves. Only contexts of a container (not child contexts) merge automatically.
    ///
    /// ```swift
    /// context.automaticallyMergesChangesFromContainer = true
    /// let movie = try context.existingObject(with: id) as! Movie
    /// // … another context saves a new title for this movie …
    /// _ = try context.fetch(Movie.self)   // merges first: movie.title is now the saved title
    /// ```
    public var automaticallyMergesChangesFromContainer: Bool {
        get { mergeInbox != nil }
        set {
            guard newValue != (mergeInbox != nil), parent == nil, let container else { return }
            if newValue {
                // The view context lives on the main actor: merge there as soon as saves arrive,
                // so that its controllers and observers follow without waiting for a fetch.
                let inbox =
                    isViewContext
                    ? MergeInbox(
                        owner: ObjectIdentifier(self),
                        onArrival: { [weak container] in
                            Task { @MainActor in container?.viewContext.processPendingChanges() }
                        }) : MergeInbox(owner: ObjectIdentifier(self))
                mergeInbox = inbox
                container.mergeInboxes.add(inbox)
            } else if let inbox = mergeInbox {
                container.mergeInboxes.remove(inbox)
                mergeInbox = nil
            }
        }
    }

    /// Merges a save of another context into this one.
    ///
    /// - Updated objects that this context holds take the saved values. Unsaved edits here are
    ///   kept on top, except where ``mergePolicy`` is ``MergePolicy/mergeByPropertyStoreTrump``
    ///   (the saved value wins for attributes the save changed) or ``MergePolicy/rollback`` (the
    ///   edits are discarded). Faults stay faults; they load the saved values when read.
    /// - Deleted objects leave this context: they are no longer registered, fetched or related
    ///   to the objects here, and using them afterwards reports ``StrataError/Code/objectDeleted``
    ///   as for objects whose deletion this context saved.
    /// - Inserted objects are registered, as faults that load their values when first read:
    ///   ``registeredObject(for:)`` finds them, as after Core Data's
    ///   `mergeChanges(fromContextDidSave:)`. The context keeps them until it next processes
    ///   its pending changes (every save does; the view context at the end of the main actor's
    ///   turn); with ``retainsRegisteredObjects``, until it is reset. Fetches find them either way.
    ///
    /// Merging does not make changes of its own: the context's ``hasChanges`` is what it was,
    /// minus the edits a policy discarded and the deletions it learned of.
    ///
    /// For example:
    ///
    /// ```swift
    /// let saves = container.savedChanges()
    /// for await save in saves { await MainActor.run { container.viewContext.mergeChanges(from: save) } }
    /// ```
    ///
    /// When anyone observes ``ContextNotification/Name/objectsDidChange``, the merge posts it:
    /// the merged objects as updated (faults for those this context had not loaded), the
    /// other context's new objects as inserted (as faults), and the forgotten ones as deleted —
    /// which is how a ``FetchedResultsController`` follows other contexts' saves.
    ///
    /// A remote change (``ContextChanges/isRemoteChange``, another process's commit) names no
    /// objects: every object here is refreshed — objects without unsaved edits become faults
    /// that load the stored values when next read, edited ones merge by the policy — and the
    /// `objectsDidChange` it posts says ``ContextNotification/isRemoteChange``.
    public func mergeChanges(from changes: ContextChanges) {
        let announces = observers.tracksChanges && observers.wants(.objectsDidChange)
        if changes.isRemoteChange {
            mergeRemoteChange(announcing: announces)
            return
        }
        var updatedObjects: Set<ManagedObject> = []
        var insertedObjects: Set<ManagedObject> = []
        var deletedObjects: Set<ManagedObject> = []
        for objectID in changes.objectIDs(.update) {
            guard let object = registered[objectID] else {
                if announces, let fault = try? self.object(with: objectID) { updatedObjects.insert(fault) }
                continue
            }
            if !object._isFault, !object._isInserted { mergeSavedValues(into: object) }
            if announces { updatedObjects.insert(object) }
        }
        for objectID in changes.objectIDs(.delete) {
            guard let object = registered[objectID] else { continue }
            forgetDeletedObject(object)
            if announces { deletedObjects.insert(object) }
        }
        for objectID in changes.objectIDs(.insert) {
            let wasRegistered = registered[objectID] != nil
            guard let object = try? self.object(with: objectID) else { continue }
            if !wasRegistered { keptByMerge.append(object) }
            if announces { insertedObjects.insert(object) }
        }
        // The view context lets go of them at the end of the main actor's turn.
        if !keptByMerge.isEmpty { schedulePostingIfViewContext() }
        if announces {
            guard !updatedObjects.isEmpty || !insertedObjects.isEmpty || !deletedObjects.isEmpty else { return }
            var notification = ContextNotification(
                name: .objectsDidChange, insertedObjects: insertedObjects, updatedObjects: updatedObjects,
                deletedObjects: deletedObjects, author: changes.author, contextName: name)
            notification.refreshedObjects = updatedObjects
            observers.post(notification)
        }
    }

    /// Refreshes every registered object after another process changed the store.
    private func mergeRemoteChange(announcing announces: Bool) {
        var refreshed: Set<ManagedObject> = []
        for object in Array(registered.values) where !object._isInserted && !object.objectID.isTemporaryID {
            if changed[ObjectIdentifier(object)] != nil, object.hasChangedProperties, !object._isFault {
                mergeSavedValues(into: object)
            } else if !object._isFault, deleted[ObjectIdentifier(object)] == nil {
                refreshValues(of: object, mergeChanges: false)
            }
            if announces { refreshed.insert(object) }
        }
        guard announces else { return }
        var notification = ContextNotification(
            name: .objectsDidChange, insertedObjects: [], updatedObjects: refreshed, deletedObjects: [], author: nil,
            contextName: name)
        notification.isRemoteChange = true
        notification.refreshedObjects = refreshed
        observers.post(notification)
    }

    /// Merges the saves collected for ``automaticallyMergesChangesFromContainer``.
    func mergeCollectedChanges() {
        guard let inbox = mergeInbox else { return }
        for changes in inbox.drain() { mergeChanges(from: changes) }
    }

    private func mergeSavedValues(into object: ManagedObject) {
        let key = ObjectIdentifier(object)
        let hasLocalEdits = changed[key] != nil && object.hasChangedProperties
        guard hasLocalEdits else {
            refreshValues(of: object, mergeChanges: true)
            return
        }
        switch mergePolicy {
        case .rollback:
            refreshValues(of: object, mergeChanges: false)
        case .mergeByPropertyStoreTrump:
            let before = object._committedValues
            refreshValues(of: object, mergeChanges: true)
            // Attributes the other save changed take its values, whatever was edited here.
            if let before, let saved = object._committedValues {
                for index in saved.indices where index < before.count && saved[index] != before[index] {
                    object._values[index] = saved[index]
                }
            }
            unsaved.updateChange(of: object)
        case .error, .mergeByPropertyObjectTrump, .overwrite:
            refreshValues(of: object, mergeChanges: true)
        }
    }

    /// Removes an object another context deleted: from the identity map, the pending changes,
    /// and the loaded relationships of the objects here.
    private func forgetDeletedObject(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        registered[object.objectID] = nil
        unsaved.forget(key)
        for holder in registered.values where !holder._isFault {
            holder._relationships = holder._relationships.map { $0.removing(object) }
            holder._committedRelationships = holder._committedRelationships?.map { $0.removing(object) }
        }
        object._isDeleted = false
        object._wasDeletedAndSaved = true
        object.context = nil
    }
}

extension RelationshipValue {
    /// The value without `object`.
    func removing(_ object: ManagedObject) -> RelationshipValue {
        switch self {
        case .toOne(let target) where target === object: .toOne(nil)
        case .toMany(let objects) where objects.contains(where: { $0 === object }):
            .toMany(objects.filter { $0 !== object })
        default: self
        }
    }
}

/// The saves of other contexts that one context's live queries wait for: one inbox per context,
/// however many queries it has, kept while any query runs.
struct ObservedSaves {
    private var inbox: MergeInbox?
    private var users = 0

    /// Starts collecting (or counts one more user) for the context `owner` of `container`.
    mutating func retain(owner: ObjectIdentifier, container: PersistentContainer) {
        if users == 0 {
            let inbox = MergeInbox(owner: owner)
            container.mergeInboxes.add(inbox)
            self.inbox = inbox
        }
        users += 1
    }

    /// Counts one user less, and stops collecting after the last one.
    mutating func release(container: PersistentContainer?) {
        guard users > 0 else { return }
        users -= 1
        if users == 0, let inbox {
            container?.mergeInboxes.remove(inbox)
            self.inbox = nil
        }
    }

    /// The saves collected since the last call.
    func drain() -> [ContextChanges] {
        inbox?.drain() ?? []
    }
}

extension ObjectContext {
    /// Starts collecting other contexts' saves for this context's live queries.
    func retainObservedSaves() {
        guard let container, parent == nil else { return }
        observedSaves.retain(owner: ObjectIdentifier(self), container: container)
    }

    /// Stops collecting when the last live query ends.
    func releaseObservedSaves() {
        observedSaves.release(container: container)
    }

    /// Merges the saves collected for live queries — or, when the context merges by itself,
    /// the saves it collected for that — so that a woken query always sees the save that woke it.
    func mergeObservedSaves() {
        let saves = observedSaves.drain()
        guard !automaticallyMergesChangesFromContainer else {
            mergeCollectedChanges()
            return
        }
        for changes in saves { mergeChanges(from: changes) }
    }
}
