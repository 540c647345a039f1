import Foundation

/// A Swift type that an attribute can hold directly: the integer, floating-point, decimal,
/// string, Boolean, date, data, UUID and URL types, and optionals of them.
///
/// The accessors that `@Entity` generates use this protocol to read and write an object's
/// value array without boxing. `Codable` types that are not listed here are stored as JSON
/// (``AttributeType/codable``).
public protocol AttributeValueConvertible {
    /// The attribute type that holds values of this Swift type.
    static var attributeType: AttributeType { get }
    /// Whether the Swift type admits `nil`.
    static var isOptionalType: Bool { get }
    /// Reads a stored value. A value of another kind (which typed setters never store) reads
    /// as the type's zero value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let year = Int16(storedValue: try movie.attributeValue(forKey: "year"))   // 1995
    /// let title = String(storedValue: .null)                                    // "": not a string
    /// ```
    init(storedValue: AttributeValue)
    /// The stored form of the value.
    var storedValue: AttributeValue { get }
}

extension AttributeValueConvertible {
    /// Whether the Swift type admits `nil`.
    public static var isOptionalType: Bool { false }
}

extension Int: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .integer64 }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = Int(storedValue: .integer(42))   // 42
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .integer(let value) = storedValue { self = Int(truncatingIfNeeded: value) } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .integer(Int64(self)) }
}

extension Int16: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .integer16 }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let year = Int16(storedValue: try movie.attributeValue(forKey: "year"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .integer(let value) = storedValue { self = Int16(truncatingIfNeeded: value) } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .integer(Int64(self)) }
}

extension Int32: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .integer32 }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stars = Int32(storedValue: try review.attributeValue(forKey: "stars"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .integer(let value) = storedValue { self = Int32(truncatingIfNeeded: value) } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .integer(Int64(self)) }
}

extension Int64: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .integer64 }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let key = Int64(storedValue: .integer(12))   // 12
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .integer(let value) = storedValue { self = value } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .integer(self) }
}

extension Double: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .double }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let rating = Double(storedValue: try movie.attributeValue(forKey: "rating"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .double(let value) = storedValue { self = value } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .double(self) }
}

extension Float: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .float }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let score = Float(storedValue: .float(0.5))   // 0.5
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .float(let value) = storedValue { self = value } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .float(self) }
}

extension Decimal: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .decimal }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let boxOffice = Decimal(storedValue: try movie.attributeValue(forKey: "boxOffice"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .decimal(let value) = storedValue { self = value } else { self = 0 }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .decimal(self) }
}

extension String: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .string }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let title = String(storedValue: try movie.attributeValue(forKey: "title"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .string(let value) = storedValue { self = value } else { self = "" }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .string(self) }
}

extension Bool: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .boolean }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let isSeen = Bool(storedValue: .boolean(true))   // true
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .boolean(let value) = storedValue { self = value } else { self = false }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .boolean(self) }
}

extension Date: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .date }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let released = Date(storedValue: .date(Date(timeIntervalSince1970: 818_035_200)))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .date(let value) = storedValue { self = value } else { self = Date(timeIntervalSinceReferenceDate: 0) }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .date(self) }
}

extension Data: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .binaryData }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let poster = Data(storedValue: .data(Data([0x89, 0x50, 0x4E, 0x47])))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .data(let value) = storedValue { self = value } else { self = Data() }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .data(self) }
}

extension UUID: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .uuid }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let id = UUID(storedValue: try movie.attributeValue(forKey: "id"))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .uuid(let value) = storedValue {
            self = value
        } else {
            self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .uuid(self) }
}

extension URL: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { .uri }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let trailer = URL(storedValue: .url(URL(string: "https://example.com/heat.mp4")!))
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .url(let value) = storedValue { self = value } else { self = URL(fileURLWithPath: "/") }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue { .url(self) }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    /// The attribute type that stores this Swift type.
    public static var attributeType: AttributeType { Wrapped.attributeType }
    /// Whether the Swift type admits `nil`.
    public static var isOptionalType: Bool { true }
    /// Reads a stored value; a value of another kind reads as zero, empty or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let released = Date?(storedValue: try movie.attributeValue(forKey: "releaseDate"))   // nil when not set
    /// ```
    @inlinable public init(storedValue: AttributeValue) {
        if case .null = storedValue { self = nil } else { self = Wrapped(storedValue: storedValue) }
    }
    /// The stored form of the value.
    @inlinable public var storedValue: AttributeValue {
        switch self {
        case .none: .null
        case .some(let value): value.storedValue
        }
    }
}

/// Encodes `Codable` attribute values as JSON the same way everywhere, so that equal values
/// have equal bytes (keys sorted) and change tracking can compare encodings.
enum CodableAttributeCoding {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        return try decoder.decode(type, from: data)
    }
}
