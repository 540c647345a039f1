/// One save of a context's changes, as the named steps it goes through: collect the objects
/// to write, validate them, resolve conflicts by the merge policy and build one change set per
/// store, write, and make the result the objects' committed state. (A child context's save
/// pushes its changes to its parent instead of writing.)
///
/// ``ObjectContext/save()`` makes one per save and runs the steps in order. The steps share
/// the operation's state (the objects being saved) instead of passing it along, and change the
/// context only through its parts: the identity map (new IDs, deleted objects leave), the
/// change tracker (cleared) and its child contexts (new IDs).
struct SaveOperation {
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

    /// The context being saved.
    let context: ObjectContext
    /// The objects the save writes. Conflict resolution can change the set (an insertion that
    /// becomes an update of the stored object); ``prepareChangeSets()`` collects it again.
    private(set) var objects: ObjectsToSave

    /// Collects the context's unsaved changes.
    init(context: ObjectContext) {
        self.context = context
        self.objects = Self.objectsToSave(in: context)
    }

    /// The context's unsaved changes, as one save writes them.
    private static func objectsToSave(in context: ObjectContext) -> ObjectsToSave {
        ObjectsToSave(
            inserted: context.unsaved.insertedObjects,
            updated: context.changed.values.filter { $0.isUpdated && !$0._isDeleted }.sorted(by: Self.stableOrder),
            deleted: context.deleted.values.sorted(by: Self.stableOrder))
    }

    /// Validates every object the save writes and checks deny delete rules; every failure is
    /// reported in one ``StrataError/Code/validationFailed`` error, before anything is written.
    func validate() throws {
        var failures: [StrataError] = []
        for object in objects.inserted + objects.updated {
            if context.validatesObjectsOnSave { failures += object.validationFailures() }
            failures += relationshipFailures(of: object)
        }
        for object in objects.deleted {
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .deny
            {
                let remaining = object.relationshipValue(at: index).objects.filter {
                    !$0._isDeleted && $0.context === context
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
                "The save was refused: " + StrataError.summary(of: failures), details: failures)
        }
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
                } else if target.context !== context {
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

    /// Resolves conflicts with the stores by the merge policy, then builds one change set per
    /// store from ``objects`` as they stand after the resolution (which it updates).
    private mutating func prepareChangeSets() throws -> [(store: any PersistentStore, changes: StoreChangeSet)] {
        var resolvedConflicts = false
        if context.mergePolicy != .error {
            resolvedConflicts = try context.resolveConstraintConflicts(inserted: objects.inserted, updated: objects.updated)
        }
        if try context.resolveVersionConflicts(updated: objects.updated, deleted: objects.deleted) {
            resolvedConflicts = true
        }
        // A resolved conflict can drop, revert or adopt objects: collect them again then.
        if resolvedConflicts { objects = Self.objectsToSave(in: context) }

        // One change set per store, mutated in place: a copy per object would make a large save
        // quadratic.
        var changeSets: [(store: any PersistentStore, changes: StoreChangeSet)] = []
        var changeSetIndex: [ObjectIdentifier: Int] = [:]
        var lastEntity: Entity?
        var lastIndex = 0
        func add(_ object: ManagedObject, _ body: (inout StoreChangeSet) -> Void) throws {
            if object.entity !== lastEntity {
                let store = try context.store(forEntity: object.entity)
                let key = ObjectIdentifier(store)
                if let index = changeSetIndex[key] {
                    lastIndex = index
                } else {
                    var changes = StoreChangeSet()
                    changes.author = context.transactionAuthor?.name
                    changes.contextName = context.name
                    changes.origin = ObjectIdentifier(context)
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
    mutating func write() throws -> StoreSaveResult {
        if context.mergePolicy != .error, let store = try onlyStore(of: objects.all) {
            return try store.save(preparedBy: {
                try prepareChangeSets().first?.changes ?? StoreChangeSet()
            })
        }
        var results = StoreSaveResult()
        var attempt = 0
        saving: while true {
            attempt += 1
            let changeSets = try prepareChangeSets()
            for (number, (store, changes)) in changeSets.enumerated() {
                let result: StoreSaveResult
                do {
                    result = try store.save(changes)
                } catch let error as StrataError
                    where error.code == .constraintConflict && context.mergePolicy == .error
                {
                    try context.resolveConstraintConflicts(inserted: objects.inserted, updated: objects.updated)
                    throw error
                } catch let error as StrataError
                    where context.mergePolicy != .error && number == 0 && attempt < ObjectContext.maximumSaveAttempts
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

    /// The one store that holds every object of `objects`, or `nil` when they span stores.
    private func onlyStore(of objects: [ManagedObject]) throws -> (any PersistentStore)? {
        var found: (any PersistentStore)?
        var seen: Set<ObjectIdentifier> = []
        for object in objects where seen.insert(ObjectIdentifier(object.entity)).inserted {
            let store = try context.store(forEntity: object.entity)
            if let found, found !== store { return nil }
            found = store
        }
        return found
    }

    /// The stores have the changes: makes them the objects' committed state, gives new objects
    /// their permanent IDs (here and in child contexts), and forgets deleted objects.
    func apply(_ results: StoreSaveResult) {
        for object in objects.inserted {
            guard let permanent = results.permanentIDs[object.objectID] else { continue }
            context.registered.changeID(of: object, to: permanent)
            object._version = results.versions[permanent] ?? 1
            object.commitValues(notifyingContext: false)  // clearPendingChanges() below
        }
        for object in objects.updated {
            object._version = results.versions[object.objectID] ?? object._version
            object.commitValues(notifyingContext: false)
        }
        for object in objects.deleted {
            context.registered[object.objectID] = nil
            object._isDeleted = false
            object._wasDeletedAndSaved = true
            object.context = nil
        }
        context.clearPendingChanges()
        for child in context.children {
            child.context?.adoptPermanentIDs(results.permanentIDs, versions: results.versions)
        }
    }

    /// A child context's save: its changes become unsaved changes of the parent.
    func push(to parent: ObjectContext) throws {
        let (insertedObjects, updatedObjects, deletedObjects) = (objects.inserted, objects.updated, objects.deleted)
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
            context.registered[object.objectID] = nil
            object._isDeleted = false
            object.context = nil
        }
        context.clearPendingChanges()
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
}
