import Foundation

/// A query result kept current: an `AsyncSequence` that yields the result now, then again after
/// each save that changes it.
///
/// Made by ``PersistentContainer/observe(_:)`` and
/// ``PersistentContainer/observe(_:trackingChangesOf:)`` (value snapshots of the objects a
/// request matches), ``PersistentContainer/observe(_:includingRelatedObjects:depth:)`` (one object),
/// and ``PersistentContainer/observeCount(of:)``, ``PersistentContainer/observeSum(of:where:)``
/// and the other aggregate observations. Each iteration runs its own fetches on a background
/// context and yields `Sendable` values, so it can be consumed anywhere.
///
/// - A save re-runs the request only when it inserted, updated or deleted objects of the
///   request's entity (or subentities), or of the tracked request's entity when one is given;
///   when the request's predicate or sort reaches related objects, every save counts. So does
///   every commit of another process, noticed when the store polls for them
///   (``StoreDescription/remoteChangePollingInterval``).
/// - A result equal to the previous one is not yielded again.
/// - Saves never wait for the consumer: while it is busy, later saves are coalesced, and the
///   next result it reads is the latest.
/// - Ending the iteration (cancelling its task or leaving the loop) removes the registration.
public struct LiveQuery<Result: Sendable & Equatable>: AsyncSequence, Sendable {
    /// The type of the values the sequence yields.
    public typealias Element = Result
    /// The error iteration can throw.
    public typealias Failure = any Error

    let container: PersistentContainer
    let relevantEntities: Set<String>?
    let fetch: @Sendable (ObjectContext) throws -> Result
    /// What else must change for an equal result to be yielded again: the state of related
    /// objects, for observations that report them. `nil` yields changed results only.
    var version: (@Sendable (ObjectContext) throws -> Int)?

    init(
        container: PersistentContainer, relevantEntities: Set<String>?,
        fetch: @escaping @Sendable (ObjectContext) throws -> Result
    ) {
        self.container = container
        self.relevantEntities = relevantEntities
        self.fetch = fetch
    }

    /// Starts observing; the first element is the current result.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: start().makeAsyncIterator())
    }

    /// The iterator of a ``LiveQuery``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Result, any Error>.Iterator

        /// The next result, or `nil` when observation ended; throws the error of a failed fetch.
        public mutating func next() async throws -> Result? { try await base.next() }
    }

    private func start() -> AsyncThrowingStream<Result, any Error> {
        let (results, output) = AsyncThrowingStream<Result, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Commits only mark the result stale; the worker re-fetches, so saves never wait.
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = container.addCommitObserver(touching: relevantEntities) { trigger.yield() }
        let container = container
        let fetch = fetch
        let version = version
        let worker = Task.detached(executorPreference: BlockingWorkExecutor.shared) {
            var last: Result?
            var lastVersion: Int?
            func emit() throws {
                let context = container.newBackgroundContext()
                let result = try fetch(context)
                let currentVersion = try version?(context)
                guard result != last || currentVersion != lastVersion else { return }
                last = result
                lastVersion = currentVersion
                output.yield(result)
            }
            do {
                try emit()
                for await _ in triggers {
                    if Task.isCancelled { break }
                    try emit()
                }
                output.finish()
            } catch {
                output.finish(throwing: error)
            }
        }
        output.onTermination = { _ in
            observation.cancel()
            trigger.finish()
            worker.cancel()
        }
        return results
    }
}

extension PersistentContainer {
    /// The value snapshots of the objects `request` matches, now and after every save that
    /// changes them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// for try await movies in container.observe(request) {
    ///     print(movies.map(\.title))       // [Movie.Value]
    /// }
    /// ```
    public func observe<Model: ValueSnapshotRepresentable>(_ request: FetchRequest<Model>) -> LiveQuery<[Model.Value]> {
        let observed = ObservedRequest(request, in: schema)
        return LiveQuery(container: self, relevantEntities: observed.relevantEntities) { context in
            try observed.fetch(Model.self, in: context).map(\.value)
        }
    }

    /// Like ``observe(_:)``, but re-runs `request` after the saves that change objects of the
    /// entity of `tracking` (for example a list of movies that shows review counts, re-run
    /// when reviews change).
    ///
    /// For example:
    ///
    /// ```swift
    /// let movies = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
    /// for try await snapshots in container.observe(movies, trackingChangesOf: FetchRequest<Review>()) {
    ///     print(snapshots.count)   // after each save of reviews
    /// }
    /// ```
    public func observe<Model: ValueSnapshotRepresentable, Tracked: ManagedObject>(
        _ request: FetchRequest<Model>, trackingChangesOf tracking: FetchRequest<Tracked>
    ) -> LiveQuery<[Model.Value]> {
        let observed = ObservedRequest(request, in: schema)
        return LiveQuery(container: self, relevantEntities: relevantEntities(for: tracking)) { context in
            try observed.fetch(Model.self, in: context).map(\.value)
        }
    }

    /// One object's value snapshot, now and after each save that changes it; the sequence ends
    /// with ``StrataError/Code/objectDeleted`` when the object is deleted.
    ///
    /// With `includingRelatedObjects`, changes of the objects its relationships reach count
    /// too — `depth` levels deep: 1 for a movie's reviews, 2 for the reviews' authors as well.
    /// The snapshot is yielded again after a save that changed one of them (an attribute, or
    /// which objects a relationship holds), even when the object's own snapshot is the same.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movie in container.observe(heat.typedObjectID) { print(movie.title) }
    /// for try await movie in container.observe(heat.typedObjectID, includingRelatedObjects: true, depth: 2) {
    ///     print("the movie, a review or a reviewer changed")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - objectID: The object.
    ///   - includingRelatedObjects: Whether changes of related objects are reported.
    ///   - depth: How many relationship steps away related objects count (1 or more).
    public func observe<Model: ValueSnapshotRepresentable>(
        _ objectID: TypedObjectID<Model>, includingRelatedObjects: Bool = false, depth: Int = 1
    ) -> LiveQuery<Model.Value> {
        let depth = includingRelatedObjects ? max(depth, 1) : 0
        var entities: Set<String> = schema.entity(named: objectID.objectID.entityName)?.kindNames ?? [objectID.objectID.entityName]
        var frontier = entities
        var steps = 0
        while steps < depth, !frontier.isEmpty {
            steps += 1
            var next: Set<String> = []
            for name in frontier {
                for relationship in schema.entity(named: name)?.relationships ?? [] {
                    next.formUnion(schema.entity(named: relationship.destinationEntityName)?.kindNames ?? [])
                }
            }
            frontier = next.subtracting(entities)
            entities.formUnion(next)
        }
        let id = objectID.objectID
        var query = LiveQuery<Model.Value>(container: self, relevantEntities: entities) { context in
            let object: ManagedObject
            do {
                object = try context.existingObject(with: id)
            } catch let error as StrataError where error.code == .objectNotFound {
                throw StrataError(
                    .objectDeleted, "\(id) was deleted; its observation ended.", entityName: id.entityName, objectID: id,
                    underlyingError: error)
            }
            guard let model = object as? Model else {
                throw StrataError(.typeMismatch, "\(id) is not a \(Model.self).", entityName: id.entityName, objectID: id)
            }
            return model.value
        }
        if depth > 0 {
            query.version = { context in
                guard let object = try? context.existingObject(with: id) else { return 0 }
                return RelatedObjectsFingerprint.of(object, depth: depth)
            }
        }
        return query
    }

    /// The number of objects `request` matches, now and after each save that changes it.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await count in container.observeCount(of: FetchRequest<Movie>(predicate: \.year >= 1990)) {
    ///     print(count)
    /// }
    /// ```
    public func observeCount<Model: ManagedObject>(of request: FetchRequest<Model>) -> LiveQuery<Int> {
        let observed = ObservedRequest(request, in: schema)
        return LiveQuery(container: self, relevantEntities: observed.relevantEntities) { context in
            try observed.count(in: context)
        }
    }

    /// The sum of an attribute over the objects that match, computed in SQL now and after each
    /// save that changes it.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await total in container.observeSum(of: \Movie.boxOffice, where: \.year >= 1990) {
    ///     print(total)   // Decimal
    /// }
    /// ```
    public func observeSum<Model: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        of keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) -> LiveQuery<Value.Sum> where Value.Sum: Sendable & Equatable {
        observeAggregate(.sum, of: keyPath, where: predicate) { Value.sum(from: $0) }
    }

    /// The average of an attribute over the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await average in container.observeAverage(of: \Review.stars) {
    ///     print(average ?? 0)   // Double?
    /// }
    /// ```
    public func observeAverage<Model: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        of keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) -> LiveQuery<Value.Average?> where Value.Average: Sendable & Equatable {
        observeAggregate(.average, of: keyPath, where: predicate) { Value.average(from: $0) }
    }

    /// The smallest value of an attribute among the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await earliest in container.observeMin(of: \Movie.year) { print(earliest ?? 0) }   // Int?
    /// ```
    public func observeMin<Model: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        of keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) -> LiveQuery<Value.Bound?> where Value.Bound: Sendable & Equatable {
        observeAggregate(.min, of: keyPath, where: predicate) { Value.bound(from: $0) }
    }

    /// The largest value of an attribute among the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await best in container.observeMax(of: \Movie.rating, where: \.year >= 1990) {
    ///     print(best ?? 0)   // Double?
    /// }
    /// ```
    public func observeMax<Model: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        of keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) -> LiveQuery<Value.Bound?> where Value.Bound: Sendable & Equatable {
        observeAggregate(.max, of: keyPath, where: predicate) { Value.bound(from: $0) }
    }

    /// An aggregate of an attribute, recomputed in SQL after relevant saves and converted to its
    /// typed result.
    private func observeAggregate<Model: PersistentModel, Value, Result: Sendable & Equatable>(
        _ function: AggregateFunction, of keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>?,
        _ convert: @escaping @Sendable (AttributeValue) -> Result
    ) -> LiveQuery<Result> {
        let key = KeyPathNames.name(of: keyPath, root: Model.self)  // key paths are not Sendable; names are
        let observed = ObservedRequest(FetchRequest<Model>(predicate: predicate), in: schema)
        return LiveQuery(container: self, relevantEntities: observed.relevantEntities) { context in
            convert(try observed.aggregateValue(function, key: key, in: context))
        }
    }

    /// Calls `wake` after each commit that changed objects of `relevantEntities` (every commit
    /// when `nil`, and every commit of another process that names no objects).
    func addCommitObserver(touching relevantEntities: Set<String>?, _ wake: @escaping @Sendable () -> Void)
        -> StoreObservation
    {
        addCommitObserver { commit in
            guard let relevantEntities, !commit.changedObjectsAreUnknown else {
                wake()
                return
            }
            if !commit.changedEntityNames.isDisjoint(with: relevantEntities) { wake() }
        }
    }

    /// The entities whose changes can change `request`'s result, or `nil` for any.
    func relevantEntities<Model: ManagedObject>(for request: FetchRequest<Model>) -> Set<String>? {
        ObservedRequest(request, in: schema).relevantEntities
    }
}

/// A hash of the objects within some relationship steps of an object: their IDs, attribute
/// values and which objects their relationships hold.
enum RelatedObjectsFingerprint {
    static func of(_ root: ManagedObject, depth: Int) -> Int {
        var hasher = Hasher()
        var seen: Set<ObjectIdentifier> = [ObjectIdentifier(root)]
        var level = [root]
        for step in 0...depth {
            var next: [ManagedObject] = []
            for object in level {
                if object._isFault { object._fireFault() }
                if step > 0 {
                    hasher.combine(object.objectID)
                    hasher.combine(object._values)
                }
                guard step < depth else { continue }
                for index in object.entity.relationships.indices {
                    let related = object.relationshipValue(at: index).objects
                    // Sets come back in any order; ordered relationships keep theirs.
                    let ids = related.map(\.objectID)
                    hasher.combine(object.entity.relationships[index].isOrdered ? ids : ids.sorted { $0.description < $1.description })
                    for member in related where seen.insert(ObjectIdentifier(member)).inserted { next.append(member) }
                }
            }
            guard step < depth, !next.isEmpty else { break }
            level = next.sorted { $0.objectID.description < $1.objectID.description }
        }
        return hasher.finalize()
    }
}
