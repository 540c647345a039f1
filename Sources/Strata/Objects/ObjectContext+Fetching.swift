import Foundation

extension ObjectContext {
    /// Every object of `type`'s entity and its subentities: the saved ones, as changed in this
    /// context, plus the inserted ones; deleted objects are left out.
    ///
    /// ```swift
    /// let movies = try context.fetch(Movie.self)
    /// ```
    ///
    /// Saved objects come in the order they were first saved, inserted ones after them in the
    /// order they were inserted. Objects the context already holds keep their unsaved changes.
    ///
    /// - Throws: ``StrataError`` when the store cannot be read.
    public func fetch<Model: ManagedObject>(_ type: Model.Type) throws -> [Model] {
        try fetch(entityName: type.entity.name).compactMap { $0 as? Model }
    }

    /// Every object of the entity named `entityName` and its subentities, as ``fetch(_:)``.
    ///
    /// ```swift
    /// let movies = try context.fetch(entityName: "Movie")   // [ManagedObject]
    /// let titles = try movies.map { try $0.value(forKey: "title") as? String }
    /// ```
    public func fetch(entityName: String) throws -> [ManagedObject] {
        let entity = try schema.existingEntity(named: entityName)
        return try execute(ObjectQuery(plan: FetchPlan(entity: entity), includesPendingChanges: true))
    }

    /// The objects with the given IDs that exist, in the order of `objectIDs`; IDs of deleted or
    /// unknown objects are skipped.
    ///
    /// ```swift
    /// let ids = movies.map(\.objectID)      // kept from an earlier fetch, or sent from another context
    /// let stillThere = try context.existing(Movie.self, withIDs: ids)
    /// ```
    public func existing<Model: ManagedObject>(_ type: Model.Type, withIDs objectIDs: [ObjectID]) throws -> [Model] {
        var result: [Model] = []
        for objectID in objectIDs {
            do {
                if let object = try existingObject(with: objectID) as? Model { result.append(object) }
            } catch let error as StrataError where error.code == .objectNotFound {
                continue
            }
        }
        return result
    }

    /// The object a typed ID names, loaded from its store if the context does not hold it yet.
    ///
    /// ```swift
    /// let id: TypedObjectID<Movie> = movie.typedObjectID
    /// let same: Movie = try context.existingObject(with: id)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists,
    ///   ``StrataError/Code/typeMismatch`` when the object is not a `Model`.
    public func existingObject<Model: ManagedObject>(with objectID: TypedObjectID<Model>) throws -> Model {
        let object = try existingObject(with: objectID.objectID)
        guard let model = object as? Model else {
            throw StrataError(
                .typeMismatch, "\(objectID.objectID) is a \(object.entity.name), not a \(Model.self).",
                entityName: object.entity.name, objectID: objectID.objectID)
        }
        return model
    }

    /// The number of objects ``fetch(_:)`` would return, counted in the store.
    ///
    /// ```swift
    /// let total = try context.count(for: Movie.self)   // unsaved insertions and deletions included
    /// ```
    public func count<Model: ManagedObject>(for type: Model.Type) throws -> Int {
        try count(entityName: type.entity.name)
    }

    /// The number of objects of an entity and its subentities, unsaved changes included.
    ///
    /// ```swift
    /// let reviews = try context.count(entityName: "Review")
    /// ```
    public func count(entityName: String) throws -> Int {
        let entity = try schema.existingEntity(named: entityName)
        var total = 0
        if let parent {
            total = try parent.count(entityName: entityName)
        } else if container != nil {
            total = try store(forEntity: entity).count(FetchPlan(entity: entity))
        }
        total += inserted.values.filter { $0.entity.isKind(of: entity) }.count
        total -= deleted.values.filter { $0.entity.isKind(of: entity) }.count
        return total
    }

    // MARK: Rows to objects

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
        registered.reserveCapacity(rows.count)
        var lastEntity: Entity?
        for row in rows {
            if let object = registered[row.objectID] {
                if object._isFault { apply(row, to: object) }
                objects.append(object)
                continue
            }
            let entity: Entity
            if let lastEntity, lastEntity.name == row.objectID.entityName {
                entity = lastEntity
            } else {
                guard let found = schema.entity(named: row.objectID.entityName), !found.isAbstract else {
                    throw notFound(row.objectID, reason: "the schema has no concrete entity \(row.objectID.entityName)")
                }
                entity = found
                lastEntity = found
            }
            let object = makeFault(for: row.objectID, entity: entity)
            apply(row, to: object)
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
                object.faultingError = StrataError(.objectNotFound, "Could not load \(object.objectID): \(error)", objectID: object.objectID)
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
            object.faultingError = StrataError(.storeError, "Could not load \(object.objectID): \(error)", objectID: object.objectID)
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
            return try store.relatedObjectIDs(of: object.objectID, relationshipNamed: name).compactMap { try? self.object(with: $0) }
        } catch let error as StrataError {
            object.faultingError = error
            return []
        } catch {
            return []
        }
    }

    // MARK: Stores

    func store(forEntity entity: Entity) throws -> any PersistentStore {
        guard let container else {
            throw StrataError(
                .noStore, "This context has no stores; create it with a PersistentContainer to load and save objects.",
                entityName: entity.name)
        }
        try container.checkOpen()
        guard let store = container.store(forEntityNamed: entity.name) else {
            throw StrataError(.noStore, "No store of the container holds \(entity.name) objects.", entityName: entity.name)
        }
        return store
    }

    func store(for objectID: ObjectID) throws -> any PersistentStore {
        guard let container else {
            throw StrataError(
                .noStore, "This context has no stores; create it with a PersistentContainer to load and save objects.",
                objectID: objectID)
        }
        try container.checkOpen()
        guard let identifier = objectID.storeIdentifier, let store = container.store(withIdentifier: identifier) else {
            throw notFound(objectID, reason: "it belongs to a store this container does not have")
        }
        return store
    }
}
