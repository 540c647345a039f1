import Foundation
import NIOCore
import PostgresNIO
import Strata

/// One column of many rows as a PostgreSQL array parameter, `NULL`s included, so that a single
/// `INSERT ... SELECT FROM unnest($1, $2, ...)` writes any number of rows with one parameter
/// per column (postgres-nio's own arrays cannot hold `NULL`).
///
/// Decimals and Codable values travel as `text[]` and are cast by the statement
/// (``sqlCast``): their binary forms are not worth encoding by hand.
struct PostgresColumnArray: PostgresDynamicTypeEncodable {
    /// The element type.
    enum Element {
        case bigint, double, boolean, text, bytea, uuid

        /// The element type of an attribute type's column.
        init(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64: self = .bigint
            case .double, .float, .date: self = .double
            case .boolean: self = .boolean
            case .string, .uri, .decimal, .codable: self = .text
            case .binaryData: self = .bytea
            case .uuid: self = .uuid
            }
        }

        var elementType: PostgresDataType {
            switch self {
            case .bigint: .int8
            case .double: .float8
            case .boolean: .bool
            case .text: .text
            case .bytea: .bytea
            case .uuid: .uuid
            }
        }

        var arrayType: PostgresDataType {
            switch self {
            case .bigint: .int8Array
            case .double: .float8Array
            case .boolean: .boolArray
            case .text: .textArray
            case .bytea: .byteaArray
            case .uuid: .uuidArray
            }
        }
    }

    let element: Element
    var values: [AttributeValue]

    init(_ element: Element, values: [AttributeValue] = []) {
        self.element = element
        self.values = values
    }

    /// The cast a statement applies to the unnested column of an attribute type, when its
    /// array travels as text.
    static func sqlCast(for type: AttributeType) -> String {
        switch type {
        case .decimal: "::numeric"
        case .codable: "::json"
        default: ""
        }
    }

    var psqlType: PostgresDataType { element.arrayType }
    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(Int32(1))  // dimensions
        buffer.writeInteger(Int32(values.contains { $0.isNull } ? 1 : 0))
        buffer.writeInteger(Int32(bitPattern: element.elementType.rawValue))
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(Int32(1))  // lower bound
        for value in values {
            if value.isNull {
                buffer.writeInteger(Int32(-1))
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(Int32(0))
            let start = buffer.writerIndex
            write(value, into: &buffer)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
        }
    }

    private func write(_ value: AttributeValue, into buffer: inout ByteBuffer) {
        switch (element, value) {
        case (.bigint, .integer(let number)): buffer.writeInteger(number)
        case (.bigint, .boolean(let flag)): buffer.writeInteger(Int64(flag ? 1 : 0))
        case (.double, .double(let number)): buffer.writeInteger(number.bitPattern)
        case (.double, .float(let number)): buffer.writeInteger(Double(number).bitPattern)
        case (.double, .date(let date)): buffer.writeInteger(date.timeIntervalSinceReferenceDate.bitPattern)
        case (.double, .integer(let number)): buffer.writeInteger(Double(number).bitPattern)
        case (.boolean, .boolean(let flag)): buffer.writeInteger(flag ? 1 : 0 as UInt8)
        case (.boolean, .integer(let number)): buffer.writeInteger(number != 0 ? 1 : 0 as UInt8)
        case (.text, .string(let text)): buffer.writeString(text)
        case (.text, .url(let url)): buffer.writeString(url.absoluteString)
        case (.text, .decimal(let number)): buffer.writeString(number.description)
        case (.text, .codable(let json)): buffer.writeBytes(json)
        case (.text, .integer(let number)): buffer.writeString(String(number))
        case (.bytea, .data(let data)), (.bytea, .codable(let data)): buffer.writeBytes(data)
        case (.uuid, .uuid(let uuid)): _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
        default:
            // Values were checked against their attributes before they reached the store; a
            // mismatch here is written as the text of the value so the server reports it.
            buffer.writeString("\(value)")
        }
    }
}
