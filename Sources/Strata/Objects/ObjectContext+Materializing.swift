import Foundation

/// Object materialization: how rows from a store (or a parent context's objects) become the
/// objects of this context.
///
/// Every object the context hands out is registered in its ``IdentityMap`` under its ID, so a
/// row is one instance for as long as anyone holds it. A row's object is the registered one
/// (filled in from the row when it is a fault) or a new one; a fault is filled in from its
/// store the first time one of its values is read.
extension ObjectContext {
    /// A new fault for a stored object, registered under its ID.
    func makeFault(for objectID: ObjectID, entity: Entity) -> ManagedObject {
        let object = newFault(for: objectID, entity: entity)
        registered[objectID] = object
        return object
    }

    /// A new fault of this context, not registered yet.
    private func newFault(for objectID: ObjectID, entity: Entity) -> ManagedObject {
        let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
        let object = type.init(_storedEntity: entity, objectID: objectID)
        object.context = self
        object._isFault = true
        return object
    }

    /// This (child) context's instance of a parent's object, filled in with the parent's
    /// current state the first time.
    func adopt(_ source: ManagedObject) -> ManagedObject {
        let object = registered[source.objectID] ?? makeFault(for: source.objectID, entity: source.entity)
        if object._isFault { copyState(of: source, to: object) }
        return object
    }

    /// Makes a parent object's current state (its unsaved changes included) this object's
    /// committed state.
    func copyState(of source: ManagedObject, to object: ManagedObject) {
        if source._isFault { source._fireFault() }
        var relationships: [RelationshipValue] = []
        for (index, relationship) in object.entity.relationships.enumerated() {
            if relationship.isToMany {
                relationships.append(.toManyFault)
            } else {
                let target = source.relationshipValue(at: index).objects.first
                relationships.append(.toOne(target.flatMap { try? self.object(with: $0.objectID) }))
            }
        }
        object._values = source._values
        object._committedValues = source._values
        object._relationships = relationships
        object._committedRelationships = relationships
        object._version = source._version
        object._isFault = false
        object.faultingError = nil
    }

    /// The registered object for a row, filling it in when it is a fault; a new registered
    /// object otherwise.
    func materialize(_ row: StoreRow) throws -> ManagedObject {
        let object = try self.object(with: row.objectID)
        if object._isFault {
            apply(row, to: object)
        }
        return object
    }

    /// Turns rows a store of this context's container returned into objects, in order: the
    /// registered instance when there is one, a new object otherwise. Each entity is resolved
    /// once per call, not once per row.
    func materialize(_ rows: [StoreRow]) throws -> [ManagedObject] {
        guard parent == nil else { return try rows.map(materialize) }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        if let first = rows.first { registered.reserveCapacity(rows.count, like: first.objectID) }
        var lastEntity: Entity?
        for row in rows {
            var isNew = false
            let object = try registered.object(for: row.objectID) {
                let entity: Entity
                if let lastEntity, lastEntity.name == row.objectID.entityName {
                    entity = lastEntity
                } else {
                    guard let found = schema.entity(named: row.objectID.entityName), !found.isAbstract else {
                        throw notFound(
                            row.objectID, reason: "the schema has no concrete entity \(row.objectID.entityName)")
                    }
                    entity = found
                    lastEntity = found
                }
                isNew = true
                return newFault(for: row.objectID, entity: entity)
            }
            if isNew || object._isFault { apply(row, to: object) }
            objects.append(object)
        }
        return objects
    }

    /// Makes a row the object's committed (and current) state.
    func apply(_ row: StoreRow, to object: ManagedObject) {
        let entity = object.entity
        var values = row.attributes
        for index in entity.transientAttributeNumbers where index < values.count {
            values[index] = entity.defaultValues[index]
        }
        var relationships: [RelationshipValue] = []
        relationships.reserveCapacity(entity.toManyFlags.count)
        for (index, isToMany) in entity.toManyFlags.enumerated() {
            if isToMany {
                relationships.append(.toManyFault)
            } else {
                let target = index < row.toOne.count ? row.toOne[index] : nil
                relationships.append(.toOne(target.flatMap { try? self.object(with: $0) }))
            }
        }
        object._values = values
        object._committedValues = values
        object._relationships = relationships
        object._committedRelationships = relationships
        object._version = row.version
        object._isFault = false
        object.faultingError = nil
    }

    /// The stored row of one saved object, or `nil` when its store has no such row.
    func storedRow(for objectID: ObjectID) throws -> StoreRow? {
        guard let primaryKey = objectID.primaryKey else { return nil }
        return try store(for: objectID).fetch(
            StoreFetchRequest(entityName: objectID.entityName, includesSubentities: false, primaryKeys: [primaryKey])
        ).first
    }

    /// Loads a fault's values from its store (or, in a child context, from the parent).
    func fulfillFault(of object: ManagedObject) {
        if let parent {
            do {
                copyState(of: try parent.existingObject(with: object.objectID), to: object)
            } catch let error as StrataError {
                object.faultingError = error
            } catch {
                object.faultingError = StrataError(
                    .objectNotFound, "Could not load \(object.objectID): \(error)", objectID: object.objectID)
            }
            return
        }
        guard object.objectID.primaryKey != nil else { return }
        do {
            guard let row = try storedRow(for: object.objectID) else {
                object.faultingError = notFound(object.objectID, reason: "its row was deleted from the store")
                return
            }
            apply(row, to: object)
        } catch let error as StrataError {
            object.faultingError = error
        } catch {
            object.faultingError = StrataError(
                .storeError, "Could not load \(object.objectID): \(error)", objectID: object.objectID)
        }
    }

    /// Loads the objects of a to-many relationship from the store.
    func loadRelationship(at index: Int, of object: ManagedObject) -> [ManagedObject] {
        if let parent {
            guard let source = try? parent.existingObject(with: object.objectID) else { return [] }
            return source.relationshipValue(at: index).objects.compactMap { try? self.object(with: $0.objectID) }
        }
        guard !object.objectID.isTemporaryID, container != nil else { return [] }
        let name = object.entity.relationships[index].name
        do {
            let store = try self.store(for: object.objectID)
            return try store.relatedObjectIDs(of: object.objectID, relationshipNamed: name).compactMap {
                try? self.object(with: $0)
            }
        } catch let error as StrataError {
            object.faultingError = error
            return []
        } catch {
            return []
        }
    }
}
