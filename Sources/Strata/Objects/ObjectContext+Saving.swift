import Foundation

extension ObjectContext {
    /// How often a save resolves conflicts and writes again when other writers keep committing
    /// between its look at the store and its write.
    static let maximumSaveAttempts = 100

    /// The one store that holds every object of `objects`, or `nil` when they span stores.
    private func onlyStore(of objects: [ManagedObject]) throws -> (any PersistentStore)? {
        var found: (any PersistentStore)?
        var seen: Set<ObjectIdentifier> = []
        for object in objects where seen.insert(ObjectIdentifier(object.entity)).inserted {
            let store = try self.store(forEntity: object.entity)
            if let found, found !== store { return nil }
            found = store
        }
        return found
    }

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
        guard parent != nil || container != nil else {
            throw StrataError(.noStore, "This context has no stores to save to; create it with a PersistentContainer.")
        }
        try container?.checkOpen()
        var objects = objectsToSave()
        try validateForSave(objects)
        if let parent {
            try pushChanges(to: parent, inserted: objects.inserted, updated: objects.updated, deleted: objects.deleted)
            postDidSave(inserted: objects.inserted, updated: objects.updated, deleted: objects.deleted)
            return
        }
        let results = try writeToStores(&objects)
        applySaveResult(results, to: objects)
        postDidSave(inserted: objects.inserted, updated: objects.updated, deleted: objects.deleted)
    }

    /// The objects one save writes, in the order it writes them.
    struct ObjectsToSave {
        /// New objects, in insertion order.
        var inserted: [ManagedObject]
        /// Saved objects with changes to write, in primary-key order.
        var updated: [ManagedObject]
        /// Saved objects to delete, in primary-key order.
        var deleted: [ManagedObject]

        var all: [ManagedObject] { inserted + updated + deleted }
    }

    /// The context's unsaved changes, as one save writes them.
    private func objectsToSave() -> ObjectsToSave {
        ObjectsToSave(
            inserted: unsaved.insertedObjects,
            updated: changed.values.filter { $0.isUpdated && !$0._isDeleted }.sorted(by: Self.stableOrder),
            deleted: deleted.values.sorted(by: Self.stableOrder))
    }

    /// Throws the errors that could not be thrown where they happened (a relationship set across
    /// contexts, say), once.
    private func throwPendingErrors() throws {
        guard !pendingErrors.isEmpty else { return }
        let errors = pendingErrors
        pendingErrors.removeAll()
        throw StrataError(
            .validationFailed, "The save was refused: " + errors.map(\.message).joined(separator: " "), details: errors)
    }

    /// Validates every object the save writes and checks deny delete rules; every failure is
    /// reported in one ``StrataError/Code/validationFailed`` error, before anything is written.
    private func validateForSave(_ objects: ObjectsToSave) throws {
        var failures: [StrataError] = []
        for object in objects.inserted + objects.updated {
            failures += object.validationFailures()
            failures += relationshipFailures(of: object)
        }
        for object in objects.deleted {
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .deny
            {
                let remaining = object.relationshipValue(at: index).objects.filter {
                    !$0._isDeleted && $0.context === self
                }
                guard !remaining.isEmpty else { continue }
                failures.append(
                    StrataError(
                        .deleteDenied,
                        "\(object.entity.name).\(relationship.name) denies deleting \(object.objectID) while it holds \(remaining.count) \(relationship.destinationEntityName) object(s).",
                        entityName: object.entity.name, propertyName: relationship.name, objectID: object.objectID))
            }
        }
        guard failures.isEmpty else {
            throw StrataError(
                .validationFailed,
                "The save was refused: " + failures.map(\.message).joined(separator: " "), details: failures)
        }

    }

    /// Resolves conflicts with the stores by the merge policy, then builds one change set per
    /// store from `objects` as they stand after the resolution (which it updates).
    private func prepareChangeSets(
        _ objects: inout ObjectsToSave
    ) throws -> [(store: any PersistentStore, changes: StoreChangeSet)] {
        if mergePolicy != .error {
            try resolveConstraintConflicts(inserted: objects.inserted, updated: objects.updated)
        }
        try resolveVersionConflicts(updated: objects.updated, deleted: objects.deleted)
        objects = objectsToSave()

        // One change set per store, mutated in place: a copy per object would make a large save
        // quadratic.
        var changeSets: [(store: any PersistentStore, changes: StoreChangeSet)] = []
        var changeSetIndex: [ObjectIdentifier: Int] = [:]
        var lastEntity: Entity?
        var lastIndex = 0
        func add(_ object: ManagedObject, _ body: (inout StoreChangeSet) -> Void) throws {
            if object.entity !== lastEntity {
                let store = try self.store(forEntity: object.entity)
                let key = ObjectIdentifier(store)
                if let index = changeSetIndex[key] {
                    lastIndex = index
                } else {
                    var changes = StoreChangeSet()
                    changes.author = transactionAuthor
                    changes.contextName = name
                    changes.origin = ObjectIdentifier(self)
                    lastIndex = changeSets.count
                    changeSetIndex[key] = lastIndex
                    changeSets.append((store, changes))
                }
                lastEntity = object.entity
            }
            body(&changeSets[lastIndex].changes)
        }
        for object in objects.inserted {
            let insert = StoreChangeSet.Insert(
                objectID: object.objectID, attributes: object._values,
                toOne: object._relationships.map { value in
                    if case .toOne(let target) = value { return target?.objectID }
                    return nil
                })
            let toMany = toManyUpdates(of: object, comparedWith: nil)
            try add(object) { changes in
                changes.inserts.append(insert)
                changes.toManyUpdates += toMany
            }
        }
        for object in objects.updated {
            guard let committed = object._committedValues else { continue }
            var attributes: [Int: AttributeValue] = [:]
            for (index, attribute) in object.entity.attributes.enumerated()
            where !attribute.isTransient && object._values[index] != committed[index] {
                attributes[index] = object._values[index]
            }
            var toOne: [Int: ObjectID?] = [:]
            for (index, value) in object._relationships.enumerated() {
                guard case .toOne(let target) = value else { continue }
                if case .toOne(let old)? = object._committedRelationships?[index], old === target { continue }
                toOne[index] = .some(target?.objectID)  // `= nil` would remove the key and lose the change
            }
            let toMany = toManyUpdates(of: object, comparedWith: object._committedRelationships)
            guard !attributes.isEmpty || !toOne.isEmpty || !toMany.isEmpty else { continue }
            let update = StoreChangeSet.Update(
                objectID: object.objectID, expectedVersion: object._version, attributes: attributes, toOne: toOne)
            try add(object) { changes in
                changes.updates.append(update)
                changes.toManyUpdates += toMany
            }
        }
        for object in objects.deleted {
            let version = object._version
            try add(object) { $0.deletes.append((object.objectID, version)) }
        }

        return changeSets
    }

    /// Writes the change sets to the stores, resolving conflicts by the merge policy.
    ///
    /// With ``MergePolicy/error`` the stores detect conflicts (no lookups on the way), and a
    /// constraint conflict is then explained in detail. Other policies look the conflicts up and
    /// resolve them before writing. When one store takes the whole save, it runs the look-up
    /// inside its write transaction, so that no other writer can commit in between. A save that
    /// spans stores (atomic per store only, as in Core Data) looks up first, and when another
    /// writer commits in between and the first store refuses the save, it looks again and
    /// retries.
    private func writeToStores(_ objects: inout ObjectsToSave) throws -> StoreSaveResult {
        if mergePolicy != .error, let store = try onlyStore(of: objects.all) {
            return try store.save(preparedBy: {
                try prepareChangeSets(&objects).first?.changes ?? StoreChangeSet()
            })
        }
        var results = StoreSaveResult()
        var attempt = 0
        saving: while true {
            attempt += 1
            let changeSets = try prepareChangeSets(&objects)
            for (number, (store, changes)) in changeSets.enumerated() {
                let result: StoreSaveResult
                do {
                    result = try store.save(changes)
                } catch let error as StrataError where error.code == .constraintConflict && mergePolicy == .error {
                    try resolveConstraintConflicts(inserted: objects.inserted, updated: objects.updated)
                    throw error
                } catch let error as StrataError
                    where mergePolicy != .error && number == 0 && attempt < Self.maximumSaveAttempts
                    && (error.code == .optimisticLockingFailure || error.code == .constraintConflict)
                {
                    continue saving
                }
                if results.permanentIDs.isEmpty && results.versions.isEmpty {
                    results = result  // the usual single store: no copy
                } else {
                    results.permanentIDs.merge(result.permanentIDs) { _, new in new }
                    results.versions.merge(result.versions) { _, new in new }
                }
            }
            return results
        }
    }

    /// The stores have the changes: makes them the objects' committed state, gives new objects
    /// their permanent IDs (here and in child contexts), and forgets deleted objects.
    private func applySaveResult(_ results: StoreSaveResult, to objects: ObjectsToSave) {
        for object in objects.inserted {
            guard let permanent = results.permanentIDs[object.objectID] else { continue }
            registered.changeID(of: object, to: permanent)
            object._version = results.versions[permanent] ?? 1
            object.commitValues(notifyingContext: false)  // clearPendingChanges() below
        }
        for object in objects.updated {
            object._version = results.versions[object.objectID] ?? object._version
            object.commitValues(notifyingContext: false)
        }
        for object in objects.deleted {
            registered[object.objectID] = nil
            object._isDeleted = false
            object._wasDeletedAndSaved = true
            object.context = nil
        }
        clearPendingChanges()
        for child in children { child.context?.adoptPermanentIDs(results.permanentIDs, versions: results.versions) }
    }

    /// Relationships that point at objects this save cannot write: objects of another context
    /// and objects whose deletion was already saved.
    private func relationshipFailures(of object: ManagedObject) -> [StrataError] {
        var failures: [StrataError] = []
        for (index, relationship) in object.entity.relationships.enumerated() {
            for target in object._relationships[index].objects {
                if target._wasDeletedAndSaved {
                    failures.append(
                        StrataError(
                            .objectDeleted,
                            "\(object.entity.name).\(relationship.name) points at \(target.objectID), which was deleted.",
                            entityName: object.entity.name, propertyName: relationship.name, objectID: object.objectID))
                } else if target.context !== self {
                    failures.append(
                        StrataError(
                            .wrongContext,
                            "\(object.entity.name).\(relationship.name) points at \(target.objectID), an object of another context (or of none). Relate objects of one context; look the object up here with existingObject(with:).",
                            entityName: object.entity.name, propertyName: relationship.name, objectID: object.objectID))
                }
            }
        }
        return failures
    }

    /// A child context's save: its changes become unsaved changes of the parent.
    private func pushChanges(
        to parent: ObjectContext, inserted insertedObjects: [ManagedObject], updated updatedObjects: [ManagedObject],
        deleted deletedObjects: [ManagedObject]
    ) throws {
        // Find every object the push touches before changing the parent, so that a failure
        // leaves the parent as it was.
        var counterparts: [ObjectIdentifier: ManagedObject] = [:]
        for object in updatedObjects {
            counterparts[ObjectIdentifier(object)] = try parent.existingObject(with: object.objectID)
        }
        let deletedCounterparts = try deletedObjects.map { try parent.object(with: $0.objectID) }
        let pushed = Set((insertedObjects + updatedObjects).map(ObjectIdentifier.init))
        for object in insertedObjects + updatedObjects {
            for value in object._relationships {
                for target in value.objects where !pushed.contains(ObjectIdentifier(target)) {
                    _ = try parent.object(with: target.objectID)
                }
            }
        }
        // New objects first, so that relationships can point at them.
        for object in insertedObjects {
            let type = (object.entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
            let copy = type.init(_storedEntity: object.entity)
            copy.objectID = object.objectID
            copy._values = object._values
            copy._relationships = object.entity.toManyFlags.map { $0 ? .toMany([]) : .toOne(nil) }
            parent.insertCopy(copy)
            counterparts[ObjectIdentifier(object)] = copy
        }
        for object in updatedObjects {
            guard let copy = counterparts[ObjectIdentifier(object)] else { continue }
            if let committed = object._committedValues {
                for index in object._values.indices where object._values[index] != committed[index] {
                    copy._setStoredValue(object._values[index], at: index)
                }
            }
        }
        func counterpart(_ object: ManagedObject) throws -> ManagedObject {
            if let copy = counterparts[ObjectIdentifier(object)] { return copy }
            return try parent.object(with: object.objectID)
        }
        for object in insertedObjects + updatedObjects {
            guard let copy = counterparts[ObjectIdentifier(object)] else { continue }
            for (index, relationship) in object.entity.relationships.enumerated() {
                let current = object._relationships[index]
                if current.isFault { continue }
                if let committed = object._committedRelationships?[index],
                    committed.isSame(as: current, ordered: relationship.isOrdered)
                {
                    continue
                }
                switch current {
                case .toOne(let target):
                    copy.setRelationship(.toOne(try target.map(counterpart)), at: index)
                case .toMany(let targets):
                    copy.setRelationship(.toMany(try targets.map(counterpart)), at: index)
                case .toManyFault:
                    continue
                }
            }
        }
        for copy in deletedCounterparts { parent.delete(copy) }
        // The parent has the changes: they are this context's committed state now.
        for object in insertedObjects + updatedObjects { object.commitValues() }
        for object in deletedObjects {
            registered[object.objectID] = nil
            object._isDeleted = false
            object.context = nil
        }
        clearPendingChanges()
    }

    /// The to-many relationships of an object whose contents changed (all non-empty ones for a
    /// new object).
    private func toManyUpdates(of object: ManagedObject, comparedWith committed: [RelationshipValue]?)
        -> [StoreChangeSet.ToManyUpdate]
    {
        var updates: [StoreChangeSet.ToManyUpdate] = []
        for (index, relationship) in object.entity.relationships.enumerated() where relationship.isToMany {
            let current = object._relationships[index]
            guard case .toMany(let objects) = current else { continue }
            if let committed {
                if committed[index].isSame(as: current, ordered: relationship.isOrdered) { continue }
            } else if objects.isEmpty {
                continue
            }
            updates.append(
                StoreChangeSet.ToManyUpdate(
                    objectID: object.objectID, relationshipNumber: index, targets: objects.map(\.objectID)))
        }
        return updates
    }

    private static func stableOrder(_ a: ManagedObject, _ b: ManagedObject) -> Bool {
        (a.objectID.primaryKey ?? 0, a.objectID.entityName) < (b.objectID.primaryKey ?? 0, b.objectID.entityName)
    }

    /// Forgets the inserted, changed and deleted sets (after a save, rollback or reset).
    private func clearPendingChanges() {
        observers.clearPendingChanges()
        unsaved.removeAll()
    }

    /// Gives new objects their permanent IDs now, before they are saved.
    ///
    /// Use it to hand an ID to another context or to archive it before saving. The objects stay
    /// inserted; saving them later keeps these IDs.
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
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
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
    public func refreshAllObjects() {
        for object in Array(registered.values) { refresh(object, mergeChanges: true) }
    }
}
