import Foundation
import NIOCore
import PostgresNIO
import Strata

/// The one PostgreSQL encoding of each attribute type.
///
/// | type | PostgreSQL |
/// | --- | --- |
/// | integers | `bigint` |
/// | Boolean | `boolean` |
/// | Double, Float | `double precision` (a Float widened exactly) |
/// | Date | `double precision`, seconds since 2001-01-01 00:00:00 UTC, exactly the `Double` a `Date` holds (a `timestamptz` keeps microseconds only) |
/// | Decimal | `numeric`, exact; sums stay exact |
/// | String, URL | `text COLLATE "C"`, compared by their UTF-8 bytes as the other stores compare them (URL: its absolute string) |
/// | Codable | `json`, the encoder's bytes exactly (`jsonb` would reorder and respace them) |
/// | Data | `bytea` |
/// | UUID | `uuid` |
enum PostgresValueCoding {
    /// The column type of an attribute type.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: "bigint"
        case .boolean: "boolean"
        case .double, .float, .date: "double precision"
        case .decimal: "numeric"
        case .string, .uri: "text COLLATE \"C\""
        case .codable: "json"
        case .binaryData: "bytea"
        case .uuid: "uuid"
        }
    }

    /// Appends a value as a bound parameter of the type its column has.
    static func bind(_ value: AttributeValue, to bindings: inout PostgresBindings) {
        switch value {
        case .null: bindings.appendNull()
        default: bindings.append(PostgresValue(value))
        }
    }

    /// A value as the column of `type` holds it, for comparisons with columns of that type
    /// (a Boolean attribute compared with 1, say).
    static func converted(_ value: AttributeValue, toColumnOf type: AttributeType) -> AttributeValue {
        switch (value, type) {
        case (.integer(let number), .boolean): .boolean(number != 0)
        case (.boolean(let flag), .integer16), (.boolean(let flag), .integer32), (.boolean(let flag), .integer64):
            .integer(flag ? 1 : 0)
        case (.boolean(let flag), .double), (.boolean(let flag), .float), (.boolean(let flag), .date):
            .double(flag ? 1 : 0)
        default: value
        }
    }

    /// Decodes one cell; a value of an unexpected type (written by another program) reads as
    /// `nil` rather than crashing.
    static func attributeValue(_ cell: PostgresCell, type: AttributeType) -> AttributeValue {
        guard var bytes = cell.bytes else { return .null }
        switch cell.dataType {
        case .int8, .int4, .int2:
            guard let number = integer(&bytes, cell.dataType) else { return .null }
            switch type {
            case .integer16, .integer32, .integer64: return .integer(number)
            case .boolean: return .boolean(number != 0)
            case .double: return .double(Double(number))
            case .float: return .float(Float(number))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(number)))
            case .decimal: return .decimal(Decimal(number))
            default: return .null
            }
        case .float8, .float4:
            guard let number = double(&bytes, cell.dataType) else { return .null }
            switch type {
            case .double: return .double(number)
            case .float: return .float(Float(number))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: number))
            case .decimal: return AttributeValue.double(number).converted(to: .decimal) ?? .null
            case .integer16, .integer32, .integer64:
                return number.rounded() == number && abs(number) < 0x1p63 ? .integer(Int64(number)) : .double(number)
            default: return .null
            }
        case .bool:
            guard let byte = bytes.readInteger(as: UInt8.self) else { return .null }
            switch type {
            case .boolean: return .boolean(byte != 0)
            case .integer16, .integer32, .integer64: return .integer(byte != 0 ? 1 : 0)
            default: return .null
            }
        case .numeric:
            guard let decimal = try? cell.decode(Decimal.self) else { return .null }
            switch type {
            case .decimal: return .decimal(decimal)
            case .double: return .double(NSDecimalNumber(decimal: decimal).doubleValue)
            case .integer16, .integer32, .integer64:
                if let integer = Int64(exactly: NSDecimalNumber(decimal: decimal).doubleValue),
                    Decimal(integer) == decimal
                {
                    return .integer(integer)
                }
                return .double(NSDecimalNumber(decimal: decimal).doubleValue)
            default: return .null
            }
        case .text, .varchar, .name, .bpchar:
            let text = bytes.readString(length: bytes.readableBytes) ?? ""
            switch type {
            case .string: return .string(text)
            case .uri: return URL(string: text).map { .url($0) } ?? .null
            case .decimal: return DecimalText.decimal(text).map { .decimal($0) } ?? .null
            case .codable: return .codable(Data(text.utf8))
            default: return .null
            }
        case .json:
            guard type == .codable else { return .null }
            return .codable(Data(bytes.readableBytesView))
        case .jsonb:
            guard type == .codable else { return .null }
            // Binary jsonb starts with its version byte.
            _ = bytes.readInteger(as: UInt8.self)
            return .codable(Data(bytes.readableBytesView))
        case .bytea:
            switch type {
            case .binaryData: return .data(Data(bytes.readableBytesView))
            case .codable: return .codable(Data(bytes.readableBytesView))
            default: return .null
            }
        case .uuid:
            guard type == .uuid, bytes.readableBytes == 16, let value = try? cell.decode(UUID.self) else { return .null }
            return .uuid(value)
        default:
            return .null
        }
    }

    /// An integer cell of any integer type.
    static func integer(_ bytes: inout ByteBuffer, _ type: PostgresDataType) -> Int64? {
        switch type {
        case .int8: bytes.readInteger(as: Int64.self)
        case .int4: bytes.readInteger(as: Int32.self).map(Int64.init)
        case .int2: bytes.readInteger(as: Int16.self).map(Int64.init)
        default: nil
        }
    }

    static func double(_ bytes: inout ByteBuffer, _ type: PostgresDataType) -> Double? {
        switch type {
        case .float8: bytes.readInteger(as: UInt64.self).map { Double(bitPattern: $0) }
        case .float4: bytes.readInteger(as: UInt32.self).map { Double(Float(bitPattern: $0)) }
        default: nil
        }
    }

    /// The integer in a cell, or `nil` for NULL or another type.
    static func integer(_ cell: PostgresCell) -> Int64? {
        guard var bytes = cell.bytes else { return nil }
        return integer(&bytes, cell.dataType)
    }

    /// The text in a cell, or `nil` for NULL or another type.
    static func string(_ cell: PostgresCell) -> String? {
        guard var bytes = cell.bytes else { return nil }
        switch cell.dataType {
        case .text, .varchar, .name, .bpchar: return bytes.readString(length: bytes.readableBytes)
        default: return nil
        }
    }

    /// The bytes of a `bytea` cell.
    static func data(_ cell: PostgresCell) -> Data? {
        guard let bytes = cell.bytes, cell.dataType == .bytea else { return nil }
        return Data(bytes.readableBytesView)
    }
}

/// One bound value, encoded as the column type of its attribute type expects.
struct PostgresValue: PostgresDynamicTypeEncodable {
    let value: AttributeValue

    init(_ value: AttributeValue) { self.value = value }

    var psqlType: PostgresDataType {
        switch value {
        case .null, .string: .text
        case .integer: .int8
        case .double, .float, .date: .float8
        case .decimal: .numeric
        case .boolean: .bool
        case .data: .bytea
        case .uuid: .uuid
        case .url: .text
        case .codable: .json
        }
    }

    var psqlFormat: PostgresFormat {
        switch value {
        case .decimal, .codable, .string, .url, .null: .text
        default: .binary
        }
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        switch value {
        case .null: break
        case .integer(let number): buffer.writeInteger(number)
        case .double(let number): buffer.writeInteger(number.bitPattern)
        case .float(let number): buffer.writeInteger(Double(number).bitPattern)
        case .date(let date): buffer.writeInteger(date.timeIntervalSinceReferenceDate.bitPattern)
        case .decimal(let number): buffer.writeString(number.description)
        case .boolean(let flag): buffer.writeInteger(flag ? 1 : 0 as UInt8)
        case .string(let text): buffer.writeString(text)
        case .url(let url): buffer.writeString(url.absoluteString)
        case .codable(let json): buffer.writeBytes(json)
        case .data(let data): buffer.writeBytes(data)
        case .uuid(let uuid): _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
        }
    }
}

extension PostgresBindings {
    /// Appends a value (see ``PostgresValueCoding``).
    mutating func append(value: AttributeValue) {
        PostgresValueCoding.bind(value, to: &self)
    }

    /// Appends an integer.
    mutating func append(integer: Int64) {
        append(PostgresValue(.integer(integer)))
    }

    /// Appends a string.
    mutating func append(string: String) {
        append(PostgresValue(.string(string)))
    }
}
