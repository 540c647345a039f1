import Foundation

extension ObjectContext {
    /// Every object of `type`'s entity and its subentities: the saved ones, as changed in this
    /// context, plus the inserted ones; deleted objects are left out.
    ///
    /// For example:
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
        try fetch(entityName: type.entity.name).ofType(Model.self)
    }

    /// Every object of the entity named `entityName` and its subentities, as ``fetch(_:)-(FetchRequest<Model>)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movies = try context.fetch(entityName: "Movie")   // [ManagedObject]
    /// let titles = try movies.map { try $0.value(forKey: "title") as? String }
    /// ```
    public func fetch(entityName: String) throws -> [ManagedObject] {
        try checkContainerIsAlive()  // the one fetch that does not start with query(for:)
        let entity = try schema.existingEntity(named: entityName)
        return try execute(ObjectQuery(plan: FetchPlan(entity: entity), includesPendingChanges: true))
    }

    /// The objects with the given IDs that exist, in the order of `objectIDs`; IDs of deleted or
    /// unknown objects are skipped (the data-stack kit's `existing(_:withIDs:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let ids = movies.map(\.objectID)      // kept from an earlier fetch, or sent from another context
    /// let stillThere = try context.existing(Movie.self, withIDs: ids)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/typeMismatch`` naming the entity found when an ID names an
    ///   object that is not a `Model`.
    public func existing<Model: ManagedObject>(_ type: Model.Type, withIDs objectIDs: [ObjectID]) throws -> [Model] {
        var result: [Model] = []
        for objectID in objectIDs {
            do {
                result.append(try existing(type, withID: objectID))
            } catch let error as StrataError where error.code == .objectNotFound {
                continue
            }
        }
        return result
    }

    /// The object with the given ID, as a `Model` (the data-stack kit's `existing(_:withID:)`):
    /// loaded from its store if the context does not hold it yet.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try context.existing(Movie.self, withID: movieID)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists (or it was
    ///   deleted), ``StrataError/Code/typeMismatch`` naming the entity found when it is not a
    ///   `Model`.
    public func existing<Model: ManagedObject>(_ type: Model.Type, withID objectID: ObjectID) throws -> Model {
        let object = try existingObject(with: objectID)
        guard let model = object as? Model else {
            throw StrataError(
                .typeMismatch, "\(objectID) is a \(object.entity.name), not a \(Model.self).",
                entityName: object.entity.name, objectID: objectID)
        }
        return model
    }

    /// The object a typed ID names, loaded from its store if the context does not hold it yet.
    ///
    /// For example:
    ///
    /// ```swift
    /// let id: TypedObjectID<Movie> = movie.typedObjectID
    /// let same: Movie = try context.existingObject(with: id)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists,
    ///   ``StrataError/Code/typeMismatch`` when the object is not a `Model`.
    public func existingObject<Model: ManagedObject>(with objectID: TypedObjectID<Model>) throws -> Model {
        try existing(Model.self, withID: objectID.objectID)
    }

    /// The number of objects ``fetch(_:)-(Model.Type)`` would return, counted in the store.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = try context.count(for: Movie.self)   // unsaved insertions and deletions included
    /// ```
    public func count<Model: ManagedObject>(for type: Model.Type) throws -> Int {
        try count(entityName: type.entity.name)
    }

    /// The number of objects of an entity and its subentities, unsaved changes included.
    ///
    /// For example:
    ///
    /// ```swift
    /// let reviews = try context.count(entityName: "Review")
    /// ```
    public func count(entityName: String) throws -> Int {
        mergeCollectedChanges()  // counts agree with fetches made after the same saves
        try checkContainerIsAlive()
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

    // MARK: Stores

    func store(forEntity entity: Entity) throws -> any PersistentStore {
        guard let container else {
            throw StrataError(
                .noStore, "This context has no stores; create it with a PersistentContainer to load and save objects.",
                entityName: entity.name)
        }
        try container.checkOpen()
        guard let store = container.store(forEntityNamed: entity.name) else {
            throw StrataError(
                .noStore, "No store of the container holds \(entity.name) objects.", entityName: entity.name)
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
