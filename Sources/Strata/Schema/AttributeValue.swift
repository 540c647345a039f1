import Foundation

/// One stored attribute value.
///
/// Managed objects keep their attribute values in an array of `AttributeValue`, indexed by
/// attribute number; stores read and write this type directly. Integers of every width are held
/// as `Int64` (the attribute's ``AttributeType`` says the width), and `Codable` values as their
/// JSON encoding.
///
/// Literals make default values and validation bounds easy to write:
///
/// ```swift
/// let minimum: AttributeValue = 0        // .integer(0)
/// let title: AttributeValue = "Untitled" // .string("Untitled")
/// ```
public enum AttributeValue: Sendable, Hashable {
    /// No value (`nil`).
    case null
    /// An integer of any width.
    case integer(Int64)
    /// A double-precision number.
    case double(Double)
    /// A single-precision number.
    case float(Float)
    /// An exact decimal number.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A Boolean.
    case boolean(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case url(URL)
    /// A `Codable` value encoded as JSON (UTF-8, keys sorted).
    case codable(Data)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether the value can be stored in an attribute of `type` without conversion.
    public func matches(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _): true
        case (.integer(let value), _) where type.isInteger: type.integerRange?.contains(value) ?? false
        case (.double, .double), (.float, .float), (.decimal, .decimal), (.string, .string),
            (.boolean, .boolean), (.date, .date), (.data, .binaryData), (.uuid, .uuid), (.url, .uri),
            (.codable, .codable):
            true
        default: false
        }
    }

    /// Converts a value of a compatible type to `type` (an integer literal to a double
    /// attribute, say), or returns `nil` when no exact conversion exists.
    public func converted(to type: AttributeType) -> AttributeValue? {
        if matches(type) { return self }
        switch (self, type) {
        case (.integer(let value), .double):
            return .double(Double(value))
        case (.integer(let value), .float):
            return .float(Float(value))
        case (.integer(let value), .decimal):
            return .decimal(Decimal(value))
        case (.double(let value), .float):
            // Rounding to the nearest Float is expected (literals are written as Doubles), but a
            // finite value beyond Float's range would silently become infinity.
            let rounded = Float(value)
            return rounded.isFinite || !value.isFinite ? .float(rounded) : nil
        case (.double(let value), .decimal):
            return Decimal(string: "\(value)", locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case (.double(let value), _) where type.isInteger:
            guard let integer = Int64(exactly: value) else { return nil }
            return AttributeValue.integer(integer).converted(to: type)
        case (.string(let value), .uri):
            return URL(string: value).map { .url($0) }
        case (.string(let value), .uuid):
            return UUID(uuidString: value).map { .uuid($0) }
        default:
            return nil
        }
    }

    /// A short name for the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .integer: "Integer"
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .data: "Binary"
        case .uuid: "UUID"
        case .url: "URI"
        case .codable: "Codable"
        }
    }
}

extension AttributeValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    /// Creates ``AttributeValue/null`` from `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// Creates an ``AttributeValue/integer(_:)`` value from a literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates an ``AttributeValue/double(_:)`` value from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates an ``AttributeValue/string(_:)`` value from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an ``AttributeValue/boolean(_:)`` value from a literal.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

extension AttributeValue: CustomStringConvertible {
    /// A readable rendering, for logs, messages and tools.
    public var description: String {
        switch self {
        case .null: "nil"
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .float(let value): "\(value)"
        case .decimal(let value): "\(value)"
        case .string(let value): String(reflecting: value)
        case .boolean(let value): "\(value)"
        case .date(let value): value.formatted(.iso8601)
        case .data(let value): "<\(value.count) bytes>"
        case .uuid(let value): value.uuidString
        case .url(let value): value.absoluteString
        case .codable(let value): String(decoding: value, as: UTF8.self)
        }
    }
}

// MARK: - Codable (the serialized schema form)

extension AttributeValue: Codable {
    private enum CodingKeys: String, CodingKey { case type, value }

    // Every payload is written as a string so that the encoding is exact (doubles, decimals,
    // dates) and independent of the JSON encoder's number formatting.
    /// Encodes the value as its type name and an exact string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let (type, text): (String, String?) =
            switch self {
            case .null: ("null", nil)
            case .integer(let value): ("integer", String(value))
            case .double(let value): ("double", String(value.bitPattern, radix: 16))
            case .float(let value): ("float", String(value.bitPattern, radix: 16))
            case .decimal(let value): ("decimal", value.description)
            case .string(let value): ("string", value)
            case .boolean(let value): ("boolean", value ? "true" : "false")
            case .date(let value): ("date", String(value.timeIntervalSinceReferenceDate.bitPattern, radix: 16))
            case .data(let value): ("data", value.base64EncodedString())
            case .uuid(let value): ("uuid", value.uuidString)
            case .url(let value): ("url", value.absoluteString)
            case .codable(let value): ("codable", value.base64EncodedString())
            }
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(text, forKey: .value)
    }

    /// Decodes a value written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        if type == "null" {
            self = .null
            return
        }
        let text = try container.decode(String.self, forKey: .value)
        func corrupt() -> DecodingError {
            .dataCorruptedError(forKey: .value, in: container, debugDescription: "Invalid \(type) value '\(text)'")
        }
        switch type {
        case "integer":
            guard let value = Int64(text) else { throw corrupt() }
            self = .integer(value)
        case "double":
            guard let bits = UInt64(text, radix: 16) else { throw corrupt() }
            self = .double(Double(bitPattern: bits))
        case "float":
            guard let bits = UInt32(text, radix: 16) else { throw corrupt() }
            self = .float(Float(bitPattern: bits))
        case "decimal":
            guard let value = DecimalText.decimal(text) else { throw corrupt() }
            self = .decimal(value)
        case "string":
            self = .string(text)
        case "boolean":
            switch text {
            case "true": self = .boolean(true)
            case "false": self = .boolean(false)
            default: throw corrupt()
            }
        case "date":
            guard let bits = UInt64(text, radix: 16) else { throw corrupt() }
            self = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        case "data":
            guard let value = Data(base64Encoded: text) else { throw corrupt() }
            self = .data(value)
        case "uuid":
            guard let value = UUID(uuidString: text) else { throw corrupt() }
            self = .uuid(value)
        case "url":
            guard let value = URL(string: text) else { throw corrupt() }
            self = .url(value)
        case "codable":
            guard let value = Data(base64Encoded: text) else { throw corrupt() }
            self = .codable(value)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "Unknown attribute value type '\(type)'")
        }
    }
}
