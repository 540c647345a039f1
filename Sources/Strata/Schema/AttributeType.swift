import Foundation

/// The type of an attribute's values.
///
/// Each case maps to one Swift type and one storage encoding. The names in
/// ``xcodeName`` are the ones Xcode writes into `.xcdatamodel` files.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// A 16-bit signed integer (`Int16`).
    case integer16
    /// A 32-bit signed integer (`Int32`).
    case integer32
    /// A 64-bit signed integer (`Int64`, or `Int` in Swift models).
    case integer64
    /// A double-precision floating-point number (`Double`).
    case double
    /// A single-precision floating-point number (`Float`).
    case float
    /// An exact decimal number (`Decimal`); sums and comparisons never round through `Double`.
    case decimal
    /// A string (`String`).
    case string
    /// A Boolean (`Bool`).
    case boolean
    /// A point in time (`Date`).
    case date
    /// Raw bytes (`Data`), optionally stored outside the main table.
    case binaryData
    /// A universally unique identifier (`UUID`).
    case uuid
    /// A URL (`URL`).
    case uri
    /// Any `Codable` value, stored as JSON (Xcode's "Transformable").
    case codable

    /// The type name Xcode writes in a model file's `attributeType` attribute.
    public var xcodeName: String {
        switch self {
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .codable: "Transformable"
        }
    }

    /// Creates an attribute type from the name Xcode writes in model files.
    public init?(xcodeName: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else {
            return nil
        }
        self = match
    }

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .double, .float, .decimal: true
        default: false
        }
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: true
        default: false
        }
    }

    /// The range of values an integer type holds, or `nil` for other types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }

    /// A readable rendering, for logs, messages and tools.
    public var description: String { xcodeName }
}
