import Foundation

/// One side of a comparison: a value, a key path, the object itself, a variable, a list or a
/// subquery. Strata's `NSExpression`.
///
/// Key paths are dotted property names as in format strings: `"title"`, `"director.name"`,
/// `"reviews.@count"`, `"reviews.@avg.stars"`. A component that starts with `@` is a
/// collection operator (``CollectionOperator``).
public indirect enum QueryExpression: Sendable, Hashable {
    /// A constant value (`nil` is ``AttributeValue/null``).
    case value(AttributeValue)
    /// A constant object, by ID; compares with to-one relationships, `SELF` and to-many members.
    case objectID(ObjectID)
    /// A key path from the evaluated object, such as `"director.name"`.
    case keyPath(String)
    /// `SELF`: the evaluated object.
    case evaluatedObject
    /// `$name`: a template variable (see ``QueryPredicate/substituting(_:)``) or the variable
    /// of an enclosing ``subquery(collection:variable:predicate:)``.
    case variable(String)
    /// A key path applied to another expression: `$movie.title`, `SUBQUERY(...).@count`.
    case keyPathOn(QueryExpression, String)
    /// A literal collection: `{1, 2, 3}`, or an array argument.
    case list([QueryExpression])
    /// `SUBQUERY(collection, $variable, predicate)`: the members of a to-many key path for which
    /// `predicate` holds, with `$variable` naming the member.
    case subquery(collection: QueryExpression, variable: String, predicate: QueryPredicate)

    /// `nil`.
    public static var null: QueryExpression { .value(.null) }
}

extension QueryExpression: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A string constant.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// An integer constant.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A floating-point constant.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A Boolean constant.
    public init(booleanLiteral value: Bool) { self = .value(.boolean(value)) }
    /// `nil`.
    public init(nilLiteral: ()) { self = .value(.null) }
}

/// A key-path component that starts with `@` and turns a collection into one value.
public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
    /// `@count`: the number of members.
    case count = "@count"
    /// `@sum.x`: the sum of `x` over the members (0 when there are none).
    case sum = "@sum"
    /// `@avg.x`: the average of `x` over the members (`nil` when there are none).
    case average = "@avg"
    /// `@min.x`: the smallest `x` (`nil` when there are none).
    case min = "@min"
    /// `@max.x`: the largest `x` (`nil` when there are none).
    case max = "@max"
}
