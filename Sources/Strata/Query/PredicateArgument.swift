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

/// Values of any type, as Core Data's `argumentArray:` and the stack kit's builders take them,
/// turned into predicate arguments.
enum PredicateArguments {
    /// `value` as a predicate argument: itself when it is one, `nil` for an empty optional, and
    /// a list for an array or set of arguments of any types.
    ///
    /// - Parameter position: The argument's 1-based position, for the error message.
    /// - Throws: ``StrataError/Code/invalidPredicate`` for a value of a type that cannot be a
    ///   predicate value.
    static func argument(from value: Any, position: Int? = nil) throws -> any PredicateArgument {
        if let argument = value as? any PredicateArgument { return argument }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return AttributeValue.null }
            return try argument(from: wrapped, position: position)
        }
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            return QueryExpression.list(
                try mirror.children.map { try argument(from: $0.value, position: position).predicateExpression })
        }
        if let decimal = value as? NSDecimalNumber { return decimal.decimalValue }
        if let number = value as? NSNumber {
            // Integers keep every digit (a double would round IDs beyond 2^53).
            switch String(cString: number.objCType) {
            case "f", "d": return number.doubleValue
            case "Q", "L", "I", "S", "C": return UInt64(truncating: number) <= UInt64(Int64.max) ? number.int64Value : number.doubleValue
            default: return number.int64Value
            }
        }
        let place = position.map { "Argument \($0)" } ?? "The value"
        throw StrataError(
            .invalidPredicate,
            "\(place) is a \(type(of: value)), which cannot be a predicate value. Use a string, number, Bool, Date, Data, UUID, URL, Decimal, ObjectID or managed object, nil, or an array or set of them.")
    }
}
