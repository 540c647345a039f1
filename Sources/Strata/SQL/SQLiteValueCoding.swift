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
        case .null:
            return .null
        case .int64(let number):
            switch type {
            case .integer16, .integer32, .integer64: return .integer(number)
            case .boolean: return .boolean(number != 0)
            case .double: return .double(Double(number))
            case .float: return .float(Float(number))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(number)))
            case .decimal: return .decimal(Decimal(number))
            default: return .null
            }
        case .double(let number):
            switch type {
            case .double: return .double(number)
            case .float: return .float(Float(number))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: number))
            case .decimal: return AttributeValue.double(number).converted(to: .decimal) ?? .null
            default: return .null
            }
        case .string(let text):
            switch type {
            case .string: return .string(text)
            case .decimal:
                return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) } ?? .null
            case .uri: return URL(string: text).map { .url($0) } ?? .null
            case .codable: return .codable(Data(text.utf8))
            default: return .null
            }
        case .blob(let data):
            switch type {
            case .binaryData: return .data(data)
            case .uuid:
                guard data.count == 16 else { return .null }
                let bytes = Array(data)
                return .uuid(
                    UUID(
                        uuid: (
                            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                            bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                        )))
            case .codable: return .codable(data)
            default: return .null
            }
        }
    }
}
