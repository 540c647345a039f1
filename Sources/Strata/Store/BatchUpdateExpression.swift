import Foundation

/// A new value of one attribute in a batch update: a constant, another attribute of the same
/// object, or arithmetic on them (what Core Data expresses with `NSExpression`).
///
/// ```swift
/// let raise: BatchUpdateExpression = .key("rating") + 1
/// let scaled: BatchUpdateExpression = .key("boxOffice") * 1.1
/// ```
public indirect enum BatchUpdateExpression: Sendable, Hashable, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A constant.
    case value(AttributeValue)
    /// The current value of an attribute of the object being updated.
    case key(String)
    /// The sum of two expressions.
    case add(BatchUpdateExpression, BatchUpdateExpression)
    /// The difference of two expressions.
    case subtract(BatchUpdateExpression, BatchUpdateExpression)
    /// The product of two expressions.
    case multiply(BatchUpdateExpression, BatchUpdateExpression)
    /// The quotient of two expressions (integer division when both are integers).
    case divide(BatchUpdateExpression, BatchUpdateExpression)

    /// An integer constant.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A floating-point constant.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A string constant.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// A Boolean constant.
    public init(booleanLiteral value: Bool) { self = .value(.boolean(value)) }
    /// No value.
    public init(nilLiteral: ()) { self = .value(.null) }

    /// `lhs + rhs`.
    public static func + (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .add(lhs, rhs)
    }
    /// `lhs - rhs`.
    public static func - (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .subtract(lhs, rhs)
    }
    /// `lhs * rhs`.
    public static func * (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .multiply(lhs, rhs)
    }
    /// `lhs / rhs`.
    public static func / (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .divide(lhs, rhs)
    }

    /// The attribute names the expression reads.
    public var keys: [String] {
        switch self {
        case .value: []
        case .key(let name): [name]
        case .add(let lhs, let rhs), .subtract(let lhs, let rhs), .multiply(let lhs, let rhs), .divide(let lhs, let rhs):
            lhs.keys + rhs.keys
        }
    }
}
