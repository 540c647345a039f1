import Foundation

// Key-path operators: `\Movie.year > 1990 && !(\Movie.title == "Heat")`.

/// The property equals the value (`==`); compare with `nil` for an empty value or relationship.
public func == <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.equalTo, value)
}

/// The property differs from the value (`!=`); `nil` differs from every value.
public func != <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.notEqualTo, value)
}

/// The property is less than the value; `nil` is never less or greater than anything.
public func < <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.lessThan, value)
}

/// The property is less than or equal to the value.
public func <= <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.lessThanOrEqualTo, value)
}

/// The property is greater than the value.
public func > <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.greaterThan, value)
}

/// The property is greater than or equal to the value.
public func >= <Model: EntityModel, Value: PredicateArgument>(keyPath: KeyPath<Model, Value>, value: Value)
    -> FetchPredicate<Model>
{
    keyPath.comparison(.greaterThanOrEqualTo, value)
}

/// A string-valued property: `String` or `String?`.
public protocol PredicateStringValue {}
extension String: PredicateStringValue {}
extension Optional: PredicateStringValue where Wrapped == String {}

extension KeyPath where Root: EntityModel {
    /// The dotted name of the key path (`"director.name"`).
    var predicateKey: String { KeyPathNames.name(of: self, root: Root.self) }

    fileprivate func comparison(
        _ comparisonOperator: ComparisonOperator, _ value: some PredicateArgument, options: ComparisonOptions = []
    ) -> FetchPredicate<Root> {
        FetchPredicate(
            .comparison(.keyPath(predicateKey), comparisonOperator, value.predicateExpression, options: options))
    }

    /// The property lies in the closed range (`BETWEEN {low, high}`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let nineties = (\Movie.year).between(1990...1999)
    /// ```
    public func between<Bound: PredicateArgument & Comparable>(_ range: ClosedRange<Bound>) -> FetchPredicate<Root> {
        FetchPredicate(
            .comparison(
                .keyPath(predicateKey), .between,
                .list([range.lowerBound.predicateExpression, range.upperBound.predicateExpression])))
    }

    /// The property equals one of the values (`IN`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let classics = try context.fetch(Movie.self, where: (\Movie.title).in(["Heat", "Ronin", "Alien"]))
    /// ```
    public func `in`<Values: Sequence>(_ values: Values) -> FetchPredicate<Root>
    where Values.Element: PredicateArgument {
        FetchPredicate(.comparison(.keyPath(predicateKey), .in, .list(values.map(\.predicateExpression))))
    }
}

extension KeyPath where Root: EntityModel, Value: PredicateStringValue {
    /// The string equals `text` under the options (`==[cd]` with both options).
    ///
    /// For example:
    ///
    /// ```swift
    /// let heat = (\Movie.title).equal(to: "heat", options: .caseInsensitive)   // "Heat", "HEAT"
    /// ```
    public func equal(to text: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.equalTo, text, options: options)
    }

    /// The string differs from `text` under the options.
    ///
    /// For example:
    ///
    /// ```swift
    /// let titled = (\Movie.title).notEqual(to: "untitled", options: .caseInsensitive)
    /// ```
    public func notEqual(to text: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.notEqualTo, text, options: options)
    }

    /// The string contains `text` (`CONTAINS`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let emile = (\Person.name).contains("emile", options: .caseAndDiacriticInsensitive)   // "Émile Zola"
    /// ```
    public func contains(_ text: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.contains, text, options: options)
    }

    /// The string starts with `prefix` (`BEGINSWITH`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let leadingThe = (\Movie.title).beginsWith("the ", options: .caseInsensitive)
    /// ```
    public func beginsWith(_ prefix: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.beginsWith, prefix, options: options)
    }

    /// The string ends with `suffix` (`ENDSWITH`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let sequels = (\Movie.title).endsWith(" 2")
    /// ```
    public func endsWith(_ suffix: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.endsWith, suffix, options: options)
    }

    /// The whole string matches a pattern where `*` matches any run of characters and `?` one
    /// character (`LIKE`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let rhymes = (\Movie.title).like("?eat")   // "Heat", "Beat"; not "Wheat"
    /// ```
    public func like(_ pattern: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.like, pattern, options: options)
    }

    /// The whole string matches an ICU regular expression (`MATCHES`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let numbered = (\Movie.title).matches(".* [0-9]+")   // "Alien 3"; not "2001: A Space Odyssey"
    /// ```
    public func matches(_ regularExpression: String, options: ComparisonOptions = []) -> FetchPredicate<Root> {
        comparison(.matches, regularExpression, options: options)
    }
}

extension KeyPath where Root: EntityModel, Value: Sequence, Value.Element: EntityModel {
    /// The to-many relationship contains the object (`CONTAINS`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let filmography = try context.fetch(Movie.self, where: (\Movie.cast).contains(person))
    /// ```
    public func contains(_ object: Value.Element) -> FetchPredicate<Root> {
        FetchPredicate(.comparison(.keyPath(predicateKey), .contains, .objectID(object.objectID)))
    }

    /// The number of related objects (`@count`), for comparisons such as `(\Movie.reviews).count > 3`.
    public var count: CollectionCount<Root> { CollectionCount(key: predicateKey + ".@count") }
}

/// The number of objects in a to-many relationship, to compare with a number.
public struct CollectionCount<Model: EntityModel>: Sendable {
    let key: String

    private func comparison(_ comparisonOperator: ComparisonOperator, _ count: Int) -> FetchPredicate<Model> {
        FetchPredicate(.comparison(.keyPath(key), comparisonOperator, .value(.integer(Int64(count)))))
    }

    /// The count equals `count`.
    public static func == (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.equalTo, rhs) }
    /// The count differs from `count`.
    public static func != (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.notEqualTo, rhs) }
    /// The count is below `count`.
    public static func < (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.lessThan, rhs) }
    /// The count is at most `count`.
    public static func <= (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.lessThanOrEqualTo, rhs) }
    /// The count is above `count`.
    public static func > (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.greaterThan, rhs) }
    /// The count is at least `count`.
    public static func >= (lhs: Self, rhs: Int) -> FetchPredicate<Model> { lhs.comparison(.greaterThanOrEqualTo, rhs) }
}
