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

    /// One aggregate of the attribute named `key` over the saved objects a query resolved
    /// earlier matches (a live aggregate's refresh: its predicate is not resolved again).
    func aggregateValue(_ function: AggregateFunction, key: String, of query: ObjectQuery) throws -> AttributeValue {
        try prepareToQuery()
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

/// An attribute type that can be summed and averaged: integers (sum `Int`, average `Double`),
/// `Double` and `Float` (both `Double`), `Decimal` (both `Decimal`, exact), and optionals of them.
public protocol AggregatableAttribute: AttributeValueConvertible {
    /// The type of a sum.
    associatedtype Sum
    /// The type of an average.
    associatedtype Average
    /// Reads a sum computed by the store.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Int16.sum(from: .integer(1_234))           // 1234, an Int
    /// let exact = Decimal.sum(from: .decimal(187_436_818))   // a Decimal
    /// ```
    static func sum(from value: AttributeValue) -> Sum
    /// Reads an average computed by the store (`nil` for no rows).
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Int32.average(from: .double(3.5))   // 3.5, a Double
    /// let none = Int32.average(from: .null)          // nil: no rows
    /// ```
    static func average(from value: AttributeValue) -> Average?
}

/// An attribute type with an order, for `min` and `max`.
public protocol OrderedAttribute: AttributeValueConvertible {
    /// The type of the smallest or largest value.
    associatedtype Bound
    /// Reads a value computed by the store (`nil` for no rows).
    ///
    /// For example:
    ///
    /// ```swift
    /// let newest = Int16.bound(from: .integer(2024))   // 2024, an Int16
    /// let first = Date.bound(from: .null)              // nil: no rows
    /// ```
    static func bound(from value: AttributeValue) -> Bound?
}

private func integer(_ value: AttributeValue) -> Int? {
    switch value {
    case .integer(let number): Int(exactly: number)
    case .double(let number): Int(exactly: number.rounded())
    default: nil
    }
}

private func double(_ value: AttributeValue) -> Double? {
    switch value {
    case .integer(let number): Double(number)
    case .double(let number): number
    case .float(let number): Double(number)
    case .decimal(let number): NSDecimalNumber(decimal: number).doubleValue
    default: nil
    }
}

extension AggregatableAttribute where Self: BinaryInteger {
    /// The sum as an `Int`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stars = Int32.sum(from: .integer(42))   // 42, an Int
    /// ```
    public static func sum(from value: AttributeValue) -> Int { integer(value) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Int16.average(from: .double(1994.5))   // 1994.5
    /// ```
    public static func average(from value: AttributeValue) -> Double? { double(value) }
}

extension AggregatableAttribute where Self: BinaryFloatingPoint {
    /// The sum as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Float.sum(from: .double(12.5))   // 12.5, a Double
    /// ```
    public static func sum(from value: AttributeValue) -> Double { double(value) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Double.average(from: .double(3.75))   // 3.75
    /// ```
    public static func average(from value: AttributeValue) -> Double? { double(value) }
}

extension Int: AggregatableAttribute {}
extension Int16: AggregatableAttribute {}
extension Int32: AggregatableAttribute {}
extension Int64: AggregatableAttribute {
    /// The sum as an `Int64`, the attribute's own type.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Int64.sum(from: .integer(9_000_000_000))   // an Int64
    /// ```
    public static func sum(from value: AttributeValue) -> Int64 { integer(value).map(Int64.init) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Int64.average(from: .integer(12))   // 12.0
    /// ```
    public static func average(from value: AttributeValue) -> Double? { double(value) }
}
extension Double: AggregatableAttribute {}
extension Float: AggregatableAttribute {}

extension Decimal: AggregatableAttribute {
    /// The exact sum.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Decimal.sum(from: .decimal(187_436_818))   // exact
    /// ```
    public static func sum(from value: AttributeValue) -> Decimal { ValueComparison.decimal(value) ?? 0 }
    /// The exact average.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Decimal.average(from: .decimal(25))   // 25, exact
    /// ```
    public static func average(from value: AttributeValue) -> Decimal? { ValueComparison.decimal(value) }
}

extension Optional: AggregatableAttribute where Wrapped: AggregatableAttribute {
    /// The wrapped type's sum.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Optional<Int16>.sum(from: .integer(42))   // 42, an Int as for Int16
    /// ```
    public static func sum(from value: AttributeValue) -> Wrapped.Sum { Wrapped.sum(from: value) }
    /// The wrapped type's average.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Optional<Double>.average(from: .null)   // nil: no rows
    /// ```
    public static func average(from value: AttributeValue) -> Wrapped.Average? { Wrapped.average(from: value) }
}

extension OrderedAttribute where Self: BinaryInteger {
    /// The value in the attribute's own type (an `Int16` attribute's maximum is an `Int16`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let newest = Int16.bound(from: .integer(2024))       // 2024, an Int16
    /// let tooLarge = Int16.bound(from: .integer(70_000))   // nil: it does not fit
    /// ```
    public static func bound(from value: AttributeValue) -> Self? { integer(value).flatMap { Self(exactly: $0) } }
}

extension OrderedAttribute where Self: BinaryFloatingPoint {
    /// The value in the attribute's own type.
    ///
    /// For example:
    ///
    /// ```swift
    /// let best = Float.bound(from: .double(4.5))   // 4.5, a Float
    /// ```
    public static func bound(from value: AttributeValue) -> Self? { double(value).map { Self($0) } }
}

extension Int: OrderedAttribute {}
extension Int16: OrderedAttribute {}
extension Int32: OrderedAttribute {}
extension Int64: OrderedAttribute {}
extension Double: OrderedAttribute {}
extension Float: OrderedAttribute {}

extension Decimal: OrderedAttribute {
    /// The exact value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let largest = Decimal.bound(from: .decimal(187_436_818))
    /// ```
    public static func bound(from value: AttributeValue) -> Decimal? { ValueComparison.decimal(value) }
}

extension Date: OrderedAttribute {
    /// The date.
    ///
    /// For example:
    ///
    /// ```swift
    /// let first = Date.bound(from: .date(Date(timeIntervalSince1970: 0)))   // 1 January 1970
    /// ```
    public static func bound(from value: AttributeValue) -> Date? {
        if case .date(let date) = value { return date }
        return nil
    }
}

extension String: OrderedAttribute {
    /// The string.
    ///
    /// For example:
    ///
    /// ```swift
    /// let firstTitle = String.bound(from: .string("Alien"))   // "Alien"
    /// ```
    public static func bound(from value: AttributeValue) -> String? {
        if case .string(let text) = value { return text }
        return nil
    }
}

extension Optional: OrderedAttribute where Wrapped: OrderedAttribute {
    /// The wrapped type's value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let earliest = Optional<Date>.bound(from: .null)   // nil: no rows
    /// ```
    public static func bound(from value: AttributeValue) -> Wrapped.Bound? { Wrapped.bound(from: value) }
}

/// Evaluates a having predicate on the rows of a grouped dictionary fetch: key paths name
/// fetched properties, the other side is a constant.
enum HavingEvaluator {
    static func evaluate(_ predicate: QueryPredicate, on row: [String: AttributeValue]) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts): return try parts.allSatisfy { try evaluate($0, on: row) }
        case .or(let parts): return try parts.contains { try evaluate($0, on: row) }
        case .not(let part): return try !evaluate(part, on: row)
        case .comparison(let comparison):
            guard case .keyPath(let key) = comparison.left else {
                throw StrataError(
                    .invalidPredicate, "A having predicate compares a fetched property (by its name) with a value.")
            }
            guard let value = row[key] else {
                throw StrataError(
                    .unknownKey,
                    "The having predicate names '\(key)', which is not a fetched property."
                        + didYouMean(key, in: row.keys),
                    propertyName: key)
            }
            let kind = kind(of: value)
            func constant(_ expression: QueryExpression) throws -> AttributeValue {
                guard case .value(let constant) = expression else {
                    throw StrataError(
                        .invalidPredicate, "A having predicate compares \(key) with a constant.", propertyName: key)
                }
                return constant
            }
            switch comparison.comparisonOperator {
            case .in:
                guard case .list(let items) = comparison.right else {
                    throw StrataError(.invalidPredicate, "IN needs a list.")
                }
                return try items.contains { ValueComparison.compare(value, try constant($0), as: kind) == 0 }
            case .between:
                guard case .list(let items) = comparison.right, items.count == 2 else {
                    throw StrataError(.invalidPredicate, "BETWEEN needs a list of two values.")
                }
                guard let low = ValueComparison.compare(value, try constant(items[0]), as: kind),
                    let high = ValueComparison.compare(value, try constant(items[1]), as: kind)
                else { return false }
                return low >= 0 && high <= 0
            default:
                let other = try constant(comparison.right)
                let order = ValueComparison.compare(value, other, as: kind)
                switch comparison.comparisonOperator {
                case .equalTo: return value.isNull ? other.isNull : order == 0
                case .notEqualTo: return value.isNull ? !other.isNull : order != 0
                case .lessThan: return order.map { $0 < 0 } ?? false
                case .lessThanOrEqualTo: return order.map { $0 <= 0 } ?? false
                case .greaterThan: return order.map { $0 > 0 } ?? false
                case .greaterThanOrEqualTo: return order.map { $0 >= 0 } ?? false
                default:
                    throw StrataError(
                        .invalidPredicate, "A having predicate supports ==, !=, <, <=, >, >=, IN and BETWEEN.",
                        propertyName: key)
                }
            }
        }
    }

    private static func kind(of value: AttributeValue) -> ValueKind {
        switch value {
        case .decimal: .decimal
        case .string, .url: .string
        case .data, .codable: .data
        case .uuid: .uuid
        default: .double
        }
    }
}

/// A number type an aggregate can be read as: every integer type, `Double`, `Float` and
/// `Decimal`. Used by ``ObjectContext/sum(_:as:where:)``.
public protocol AggregateResult {
    /// The store's aggregate as this type, or `nil` when it does not fit.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stars = Int8.aggregateResult(from: .integer(42))       // 42
    /// let tooLarge = Int8.aggregateResult(from: .integer(300))   // nil: it does not fit
    /// ```
    static func aggregateResult(from value: AttributeValue) -> Self?
}

extension AggregateResult where Self: FixedWidthInteger {
    /// The aggregate when it is a whole number in the type's range.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = UInt16.aggregateResult(from: .double(12))       // 12
    /// let fraction = UInt16.aggregateResult(from: .double(1.5))   // nil: not a whole number
    /// ```
    public static func aggregateResult(from value: AttributeValue) -> Self? {
        switch value {
        case .integer(let number): Self(exactly: number)
        case .double(let number): Self(exactly: number)
        case .decimal(let number): Int64(exactly: NSDecimalNumber(decimal: number).doubleValue).flatMap { Self(exactly: $0) }
        default: nil
        }
    }
}

extension AggregateResult where Self: BinaryFloatingPoint {
    /// The aggregate, rounded to the type's precision.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Float.aggregateResult(from: .decimal(2.5))   // 2.5
    /// ```
    public static func aggregateResult(from value: AttributeValue) -> Self? { double(value).map { Self($0) } }
}

extension Int: AggregateResult {}
extension Int8: AggregateResult {}
extension Int16: AggregateResult {}
extension Int32: AggregateResult {}
extension Int64: AggregateResult {}
extension UInt: AggregateResult {}
extension UInt8: AggregateResult {}
extension UInt16: AggregateResult {}
extension UInt32: AggregateResult {}
extension UInt64: AggregateResult {}
extension Double: AggregateResult {}
extension Float: AggregateResult {}

extension Decimal: AggregateResult {
    /// The aggregate, exact for integers and decimals.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Decimal.aggregateResult(from: .integer(1_200))   // 1200
    /// ```
    public static func aggregateResult(from value: AttributeValue) -> Decimal? { ValueComparison.decimal(value) }
}
