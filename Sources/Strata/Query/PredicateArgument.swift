import Foundation

/// A value that can stand for `%@` in a format string or on the right of a key-path operator.
///
/// Every attribute value type conforms (`Int`, `String`, `Date`, `Decimal`, `UUID`, `URL`,
/// `Data`, …), as do optionals (`nil` is `nil`), ``ObjectID``, ``TypedObjectID``, managed
/// objects (compared by ID), and arrays and sets of these (for `IN`).
public protocol PredicateArgument {
    /// The constant expression this value stands for.
    var predicateExpression: QueryExpression { get }
}

extension Int: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Int16: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Int32: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Int64: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Double: PredicateArgument {
    /// A floating-point constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Float: PredicateArgument {
    /// A floating-point constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Decimal: PredicateArgument {
    /// An exact decimal constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension String: PredicateArgument {
    /// A string constant (or, for `%K`, a key path).
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Substring: PredicateArgument {
    /// A string constant.
    public var predicateExpression: QueryExpression { .value(.string(String(self))) }
}
extension Bool: PredicateArgument {
    /// A Boolean constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Date: PredicateArgument {
    /// A date constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension Data: PredicateArgument {
    /// A binary constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension UUID: PredicateArgument {
    /// A UUID constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension URL: PredicateArgument {
    /// A URL constant.
    public var predicateExpression: QueryExpression { .value(storedValue) }
}
extension AttributeValue: PredicateArgument {
    /// The value as a constant.
    public var predicateExpression: QueryExpression { .value(self) }
}
extension QueryExpression: PredicateArgument {
    /// The expression itself.
    public var predicateExpression: QueryExpression { self }
}
extension ObjectID: PredicateArgument {
    /// The object with this ID.
    public var predicateExpression: QueryExpression { .objectID(self) }
}
extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    /// The wrapped value's expression, or `nil`.
    public var predicateExpression: QueryExpression { self?.predicateExpression ?? .value(.null) }
}
extension Array: PredicateArgument where Element: PredicateArgument {
    /// A list of the elements' expressions, in order.
    public var predicateExpression: QueryExpression { .list(map(\.predicateExpression)) }
}
extension Set: PredicateArgument where Element: PredicateArgument {
    /// A list of the elements' expressions.
    public var predicateExpression: QueryExpression { .list(map(\.predicateExpression)) }
}
