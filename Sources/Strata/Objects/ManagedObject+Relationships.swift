// Keeping both sides of a relationship in step in memory, as Core Data does: setting
// `movie.director = person` also adds the movie to `person.movies`, and takes it out of the
// previous director's.
extension ManagedObject {
    final func setRelationship(_ newValue: RelationshipValue, at index: Int) {
        if _isFault { _fireFault() }
        let oldValue = relationshipValue(at: index)
        let relationship = entity.relationships[index]
        if oldValue.isSame(as: newValue, ordered: true) { return }
        _relationships[index] = newValue
        context?.objectDidChange(self)

        let oldObjects = oldValue.objects
        let newObjects = newValue.objects
        if let context {
            // New objects that are in no context join this one; saved objects that lost their
            // context are not inserted again (a save reports them as belonging elsewhere).
            for object in newObjects where object.context == nil && object.isNew { context.insert(object) }
        }
        guard let inverseName = relationship.inverseName else { return }
        // The inverse will make an object of a context point at this one: join that context,
        // as an object related the other way round would.
        if context == nil, let other = newObjects.lazy.compactMap(\.context).first {
            other.insert(self)
        }
        // To-one changes (one object on each side at most) need no sets.
        let oldIDs = oldObjects.count > 1 ? Set(oldObjects.map(ObjectIdentifier.init)) : nil
        let newIDs = newObjects.count > 1 ? Set(newObjects.map(ObjectIdentifier.init)) : nil
        for removed in oldObjects
        where !(newIDs?.contains(ObjectIdentifier(removed)) ?? newObjects.contains { $0 === removed }) {
            removed.removeInverse(inverseName, pointingTo: self)
        }
        for added in newObjects
        where !(oldIDs?.contains(ObjectIdentifier(added)) ?? oldObjects.contains { $0 === added }) {
            added.addInverse(inverseName, pointingTo: self)
        }
    }

    /// Removes `object` from this object's relationship `name`, without touching `object`.
    func removeInverse(_ name: String, pointingTo object: ManagedObject) {
        guard let index = entity.relationshipNumber(named: name) else { return }
        switch relationshipValue(at: index) {
        case .toOne(let current) where current === object:
            _relationships[index] = .toOne(nil)
        case .toMany(var objects):
            guard let position = objects.firstIndex(where: { $0 === object }) else { return }
            _relationships[index] = .toManyFault  // no copy of the array (see addInverse)
            objects.remove(at: position)
            _relationships[index] = .toMany(objects)
        default:
            return
        }
        context?.objectDidChange(self)
    }

    /// Adds `object` to this object's relationship `name`; for a to-one, the previous target
    /// loses this object from its side.
    func addInverse(_ name: String, pointingTo object: ManagedObject) {
        guard let index = entity.relationshipNumber(named: name) else { return }
        switch relationshipValue(at: index) {
        case .toOne(let current):
            if current === object { return }
            _relationships[index] = .toOne(object)
            if let current, let back = entity.relationships[index].inverseName {
                current.removeInverse(back, pointingTo: self)
            }
        case .toMany(var objects):
            if objects.contains(where: { $0 === object }) { return }
            // Release the stored array first, so that the append below does not copy it (and
            // retain every element): building a to-many side one object at a time stays linear.
            _relationships[index] = .toManyFault
            objects.append(object)
            _relationships[index] = .toMany(objects)
        case .toManyFault:
            return  // relationshipValue(at:) never returns a fault
        }
        context?.objectDidChange(self)
    }
}
