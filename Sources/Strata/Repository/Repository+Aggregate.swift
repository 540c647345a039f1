import Foundation

/// One group of an aggregate: the values of the group-by attributes, and the aggregate over
/// the group's objects.
public struct AggregateGroup: Sendable, Hashable {
    /// The group's value of each group-by attribute, by name (empty without grouping).
    public var groupValues: [String: AttributeValue]
    /// The aggregate over the group (`.null` for an average, minimum or maximum of no objects).
    public var value: AttributeValue

    /// Creates a group.
    ///
    /// For example:
    ///
    /// ```swift
    /// let expected = AggregateGroup(groupValues: ["year": 1995], value: 2)   // two movies of 1995
    /// ```
    public init(groupValues: [String: AttributeValue], value: AttributeValue) {
        self.groupValues = groupValues
        self.value = value
    }
}

extension Repository {
    // MARK: Aggregates (computed in SQL over committed data)

    /// The number of objects of `type` that match `predicate`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = try await repository.count(of: Movie.self, where: \.boxOffice > 100)
    /// ```
    public func count<Managed: ManagedObject>(of _: Managed.Type, where predicate: FetchPredicate<Managed>? = nil)
        async throws(RepositoryError) -> Int
    {
        try await aggregate { context in try context.count(for: FetchRequest<Managed>(predicate: predicate)) }
    }

    /// The sum of an attribute over the objects that match (exact for `Decimal`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let total: Decimal = try await repository.sum(\Movie.boxOffice)
    /// ```
    public func sum<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil
    ) async throws(RepositoryError) -> Value.Sum where Value.Sum: Sendable {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return try await aggregate { context in try context.sum(key: key, of: Value.self, where: predicate) }
    }

    /// The average of an attribute over the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// let averageRating = try await repository.average(\Movie.rating, where: \.year >= 1990)   // a Double?
    /// ```
    public func average<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil
    ) async throws(RepositoryError) -> Value.Average? where Value.Average: Sendable {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return try await aggregate { context in Value.average(from: try context.aggregateValue(.average, key: key, where: predicate)) }
    }

    /// The smallest value of an attribute among the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// let firstRelease = try await repository.min(\Movie.releaseDate)   // a Date?
    /// ```
    public func min<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil
    ) async throws(RepositoryError) -> Value.Bound? where Value.Bound: Sendable {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return try await aggregate { context in Value.bound(from: try context.aggregateValue(.min, key: key, where: predicate)) }
    }

    /// The largest value of an attribute among the objects that match (`nil` when none do).
    ///
    /// For example:
    ///
    /// ```swift
    /// let latestGoodYear = try await repository.max(\Movie.year, where: \.rating >= 4)   // an Int16?
    /// ```
    public func max<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil
    ) async throws(RepositoryError) -> Value.Bound? where Value.Bound: Sendable {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return try await aggregate { context in Value.bound(from: try context.aggregateValue(.max, key: key, where: predicate)) }
    }

    /// An aggregate of an attribute over the objects that match, per group of objects with the
    /// same values of `groupBy` (one group without).
    ///
    /// For example:
    ///
    /// ```swift
    /// let perYear = try await repository.aggregate(function: .sum, of: \Movie.boxOffice, groupBy: ["year"])
    /// for group in perYear { print(group.groupValues["year"]!, group.value) }
    /// ```
    ///
    /// - Parameters:
    ///   - function: The aggregate function (`.count` counts the objects with a value).
    ///   - keyPath: The attribute.
    ///   - predicate: Which objects count.
    ///   - groupBy: The names of the attributes to group by.
    /// - Returns: The groups, ordered by their group-by values.
    public func aggregate<Managed: PersistentModel, Value>(
        function: AggregateFunction, of keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        groupBy: [String] = []
    ) async throws(RepositoryError) -> [AggregateGroup] {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return try await aggregate { context in
            var request = FetchRequest<Managed>(predicate: predicate)
            request.propertiesToFetch =
                groupBy.map { FetchedProperty.attribute($0) }
                + [FetchedProperty(name: "\u{0}value", column: .aggregate(function, key))]
            request.propertiesToGroupBy = groupBy
            request.sortDescriptors = groupBy.map { FetchSortDescriptor(key: $0) }
            return try context.fetchDictionaries(request).map { row in
                var groupValues = row
                let value = groupValues.removeValue(forKey: "\u{0}value") ?? .null
                return AggregateGroup(groupValues: groupValues, value: value)
            }
        }
    }

    // MARK: Aggregate subscriptions

    // Each subscription re-runs after the saves that change objects of its entity — or, with a
    // `changeTrackingRequest`, of that request's entity (as fetch subscriptions do): for
    // predicates that reach related objects, which a save of those may change.

    /// The count, now and after each save that changes objects of `type` (or of
    /// `changeTrackingRequest`'s entity), as `Result`s.
    ///
    /// For example:
    ///
    /// ```swift
    /// // Movies with more than three reviews, recounted when reviews change:
    /// let counts = repository.countSubscription(
    ///     of: Movie.self, where: try FetchPredicate(format: "reviews.@count > 3"),
    ///     changeTrackingRequest: FetchRequest<Review>())
    /// ```
    public func countSubscription<Managed: ManagedObject>(
        of _: Managed.Type, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncStream<Result<Int, RepositoryError>> {
        countSubscription(predicate, changeTrackingRequest).resultStream()
    }

    /// The count, now and after each change, ending with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await count in repository.countThrowingSubscription(of: Movie.self, where: \.rating >= 4) {
    ///     print("\(count) well-rated movies")
    /// }
    /// ```
    public func countThrowingSubscription<Managed: ManagedObject>(
        of _: Managed.Type, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncThrowingStream<Int, any Error> {
        countSubscription(predicate, changeTrackingRequest).throwingStream()
    }

    /// The sum, now and after each save that changes objects of its entity, as `Result`s.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await total in repository.sumSubscription(\Movie.boxOffice) { print(try total.get()) }
    /// ```
    public func sumSubscription<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncStream<Result<Value.Sum, RepositoryError>> where Value.Sum: Sendable {
        sumSubscription(keyPath, predicate, changeTrackingRequest).resultStream()
    }

    /// The sum, now and after each change, ending with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await total in repository.sumThrowingSubscription(\Movie.boxOffice, where: \.year == 1995) {
    ///     print(total)   // a Decimal
    /// }
    /// ```
    public func sumThrowingSubscription<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncThrowingStream<Value.Sum, any Error> where Value.Sum: Sendable {
        sumSubscription(keyPath, predicate, changeTrackingRequest).throwingStream()
    }

    /// The average, now and after each change, as `Result`s.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await average in repository.averageSubscription(\Review.stars) {
    ///     print(try average.get() ?? 0)   // nil until the first review
    /// }
    /// ```
    public func averageSubscription<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncStream<Result<Value.Average?, RepositoryError>> where Value.Average: Sendable {
        valueSubscription(.average, keyPath, predicate, changeTrackingRequest) { Value.average(from: $0) }.resultStream()
    }

    /// The average, now and after each change, ending with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await average in repository.averageThrowingSubscription(\Movie.rating, where: \.year >= 1990) {
    ///     print(average ?? 0)
    /// }
    /// ```
    public func averageThrowingSubscription<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncThrowingStream<Value.Average?, any Error> where Value.Average: Sendable {
        valueSubscription(.average, keyPath, predicate, changeTrackingRequest) { Value.average(from: $0) }.throwingStream()
    }

    /// The minimum, now and after each change, as `Result`s.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await earliest in repository.minSubscription(\Movie.releaseDate) {
    ///     if case .success(let date?) = earliest { print(date) }
    /// }
    /// ```
    public func minSubscription<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncStream<Result<Value.Bound?, RepositoryError>> where Value.Bound: Sendable {
        valueSubscription(.min, keyPath, predicate, changeTrackingRequest) { Value.bound(from: $0) }.resultStream()
    }

    /// The minimum, now and after each change, ending with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await lowest in repository.minThrowingSubscription(\Review.stars) {
    ///     print(lowest ?? 0)   // an Int32?
    /// }
    /// ```
    public func minThrowingSubscription<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncThrowingStream<Value.Bound?, any Error> where Value.Bound: Sendable {
        valueSubscription(.min, keyPath, predicate, changeTrackingRequest) { Value.bound(from: $0) }.throwingStream()
    }

    /// The maximum, now and after each change, as `Result`s.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await best in repository.maxSubscription(\Movie.rating, where: \.year == 1995) {
    ///     if case .success(let rating?) = best { print(rating) }
    /// }
    /// ```
    public func maxSubscription<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncStream<Result<Value.Bound?, RepositoryError>> where Value.Bound: Sendable {
        valueSubscription(.max, keyPath, predicate, changeTrackingRequest) { Value.bound(from: $0) }.resultStream()
    }

    /// The maximum, now and after each change, ending with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await latest in repository.maxThrowingSubscription(\Movie.releaseDate) {
    ///     if let latest { print(latest) }
    /// }
    /// ```
    public func maxThrowingSubscription<Managed: PersistentModel, Value: OrderedAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, where predicate: FetchPredicate<Managed>? = nil,
        changeTrackingRequest: (any ChangeTrackingRequest)? = nil
    ) -> AsyncThrowingStream<Value.Bound?, any Error> where Value.Bound: Sendable {
        valueSubscription(.max, keyPath, predicate, changeTrackingRequest) { Value.bound(from: $0) }.throwingStream()
    }

    private func aggregate<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws(RepositoryError) -> T {
        // Aggregates run in SQL over what is stored, also inside a transaction.
        do {
            try Task.checkCancellation()
            let container = container
            return try await Self.detached { try body(container.newBackgroundContext()) }
        } catch {
            throw RepositoryError(error)
        }
    }

    /// A subscription to what `compute` finds among the objects `predicate` matches,
    /// recomputed after the saves that change objects of their entity.
    private func aggregateSubscription<Managed: ManagedObject, Output: Sendable>(
        _ predicate: FetchPredicate<Managed>?, _ changeTrackingRequest: (any ChangeTrackingRequest)?,
        _ compute: @escaping @Sendable (ObjectContext) throws -> Output
    ) -> RepositorySubscription<Output> {
        let tracked =
            changeTrackingRequest.map(trackedEntities)
            ?? container.relevantEntities(for: FetchRequest<Managed>(predicate: predicate))
        return RepositorySubscription(container: container, relevantEntities: tracked, failureEnds: false, compute: compute)
    }

    private func countSubscription<Managed: ManagedObject>(
        _ predicate: FetchPredicate<Managed>?, _ changeTrackingRequest: (any ChangeTrackingRequest)?
    ) -> RepositorySubscription<Int> {
        aggregateSubscription(predicate, changeTrackingRequest) { context in
            try context.count(for: FetchRequest<Managed>(predicate: predicate))
        }
    }

    private func sumSubscription<Managed: PersistentModel, Value: AggregatableAttribute & SendableMetatype>(
        _ keyPath: KeyPath<Managed, Value>, _ predicate: FetchPredicate<Managed>?,
        _ changeTrackingRequest: (any ChangeTrackingRequest)?
    ) -> RepositorySubscription<Value.Sum> where Value.Sum: Sendable {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return aggregateSubscription(predicate, changeTrackingRequest) { context in
            try context.sum(key: key, of: Value.self, where: predicate)
        }
    }

    private func valueSubscription<Managed: PersistentModel, Value, Output: Sendable>(
        _ function: AggregateFunction, _ keyPath: KeyPath<Managed, Value>, _ predicate: FetchPredicate<Managed>?,
        _ changeTrackingRequest: (any ChangeTrackingRequest)?, _ convert: @escaping @Sendable (AttributeValue) -> Output
    ) -> RepositorySubscription<Output> {
        let key = KeyPathNames.name(of: keyPath, root: Managed.self)
        return aggregateSubscription(predicate, changeTrackingRequest) { context in
            convert(try context.aggregateValue(function, key: key, where: predicate))
        }
    }
}
