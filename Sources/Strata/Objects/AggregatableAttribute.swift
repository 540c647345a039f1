import Foundation

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

/// A numeric aggregate as an `Int` (nil for `NULL` and other values).
func aggregateInteger(_ value: AttributeValue) -> Int? {
    switch value {
    case .integer(let number): Int(exactly: number)
    case .double(let number): Int(exactly: number.rounded())
    default: nil
    }
}

/// A numeric aggregate as a `Double` (nil for `NULL` and other values).
func aggregateDouble(_ value: AttributeValue) -> Double? {
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
    public static func sum(from value: AttributeValue) -> Int { aggregateInteger(value) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Int16.average(from: .double(1994.5))   // 1994.5
    /// ```
    public static func average(from value: AttributeValue) -> Double? { aggregateDouble(value) }
}

extension AggregatableAttribute where Self: BinaryFloatingPoint {
    /// The sum as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = Float.sum(from: .double(12.5))   // 12.5, a Double
    /// ```
    public static func sum(from value: AttributeValue) -> Double { aggregateDouble(value) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Double.average(from: .double(3.75))   // 3.75
    /// ```
    public static func average(from value: AttributeValue) -> Double? { aggregateDouble(value) }
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
    public static func sum(from value: AttributeValue) -> Int64 { aggregateInteger(value).map(Int64.init) ?? 0 }
    /// The average as a `Double`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mean = Int64.average(from: .integer(12))   // 12.0
    /// ```
    public static func average(from value: AttributeValue) -> Double? { aggregateDouble(value) }
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
