import Foundation

/// A fetch request without its model type, as contexts run it: the plan the store gets, and
/// what only the context handles (unsaved changes, store selection, prefetching).
struct ObjectQuery: Sendable {
    var plan: FetchPlan
    var includesPendingChanges: Bool
    var affectedStores: [String]?
    var prefetching: [String] = []

    var entity: Entity { plan.entity }
}

extension ObjectQuery {
    /// `request` resolved against `schema`: its keys and types are checked here, once, so a bad
    /// request fails the same way on every path.
    init<Model: ManagedObject>(_ request: FetchRequest<Model>, in schema: Schema) throws {
        self.init(
            plan: try FetchPlan(request, in: schema), includesPendingChanges: request.includesPendingChanges,
            affectedStores: request.affectedStores, prefetching: request.relationshipKeyPathsForPrefetching)
    }
}

extension ObjectContext {
    /// The objects a request matches, in its order.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// let movies = try context.fetch(request)
    /// ```
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default) the result reflects this
    /// context's unsaved changes: inserted objects that match are included, deleted ones left
    /// out, and edited ones judged and sorted by their current values. Without unsaved changes
    /// the store does all the work in one SQL query.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/unknownKey`` (a key the entity does
    ///   not have, with the closest one), ``StrataError/Code/typeMismatch`` (a value of the wrong
    ///   type), ``StrataError/Code/invalidPredicate``, or a store error.
    public func fetch<Model: ManagedObject>(_ request: FetchRequest<Model>) throws -> [Model] {
        let objects = try execute(try query(for: request))
        return objects.ofType(Model.self)
    }

    /// The objects of a class that match a predicate, sorted, at most `limit` of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let recent = try context.fetch(Movie.self, where: \.year >= 1990, sortedBy: [.descending(\.releaseDate)], limit: 20)
    /// ```
    public func fetch<Model: PersistentModel>(
        _ type: Model.Type, where predicate: FetchPredicate<Model>?,
        sortedBy sortDescriptors: [FetchSortDescriptor<Model>] = [],
        limit: Int = 0
    ) throws -> [Model] {
        var request = FetchRequest<Model>(predicate: predicate, sortDescriptors: sortDescriptors)
        request.fetchLimit = limit
        return try fetch(request)
    }

    /// The IDs of the objects a request matches, in its order (Core Data's `managedObjectIDResultType`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let ids = try context.fetchObjectIDs(FetchRequest<Movie>(predicate: \.year < 1950))   // loads no object
    /// let titles = try await container.performBackgroundTask { background in
    ///     try background.existing(Movie.self, withIDs: ids).map(\.title)
    /// }
    /// ```
    public func fetchObjectIDs<Model: ManagedObject>(_ request: FetchRequest<Model>) throws -> [ObjectID] {
        let query = try query(for: request)
        if !usesPendingChanges(query), parent == nil, container != nil {
            var ids: [ObjectID] = []
            for store in try stores(for: query) { ids += try store.fetchObjectIDs(query.plan) }
            return ids
        }
        return try execute(query).map(\.objectID)
    }

    /// The number of objects a request matches, counted in the store when there are no unsaved
    /// changes to account for.
    ///
    /// For example:
    ///
    /// ```swift
    /// let classics = try context.count(for: FetchRequest<Movie>(predicate: \.year < 1950))
    /// ```
    public func count<Model: ManagedObject>(for request: FetchRequest<Model>) throws -> Int {
        try count(query(for: request))
    }

    /// The number of objects a query matches (made by ``query(for:)``, or resolved earlier and
    /// readied with ``prepareToQuery()``).
    func count(_ query: ObjectQuery) throws -> Int {
        if !usesPendingChanges(query), parent == nil, container != nil {
            var total = 0
            for store in try stores(for: query) { total += try store.count(query.plan) }
            return total
        }
        return try execute(query).count
    }

    /// Deletes every object of a class that matches a predicate (all of them when `nil`);
    /// the deletions are saved with the next ``save()``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let removed = try context.removeInstances(of: Review.self, matching: \.stars == 0)
    /// try context.save()
    /// ```
    ///
    /// - Returns: The number of objects deleted.
    @discardableResult
    public func removeInstances<Model: PersistentModel>(
        of type: Model.Type, matching predicate: FetchPredicate<Model>? = nil
    ) throws -> Int {
        let objects = try fetch(FetchRequest<Model>(predicate: predicate))
        for object in objects { delete(object) }
        return objects.count
    }

    // MARK: Running queries

    func query<Model: ManagedObject>(for request: FetchRequest<Model>) throws -> ObjectQuery {
        try prepareToQuery()
        return try ObjectQuery(request, in: schema)
    }

    /// What every query does first (``query(for:)``, or a live query's refresh before running
    /// its resolved query): take in the saves collected for
    /// ``automaticallyMergesChangesFromContainer`` and refuse to run once the container is gone.
    func prepareToQuery() throws {
        mergeCollectedChanges()  // request-based fetches, counts and ID fetches start here
        try checkContainerIsAlive()
    }


    /// Whether unsaved changes can affect the query's result: changes to objects of the
    /// fetched entity's table, or to any object when the predicate or a sort key reaches
    /// related objects.
    func usesPendingChanges(_ query: ObjectQuery) -> Bool {
        guard query.includesPendingChanges, hasChanges else { return false }
        if query.plan.reachesRelatedObjects { return true }
        let table = query.entity.rootEntity.name
        func touches(_ object: ManagedObject) -> Bool { object.entity.rootEntity.name == table }
        return inserted.values.contains(where: touches) || deleted.values.contains(where: touches)
            || changed.values.contains { $0.hasChanges && touches($0) }
    }

    func stores(for query: ObjectQuery) throws -> [any PersistentStore] {
        let store = try self.store(forEntity: query.entity)
        if let affected = query.affectedStores, !affected.contains(store.identifier) { return [] }
        return [store]
    }

    /// Runs a query: in the store alone when no unsaved change can affect it, otherwise over the
    /// store's candidates and this context's objects, evaluated and sorted in memory.
    func execute(_ query: ObjectQuery) throws -> [ManagedObject] {
        mergeCollectedChanges()
        let plan = query.plan
        if parent == nil, container != nil, !usesPendingChanges(query) {
            var objects: [ManagedObject] = []
            for store in try stores(for: query) {
                // Run by run, as the store reads them: a store on a server receives the next
                // run while this one becomes objects.
                try store.fetch(plan) { rows in objects += try materialize(rows) }
            }
            try prefetch(query.prefetching, for: objects)
            return objects
        }
        var candidates: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func consider(_ object: ManagedObject) {
            if seen.insert(ObjectIdentifier(object)).inserted { candidates.append(object) }
        }
        var wide = query
        wide.plan.fetchLimit = nil
        wide.plan.fetchOffset = 0
        wide.plan.sorts = []
        if let parent {
            // The parent judges by its own state; the child's edits may change the answer, so
            // every object of the entity is a candidate.
            wide.plan.predicate = nil
            for source in try parent.execute(wide) { consider(adopt(source)) }
        } else if container != nil {
            // Saved objects whose related objects changed here (and were released since) can
            // only be found without the predicate.
            if plan.reachesRelatedObjects { wide.plan.predicate = nil }
            for store in try stores(for: query) {
                for object in try materialize(try store.fetch(wide.plan)) { consider(object) }
            }
        }
        if query.includesPendingChanges {
            for object in registered.values where !object._isFault && object.entity.isKind(of: query.entity) {
                consider(object)
            }
            for object in unsaved.insertedObjects where object.entity.isKind(of: query.entity) {
                consider(object)
            }
        }
        if query.affectedStores != nil, container != nil {
            // Unsaved objects go to the entity's store; keep only those of affected stores.
            let allowed = Set(try stores(for: query).map(\.identifier))
            candidates = candidates.filter { allowed.contains($0.objectID.storeIdentifier ?? allowed.first ?? "") }
        }
        let evaluator = plan.predicate.map(PredicateEvaluator.init)
        var matches = candidates.filter { object in
            if query.includesPendingChanges && object.isDeleted { return false }
            if !plan.includesSubentities && object.entity.name != plan.entity.name { return false }
            return evaluator?.evaluate(object) ?? true
        }
        sortInMemory(&matches, by: plan.sorts)
        if plan.fetchOffset > 0 { matches = Array(matches.dropFirst(plan.fetchOffset)) }
        if let limit = plan.fetchLimit { matches = Array(matches.prefix(limit)) }
        try prefetch(query.prefetching, for: matches)
        return matches
    }

    /// Sorts objects as the store's `ORDER BY` does (see ``SortKey``).
    func sortInMemory(_ objects: inout [ManagedObject], by sorts: [ResolvedSort]) {
        let insertionIndex = unsaved.insertionRanks()
        // Read every key once.
        let keyed = objects.map { object in
            (object, SortKey(of: object, by: sorts) { Int64(insertionIndex[ObjectIdentifier($0)] ?? Int.max) })
        }
        objects = keyed.sorted { SortKey.compare($0.1, $1.1, by: sorts) < 0 }.map(\.0)
    }

    /// Loads the named relationships of `objects` (dotted paths through to-one relationships
    /// end in any relationship) with one store query per relationship and entity.
    func prefetch(_ keyPaths: [String], for objects: [ManagedObject]) throws {
        for keyPath in keyPaths {
            var level = objects
            for name in keyPath.split(separator: ".").map(String.init) {
                level = try prefetchRelationship(named: name, of: level)
            }
        }
    }

    private func prefetchRelationship(named name: String, of objects: [ManagedObject]) throws -> [ManagedObject] {
        // Each related object once: 50,000 movies of 100 directors name 100 objects, not
        // 50,000 (the next step of a key path, and the faults to load, would repeat them).
        var next: [ManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        func reached(_ object: ManagedObject) -> Bool { seen.insert(ObjectIdentifier(object)).inserted }
        var faults: [ObjectID] = []
        var toManyOwners: [ManagedObject] = []
        for object in objects {
            if object._isFault { object._fireFault() }
            guard let number = object.entity.relationshipNumber(named: name) else {
                throw StrataError(
                    .unknownKey,
                    "\(object.entity.name) has no relationship named '\(name)' to prefetch."
                        + didYouMean(name, in: object.entity.relationships.map(\.name)),
                    entityName: object.entity.name, propertyName: name)
            }
            if object.entity.relationships[number].isToMany {
                if object._relationships[number].isFault {
                    toManyOwners.append(object)
                } else {
                    next += object._relationships[number].objects.filter(reached)
                }
            } else if case .toOne(let target?) = object._relationships[number], reached(target) {
                if target._isFault { faults.append(target.objectID) }
                next.append(target)
            }
        }
        // To-one targets: one query per entity for all the faults.
        try fulfillFaults(faults)
        // To-many: one query for every owner's members, then their rows in one more.
        if !toManyOwners.isEmpty, parent == nil, container != nil {
            var memberIDs: [ObjectID] = []
            for (storeIdentifier, owners) in Dictionary(
                grouping: toManyOwners, by: { $0.objectID.storeIdentifier ?? "" })
            {
                guard let store = container?.store(withIdentifier: storeIdentifier) else { continue }
                let members = try store.relatedObjectIDs(of: owners.map(\.objectID), relationshipNamed: name)
                for owner in owners {
                    guard let number = owner.entity.relationshipNumber(named: name),
                        owner._relationships[number].isFault
                    else { continue }
                    let objects = (members[owner.objectID] ?? []).compactMap { try? self.object(with: $0) }
                    owner._relationships[number] = .toMany(objects)
                    if owner._committedRelationships?[number].isFault == true {
                        owner._committedRelationships?[number] = .toMany(objects)
                    }
                    let newlyReached = objects.filter(reached)
                    memberIDs += newlyReached.filter(\._isFault).map(\.objectID)
                    next += newlyReached
                }
            }
            try fulfillFaults(memberIDs)
        }
        return next
    }

    /// Loads the rows of many faults with one query per entity.
    func fulfillFaults(_ objectIDs: [ObjectID]) throws {
        guard parent == nil, container != nil, !objectIDs.isEmpty else { return }
        let byEntity = Dictionary(grouping: objectIDs.filter { $0.primaryKey != nil }, by: \.entityName)
        for (entityName, ids) in byEntity {
            guard let entity = schema.entity(named: entityName) else { continue }
            let store = try self.store(forEntity: entity)
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<Swift.min($0 + 500, ids.count)]) }
            ) {
                let plan = FetchPlan(
                    entity: entity, includesSubentities: false, primaryKeys: chunk.compactMap(\.primaryKey))
                _ = try materialize(try store.fetch(plan))
            }
        }
    }
}

extension FetchRequest where Model: ManagedObject {
    /// Fetches the request's objects in `context` (the stack kit's `execute(with:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let johns = try Person.makeFetchRequest().fetchingBy(key: "name", value: "John").execute(with: context)
    /// ```
    ///
    /// - Returns: The objects, as `context.fetch(self)` returns them.
    /// - Throws: What the fetch throws.
    public func execute(with context: ObjectContext) throws -> [Model] {
        try context.fetch(self)
    }
}
