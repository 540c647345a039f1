import Foundation
import GRDB

/// The one SQLite encoding of each attribute type.
///
/// | type | SQLite |
/// | --- | --- |
/// | integers, Boolean | INTEGER |
/// | Double, Float | REAL (a Float widened exactly) |
/// | Date | REAL, seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date) |
/// | Decimal | TEXT, its exact decimal digits |
/// | String, URL | TEXT (URL: its absolute string) |
/// | Codable | TEXT, UTF-8 JSON with sorted keys |
/// | Data | BLOB |
/// | UUID | BLOB, 16 bytes |
enum SQLiteValueCoding {
    static func databaseValue(_ value: AttributeValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .double(let number): number.databaseValue
        case .float(let number): Double(number).databaseValue
        case .decimal(let number): number.description.databaseValue
        case .string(let text): text.databaseValue
        case .boolean(let flag): (flag ? 1 : 0 as Int64).databaseValue
        case .date(let date): date.timeIntervalSinceReferenceDate.databaseValue
        case .data(let data): data.databaseValue
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .url(let url): url.absoluteString.databaseValue
        case .codable(let json): String(decoding: json, as: UTF8.self).databaseValue
        }
    }

    /// Decodes a column; a value of an unexpected kind (written by another program) reads as
    /// `nil` rather than crashing.
    static func attributeValue(_ value: DatabaseValue, type: AttributeType) -> AttributeValue {
        switch value.storage {
        case .null: .null
        case .int64(let number): attributeValue(integer: number, type: type)
        case .double(let number): attributeValue(double: number, type: type)
        case .string(let text): attributeValue(text: text, type: type)
        case .blob(let data): attributeValue(blob: data, type: type)
        }
    }

    static func attributeValue(integer number: Int64, type: AttributeType) -> AttributeValue {
        switch type {
        case .integer16, .integer32, .integer64: .integer(number)
        case .boolean: .boolean(number != 0)
        case .double: .double(Double(number))
        case .float: .float(Float(number))
        case .date: .date(Date(timeIntervalSinceReferenceDate: Double(number)))
        case .decimal: .decimal(Decimal(number))
        default: .null
        }
    }

    static func attributeValue(double number: Double, type: AttributeType) -> AttributeValue {
        switch type {
        case .double: .double(number)
        case .float: .float(Float(number))
        case .date: .date(Date(timeIntervalSinceReferenceDate: number))
        case .decimal: AttributeValue.double(number).converted(to: .decimal) ?? .null
        default: .null
        }
    }

    static func attributeValue(text: String, type: AttributeType) -> AttributeValue {
        switch type {
        case .string: .string(text)
        case .decimal: DecimalText.decimal(text).map { .decimal($0) } ?? .null
        case .uri: URL(string: text).map { .url($0) } ?? .null
        case .codable: .codable(Data(text.utf8))
        default: .null
        }
    }

    static func attributeValue(blob data: Data, type: AttributeType) -> AttributeValue {
        switch type {
        case .binaryData: return .data(data)
        case .uuid:
            guard data.count == 16 else { return .null }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { _ = data.copyBytes(to: $0) }
            return .uuid(UUID(uuid: uuid))
        case .codable: return .codable(data)
        default: return .null
        }
    }
}
