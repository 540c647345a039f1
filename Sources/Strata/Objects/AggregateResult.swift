import Foundation

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
    public static func aggregateResult(from value: AttributeValue) -> Self? { aggregateDouble(value).map { Self($0) } }
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
