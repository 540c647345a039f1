import Foundation

extension ObjectContext {
    // MARK: Uniqueness constraints

    /// One group of objects that share the values of a uniqueness constraint.
    private struct ConstraintConflict {
        var entity: Entity
        var constraint: [String]
        var values: [String: AttributeValue]
        var objects: [ManagedObject]
        var storedRow: StoreRow?
    }

    /// Finds objects of this save that would break a uniqueness constraint, against the store or
    /// against each other, and resolves them by the merge policy (or reports them all).
    /// Returns whether it resolved any.
    @discardableResult
    func resolveConstraintConflicts(inserted: [ManagedObject], updated: [ManagedObject]) throws -> Bool {
        var conflicts: [ConstraintConflict] = []
        var inMemory: [String: ConstraintConflict] = [:]
        var inMemoryOrder: [String] = []
        for object in inserted + updated {
            for constraint in object.entity.uniquenessConstraints {
                // A constraint with a missing value never conflicts (SQL unique indexes treat
                // NULLs as distinct).
                guard let values = constraintValues(of: object, constraint), !values.values.contains(where: \.isNull),
                    let scope = declaringEntity(of: constraint, in: object.entity)
                else { continue }
                if object._isInserted == false, let committed = object._committedValues,
                    constraint.allSatisfy({ name in
                        object.entity.attributeNumber(named: name).map { committed[$0] == object._values[$0] } ?? true
                    })
                {
                    continue  // a saved object whose constrained values did not change
                }
                let key = scope.name + "|" + constraint.joined(separator: ",") + "|" + values.sorted(by: { $0.key < $1.key }).map { "\($0.value)" }.joined(separator: "|")
                if var group = inMemory[key] {
                    group.objects.append(object)
                    inMemory[key] = group
                } else {
                    inMemory[key] = ConstraintConflict(entity: scope, constraint: constraint, values: values, objects: [object])
                    inMemoryOrder.append(key)
                }
            }
        }
        for key in inMemoryOrder {
            guard var group = inMemory[key] else { continue }
            let store = try self.store(forEntity: group.entity)
            let rows = try store.fetch(StoreFetchRequest(entityName: group.entity.name, matching: group.values))
            group.storedRow = rows.first { row in
                if group.objects.contains(where: { $0.objectID == row.objectID }) { return false }
                guard let registered = registered[row.objectID] else { return true }
                if registered._isDeleted { return false }
                // A registered object whose constrained values changed in memory no longer conflicts.
                return constraintValues(of: registered, group.constraint) == group.values || registered._isFault
            }
            if group.storedRow != nil || group.objects.count > 1 { conflicts.append(group) }
        }
        guard !conflicts.isEmpty else { return false }
        guard mergePolicy != .error else {
            let details = conflicts.map { conflict -> StrataError in
                let values = conflict.constraint.map { "\($0) = \(conflict.values[$0] ?? .null)" }.joined(separator: ", ")
                var others = conflict.objects.map(\.objectID.description)
                if let row = conflict.storedRow { others.append("\(row.objectID) (saved)") }
                return StrataError(
                    .constraintConflict,
                    "\(conflict.entity.name) objects must be unique by (\(conflict.constraint.joined(separator: ", "))), but \(others.joined(separator: ", ")) all have \(values).",
                    entityName: conflict.entity.name, propertyName: conflict.constraint.joined(separator: ","),
                    objectID: conflict.objects.first?.objectID)
            }
            throw StrataError(
                .constraintConflict,
                "The save was refused: " + StrataError.summary(of: details)
                    + " Change the values, or set a merge policy such as .mergeByPropertyObjectTrump to update the existing object.",
                details: details)
        }
        for conflict in conflicts { try resolve(conflict) }
        return true
    }

    private func resolve(_ conflict: ConstraintConflict) throws {
        var objects = conflict.objects
        // Among duplicates in memory, one survives: the latest for policies where the object
        // wins, the earliest where the store wins.
        let keepsLatest = mergePolicy == .mergeByPropertyObjectTrump || mergePolicy == .overwrite
        let survivor = keepsLatest ? objects.removeLast() : objects.removeFirst()
        for duplicate in objects where duplicate !== survivor {
            if duplicate._isInserted {
                delete(duplicate)
            } else {
                duplicate.revertValues()
            }
        }
        guard let row = conflict.storedRow, survivor._isInserted else { return }
        adopt(row, into: survivor)
    }

    /// Turns a new object into the saved object `row` describes, merging by the merge policy.
    private func adopt(_ row: StoreRow, into object: ManagedObject) {
        let key = ObjectIdentifier(object)
        let newValues = object._values
        let newRelationships = object._relationships
        unsaved.removeInsertion(of: key)
        registered[object.objectID] = nil
        object._isInserted = false
        // The saved object's instance: the one the context already holds (which then receives
        // the new object's values, so references to it stay valid), or the new object itself.
        let target: ManagedObject
        if let existing = registered[row.objectID], existing !== object, !existing._isDeleted {
            if existing._isFault { apply(row, to: existing) }
            target = existing
        } else {
            registered.changeID(of: object, to: row.objectID)
            apply(row, to: object)
            target = object
        }
        switch mergePolicy {
        case .mergeByPropertyObjectTrump:
            // The new object's set values win; what it left at the defaults keeps the stored value.
            for (index, attribute) in target.entity.attributes.enumerated() where newValues[index] != attribute.defaultValue {
                target._values[index] = newValues[index]
            }
            for (index, value) in newRelationships.enumerated() where !value.objects.isEmpty {
                target.setRelationship(value, at: index)
            }
        case .overwrite:
            target._values = newValues
            for (index, value) in newRelationships.enumerated() { target.setRelationship(value, at: index) }
        case .mergeByPropertyStoreTrump, .rollback, .error:
            // The stored values stay; objects the new one was related to are kept related.
            guard target !== object else { break }
            for (index, value) in newRelationships.enumerated() {
                switch (value, target.relationshipValue(at: index)) {
                case (.toOne(let new?), .toOne(nil)):
                    target.setRelationship(.toOne(new), at: index)
                case (.toMany(let new), .toMany(let current)) where !new.isEmpty:
                    let missing = new.filter { candidate in !current.contains { $0 === candidate } }
                    if !missing.isEmpty { target.setRelationship(.toMany(current + missing), at: index) }
                default:
                    continue
                }
            }
        }
        if target !== object { object.context = nil }
        if target.hasChangedProperties { unsaved.recordChange(of: target) }
    }

    private func constraintValues(of object: ManagedObject, _ constraint: [String]) -> [String: AttributeValue]? {
        var values: [String: AttributeValue] = [:]
        for name in constraint {
            if let number = object.entity.attributeNumber(named: name) {
                values[name] = object._values[number]
            } else if let number = object.entity.relationshipNumber(named: name) {
                guard case .toOne(let target) = object._relationships[number] else { return nil }
                guard let target else {
                    values[name] = .null
                    continue
                }
                guard let key = target.objectID.primaryKey else { return nil }  // a new target cannot clash with the store
                values[name] = .integer(key)
            }
        }
        return values
    }

    private func declaringEntity(of constraint: [String], in entity: Entity) -> Entity? {
        var current: Entity? = entity
        var declaring: Entity?
        while let candidate = current {
            if candidate.declaration.uniquenessConstraints.contains(constraint) { declaring = candidate }
            current = candidate.superentity
        }
        return declaring
    }

    // MARK: Optimistic locking

    /// Finds updated and deleted objects that another context saved since this one loaded them,
    /// and resolves them by the merge policy. With ``MergePolicy/error`` the store reports them.
    /// Returns whether it resolved any (merged, reverted or dropped an object).
    func resolveVersionConflicts(updated: [ManagedObject], deleted: [ManagedObject]) throws -> Bool {
        guard mergePolicy != .error else { return false }
        var resolvedAny = false
        let candidates = (updated + deleted).filter { !$0.objectID.isTemporaryID }
        let byEntity = Dictionary(grouping: candidates, by: { $0.entity.name })
        for (entityName, objects) in byEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entity(named: entityName) else { continue }
            let store = try self.store(forEntity: entity)
            let rows = try store.fetch(
                FetchPlan(
                    entity: entity, includesSubentities: false, primaryKeys: objects.compactMap(\.objectID.primaryKey)))
            let rowsByID = Dictionary(rows.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
            for object in objects {
                guard let row = rowsByID[object.objectID] else {
                    resolvedAny = true
                    // Deleted elsewhere: the deletion stands unless this context overwrites.
                    if object._isDeleted {
                        deletedWithoutStore(object)
                        continue
                    }
                    if mergePolicy == .overwrite || mergePolicy == .mergeByPropertyObjectTrump { continue }  // the store reports it
                    unsaved.removeChange(of: ObjectIdentifier(object))
                    object.revertValues()
                    continue
                }
                guard row.version != object._version else { continue }
                resolvedAny = true
                merge(row, into: object)
            }
        }
        return resolvedAny
    }

    private func deletedWithoutStore(_ object: ManagedObject) {
        unsaved.removeDeletion(of: ObjectIdentifier(object))
        registered[object.objectID] = nil
        object._isDeleted = false
        object.context = nil
    }

    /// Merges a newer stored state into an object that changed here.
    private func merge(_ row: StoreRow, into object: ManagedObject) {
        let local = object._values
        let localRelationships = object._relationships
        let committed = object._committedValues ?? local
        let committedRelationships = object._committedRelationships ?? localRelationships
        let wasDeleted = object._isDeleted
        apply(row, to: object)  // values and committed state become the store's
        switch mergePolicy {
        case .mergeByPropertyObjectTrump:
            for index in local.indices where local[index] != committed[index] { object._values[index] = local[index] }
            for index in localRelationships.indices
            where !localRelationships[index].isSame(as: committedRelationships[index], ordered: true) {
                object._relationships[index] = localRelationships[index]
            }
        case .mergeByPropertyStoreTrump:
            for index in local.indices where local[index] != committed[index] && row.attributes[index] == committed[index] {
                object._values[index] = local[index]
            }
            for index in localRelationships.indices
            where !localRelationships[index].isSame(as: committedRelationships[index], ordered: true) {
                if case .toOne(let old) = committedRelationships[index], index < row.toOne.count, row.toOne[index] != old?.objectID {
                    continue  // changed in the store too: the store's value stays
                }
                object._relationships[index] = localRelationships[index]
            }
        case .overwrite:
            object._values = local
            object._relationships = localRelationships
        case .rollback, .error:
            if wasDeleted { revive(object) }
        }
        unsaved.updateChange(of: object)
    }

    /// Undoes a deletion: the object, and the objects its deletion cascaded to, are no longer
    /// deleted, and the objects they were removed from by nullify rules get them back.
    private func revive(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        guard unsaved.removeDeletion(of: key) != nil else { return }
        object._isDeleted = false
        for (index, relationship) in object.entity.relationships.enumerated() {
            guard let inverse = relationship.inverseName else { continue }
            for target in object.relationshipValue(at: index).objects where !target._isDeleted {
                target.addInverse(inverse, pointingTo: object)
            }
        }
        for (child, origin) in cascadeOrigins where origin == key {
            guard let cascaded = deleted[child] else { continue }
            cascaded.revertValues()
            revive(cascaded)
        }
    }
}
