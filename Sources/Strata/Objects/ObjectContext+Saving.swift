import Foundation

extension ObjectContext {
    /// How often a save resolves conflicts and writes again when other writers keep committing
    /// between its look at the store and its write.
    static let maximumSaveAttempts = 100

    /// Saves every insertion, change and deletion to the stores, all or nothing.
    ///
    /// Before anything is written, every inserted and changed object is validated (see
    /// ``ManagedObject/validateForSave()``) and deny delete rules are checked; all failures are
    /// reported together. Then each store applies its part in one transaction. Afterwards new
    /// objects have permanent IDs, and the context has no changes.
    ///
    /// Conflicts follow ``mergePolicy``. A policy other than ``MergePolicy/error`` resolves
    /// every conflict, including one with a save another context commits while this one is
    /// being written: the save then resolves again and writes again, so it does not fail for a
    /// conflict its policy can resolve.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = Movie(context: context)
    /// movie.title = "Heat"
    /// do {
    ///     try context.save()
    /// } catch let error as StrataError where error.code == .validationFailed {
    ///     context.rollback()   // or fix the values and save again
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/validationFailed`` (every failure
    ///   in ``StrataError/details``), ``StrataError/Code/optimisticLockingFailure`` when another
    ///   context saved a change to one of the objects since this one loaded it (with the
    ///   ``MergePolicy/error`` policy), ``StrataError/Code/constraintConflict`` for a uniqueness
    ///   violation (with the ``MergePolicy/error`` policy),
    ///   ``StrataError/Code/noStore`` or ``StrataError/Code/storeClosed``. After an error the
    ///   stores and the context's objects are unchanged.
    public func save() throws {
        try throwPendingErrors()
        processPendingChanges()
        guard hasChanges else { return }
        // Observers may still change objects; the save below includes what they change.
        postWillSave()
        try checkContainerIsAlive()
        guard parent != nil || container != nil else {
            throw StrataError(.noStore, "This context has no stores to save to; create it with a PersistentContainer.")
        }
        try container?.checkOpen()
        var operation = SaveOperation(context: self)
        try operation.validate()
        if let parent {
            try operation.push(to: parent)
        } else {
            // Two statements: `apply` must see the objects `write()` collected again after
            // resolving conflicts (a call would copy `operation` before its argument ran).
            let results = try operation.write()
            operation.apply(results)
        }
        let saved = operation.objects
        postDidSave(inserted: saved.inserted, updated: saved.updated, deleted: saved.deleted)
    }

    /// Throws the errors that could not be thrown where they happened (a relationship set across
    /// contexts, say), once.
    private func throwPendingErrors() throws {
        guard !pendingErrors.isEmpty else { return }
        let errors = pendingErrors
        pendingErrors.removeAll()
        throw StrataError(
            .validationFailed, "The save was refused: " + StrataError.summary(of: errors), details: errors)
    }

    /// Forgets the inserted, changed and deleted sets (after a save, rollback or reset).
    func clearPendingChanges() {
        observers.clearPendingChanges()
        unsaved.removeAll()
    }

    /// Gives new objects their permanent IDs now, before they are saved.
    ///
    /// Use it to hand an ID to another context or to archive it before saving. The objects stay
    /// inserted; saving them later keeps these IDs.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = Movie(context: context)
    /// try context.obtainPermanentIDs(for: [movie])
    /// let id = movie.objectID   // permanent: other contexts can look it up once the movie is saved
    /// ```
    ///
    /// - Parameter objects: Objects of this context; saved ones are left alone.
    /// - Throws: ``StrataError`` when the store cannot reserve keys.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        let pending = objects.filter { $0.context === self && $0._isInserted && $0.objectID.isTemporaryID }
        for (entityName, group) in Dictionary(grouping: pending, by: { $0.entity.name }).sorted(by: { $0.key < $1.key })
        {
            guard let entity = schema.entity(named: entityName) else { continue }
            let store = try self.store(forEntity: entity)
            let keys = try store.reservePrimaryKeys(forEntityNamed: entityName, count: group.count)
            for (object, key) in zip(group, keys) {
                let permanent = ObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: key)
                registered.changeID(of: object, to: permanent)
            }
        }
    }

    /// Discards every unsaved change: inserted objects leave the context, changed and deleted
    /// ones get their saved values back.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.title = "Typo"
    /// context.rollback()   // movie.title is what was saved
    /// ```
    public func rollback() {
        pendingErrors.removeAll()
        for object in unsaved.insertedObjects {
            object._isInserted = false
            registered[object.objectID] = nil
            object.context = nil
        }
        for object in Array(changed.values) + Array(deleted.values) {
            object._isDeleted = false
            object.revertValues()
        }
        clearPendingChanges()
    }

    /// Forgets every object: the context becomes empty, and objects it held must not be used
    /// with it any more.
    ///
    /// Related objects refer to each other, and objects keep their context alive; a context
    /// that lives long (a server's, an importer's) should be reset now and then, which also
    /// releases those references.
    ///
    /// For example:
    ///
    /// ```swift
    /// for batch in batches {
    ///     for row in batch { Movie(context: context).title = row.title }
    ///     try context.save()
    ///     context.reset()   // lets go of the batch's objects
    /// }
    /// ```
    public func reset() {
        for object in registered.values {
            object.context = nil
            object._relationships = object.entity.toManyFlags.map { $0 ? .toManyFault : .toOne(nil) }
            object._committedRelationships = nil
        }
        registered.removeAll()
        clearPendingChanges()
    }

    /// Reloads an object's saved values.
    ///
    /// With `mergeChanges` false, unsaved changes are discarded and the object becomes a fault
    /// that loads the latest saved values when next read. With `mergeChanges` true, the latest
    /// saved values are loaded now and the object's unsaved changes are kept on top of them.
    /// New (inserted) objects are left as they are.
    ///
    /// The next `objectsDidChange` lists the object in ``ContextNotification/refreshedObjects``.
    ///
    /// For example:
    ///
    /// ```swift
    /// context.refresh(movie, mergeChanges: false)   // unsaved edits gone; reloads when next read
    /// context.refresh(movie, mergeChanges: true)    // reloads now, keeps unsaved edits on top
    /// ```
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.context === self, !object._isInserted, !object.objectID.isTemporaryID else { return }
        refreshValues(of: object, mergeChanges: mergeChanges)
        recordRefresh(object)
    }

    /// Reloads an object's saved values without announcing it (merges announce their own).
    func refreshValues(of object: ManagedObject, mergeChanges: Bool) {
        guard object.context === self, !object._isInserted, !object.objectID.isTemporaryID else { return }
        let key = ObjectIdentifier(object)
        guard mergeChanges else {
            unsaved.removeChange(of: key)
            unsaved.removeDeletion(of: key)
            object._isDeleted = false
            object._values = object.entity.defaultValues
            object._relationships = object.entity.toManyFlags.map { $0 ? .toManyFault : .toOne(nil) }
            object._committedValues = nil
            object._committedRelationships = nil
            object._isFault = true
            return
        }
        guard let row = (try? storedRow(for: object.objectID)) ?? nil else { return }
        let localValues = object._values
        let localRelationships = object._relationships
        let oldCommitted = object._committedValues
        let oldCommittedRelationships = object._committedRelationships
        let wasFault = object._isFault
        apply(row, to: object)
        guard !wasFault, let oldCommitted else { return }
        for index in object._values.indices where localValues[index] != oldCommitted[index] {
            object._values[index] = localValues[index]
        }
        for index in object._relationships.indices {
            guard let old = oldCommittedRelationships?[index] else { continue }
            let local = localRelationships[index]
            if !local.isSame(as: old, ordered: true) { object._relationships[index] = local }
        }
        unsaved.updateChange(of: object)
    }

    /// Refreshes every registered object, keeping unsaved changes.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.execute(BatchUpdateRequest(entity: Movie.self, propertiesToUpdate: ["rating": 0.0]))
    /// context.refreshAllObjects()   // loaded movies show the new ratings
    /// ```
    public func refreshAllObjects() {
        for object in Array(registered.values) { refresh(object, mergeChanges: true) }
    }
}
