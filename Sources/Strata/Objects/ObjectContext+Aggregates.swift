import Foundation

extension ObjectContext {
    /// Property values and aggregates instead of objects: Core Data's dictionary result type.
    ///
    /// Each result is a dictionary from the names of ``FetchRequest/propertiesToFetch`` (every
    /// attribute of the entity when empty) to values. With
    /// ``FetchRequest/propertiesToGroupBy`` there is one result per group, in the order of the
    /// group keys unless the request has sort descriptors, and
    /// ``FetchRequest/havingPredicate`` keeps only some groups.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = FetchRequest<Movie>(predicate: \.year >= 1990)
    /// request.propertiesToFetch = [.attribute("director.name", as: "director"), .count(as: "movies")]
    /// request.propertiesToGroupBy = ["director.name"]
    /// for row in try context.fetchDictionaries(request) {
    ///     print(row["director"] ?? .null, row["movies"] ?? .null)
    /// }
    /// ```
    ///
    /// Everything is computed by the store in SQL, from saved data: unsaved changes in this
    /// context are not included (as in Core Data). Save first when they should count.
    ///
    /// - Throws: ``StrataError`` for unknown keys, aggregates of the wrong type, or store errors.
    public func fetchDictionaries<Model: ManagedObject>(_ request: FetchRequest<Model>) throws -> [[String:
        AttributeValue]]
    {
        let query = try query(for: request)
        var properties = request.propertiesToFetch
        if properties.isEmpty {
            properties = query.entity.attributes.filter { !$0.isTransient }.map { FetchedProperty.attribute($0.name) }
        }
        let havingPredicate = request.havingPredicate
        var plan = query.plan
        if havingPredicate != nil {
            // Groups are filtered here, so the limit and offset apply afterwards.
            plan.fetchLimit = nil
            plan.fetchOffset = 0
        }
        let valuesRequest = StoreValuesRequest(
            plan: plan, columns: properties.map(\.column), groupBy: request.propertiesToGroupBy,
            returnsDistinctResults: request.returnsDistinctResults)
        var results: [[String: AttributeValue]] = []
        for store in try stores(for: query) {
            for row in try store.fetchValues(valuesRequest) {
                var dictionary: [String: AttributeValue] = [:]
                for (property, value) in zip(properties, row) { dictionary[property.name] = value }
                results.append(dictionary)
            }
        }
        if let havingPredicate {
            results = try results.filter { try HavingEvaluator.evaluate(havingPredicate, on: $0) }
            if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { results = Array(results.prefix(request.fetchLimit)) }
        }
        return results
    }

    /// One aggregate of an attribute over the saved objects matching a predicate, computed in SQL.
    func aggregateValue<Model: PersistentModel, Value>(
        _ function: AggregateFunction, _ keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>?
    ) throws -> AttributeValue {
        try aggregateValue(function, key: KeyPathNames.name(of: keyPath, root: Model.self), where: predicate)
    }

    func aggregateValue<Model: PersistentModel>(
        _ function: AggregateFunction, key: String, where predicate: FetchPredicate<Model>?
    ) throws -> AttributeValue {
        try aggregateValue(function, key: key, of: query(for: FetchRequest<Model>(predicate: predicate)))
    }

    /// One aggregate of the attribute named `key` over the saved objects a query matches (made
    /// by ``query(for:)``, or resolved earlier and readied with ``prepareToQuery()``).
    func aggregateValue(_ function: AggregateFunction, key: String, of query: ObjectQuery) throws -> AttributeValue {
        let request = StoreValuesRequest(plan: query.plan, columns: [.aggregate(function, key)])
        for store in try stores(for: query) { return try store.fetchValues(request).first?.first ?? .null }
        return .null
    }

    /// The sum of an attribute over the saved objects that match (0 when none do), computed by
    /// the store without loading objects.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total: Decimal = try context.sum(\Movie.boxOffice, where: \.year >= 1990)
    /// let reviews: Int = try context.sum(\Review.stars)
    /// ```
    ///
    /// Integers sum to `Int`, floating-point numbers to `Double`, decimals exactly to `Decimal`.
    /// An integer sum is exact even when it leaves `Int`'s range on the way and comes back.
    ///
    /// - Throws: ``StrataError/Code/valueOutOfRange`` when an integer sum is beyond `Int`'s
    ///   range; ``StrataError`` for an unknown key or a store error.
    public func sum<Model: PersistentModel, Value: AggregatableAttribute>(
        _ keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) throws -> Value.Sum {
        try sum(key: KeyPathNames.name(of: keyPath, root: Model.self), of: Value.self, where: predicate)
    }

    /// The sum of the attribute named `key`, typed as `Value`'s sum.
    func sum<Model: PersistentModel, Value: AggregatableAttribute>(
        key: String, of _: Value.Type, where predicate: FetchPredicate<Model>?
    ) throws -> Value.Sum {
        let value = try aggregateValue(.sum, key: key, where: predicate)
        // The store gives an integer sum beyond Int64's range as its nearest Double.
        if case .double(let total) = value, Value.Sum.self is any BinaryInteger.Type {
            throw StrataError(
                .valueOutOfRange,
                "The sum of \(Model.entity.name).\(key) is about \(total), beyond the range of \(Value.Sum.self); compute it with fetchDictionaries (a .sum property gives a Double) or sum a Decimal attribute.",
                entityName: Model.entity.name, propertyName: key)
        }
        return Value.sum(from: value)
    }

    /// The sum of an attribute as the number type you name, as the repository kit's `as:`
    /// does (0 when no object matches).
    ///
    /// For example:
    ///
    /// ```swift
    /// let score: Int64 = try context.sum(\Player.score, as: Int64.self)
    /// let stars = try context.sum(\Review.stars, as: Double.self, where: \.movie == heat)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/valueOutOfRange`` when the sum does not fit `Result` (an
    ///   integer type too small, or a fraction for an integer type); ``StrataError`` for an
    ///   unknown key or a store error.
    public func sum<Model: PersistentModel, Value: AggregatableAttribute, Result: AggregateResult>(
        _ keyPath: KeyPath<Model, Value>, as _: Result.Type, where predicate: FetchPredicate<Model>? = nil
    ) throws -> Result {
        let key = KeyPathNames.name(of: keyPath, root: Model.self)
        let value = try aggregateValue(.sum, key: key, where: predicate)
        if value.isNull, let zero = Result.aggregateResult(from: .integer(0)) { return zero }
        guard let result = Result.aggregateResult(from: value) else {
            throw StrataError(
                .valueOutOfRange, "The sum of \(Model.entity.name).\(key), \(value), does not fit \(Result.self).",
                entityName: Model.entity.name, propertyName: key)
        }
        return result
    }

    /// The average of an attribute over the saved objects that match, or `nil` when none do.
    ///
    /// Decimals average exactly to `Decimal`; other numbers to `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let rating = try context.average(\Movie.rating, where: \.year >= 1990)   // Double?, nil without movies
    /// let boxOffice = try context.average(\Movie.boxOffice)                    // Decimal?, exact
    /// ```
    public func average<Model: PersistentModel, Value: AggregatableAttribute>(
        _ keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) throws -> Value.Average? {
        let value = try aggregateValue(.average, keyPath, where: predicate)
        return Value.average(from: value)
    }

    /// The smallest value of an attribute among the saved objects that match, or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let earliest = try context.min(\Movie.releaseDate)                     // Date?
    /// let lowest = try context.min(\Review.stars, where: \.movie == movie)   // nil without reviews
    /// ```
    public func min<Model: PersistentModel, Value: OrderedAttribute>(
        _ keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) throws -> Value.Bound? {
        let value = try aggregateValue(.min, keyPath, where: predicate)
        return Value.bound(from: value)
    }

    /// The largest value of an attribute among the saved objects that match, or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let newest = try context.max(\Movie.year)            // Int16?
    /// let last = try context.max(\Movie.title)             // the last title in order
    /// ```
    public func max<Model: PersistentModel, Value: OrderedAttribute>(
        _ keyPath: KeyPath<Model, Value>, where predicate: FetchPredicate<Model>? = nil
    ) throws -> Value.Bound? {
        let value = try aggregateValue(.max, keyPath, where: predicate)
        return Value.bound(from: value)
    }
}
