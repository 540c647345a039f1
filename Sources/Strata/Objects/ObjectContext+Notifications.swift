import Foundation

extension ObjectContext {
    /// Registers `handler` for the notifications named `name` of this context.
    ///
    /// The handler runs synchronously on the context's isolation domain, in the order of
    /// registration, when the notification is posted: `willSave` before the save validates,
    /// `didSave` after it succeeded, `objectsDidChange` when pending changes are processed.
    ///
    /// For example:
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
    /// For example:
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
    /// For example:
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
