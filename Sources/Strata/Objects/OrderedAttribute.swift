import Foundation

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

extension OrderedAttribute where Self: BinaryInteger {
    /// The value in the attribute's own type (an `Int16` attribute's maximum is an `Int16`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let newest = Int16.bound(from: .integer(2024))       // 2024, an Int16
    /// let tooLarge = Int16.bound(from: .integer(70_000))   // nil: it does not fit
    /// ```
    public static func bound(from value: AttributeValue) -> Self? { aggregateInteger(value).flatMap { Self(exactly: $0) } }
}

extension OrderedAttribute where Self: BinaryFloatingPoint {
    /// The value in the attribute's own type.
    ///
    /// For example:
    ///
    /// ```swift
    /// let best = Float.bound(from: .double(4.5))   // 4.5, a Float
    /// ```
    public static func bound(from value: AttributeValue) -> Self? { aggregateDouble(value).map { Self($0) } }
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
