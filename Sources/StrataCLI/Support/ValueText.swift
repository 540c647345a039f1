import Foundation
import Strata

/// How the tool writes attribute values: as text (tables, CSV) and as JSON. One encoding per
/// type, the one `strata import` reads back:
///
/// - dates: ISO 8601 in UTC, with the digits of a fraction of a second that the stored `Double`
///   needs to read back unchanged (`2026-11-27T10:00:00.25Z`, `…:40.123456789Z`);
/// - decimals: their exact digits; doubles and floats: the shortest digits that read back the
///   same number (`NaN`, `Infinity` and `-Infinity` as strings in JSON);
/// - binary data: Base64; UUIDs and URLs: their strings; Codable values: their JSON.
enum ValueText {
    /// `value` as text; `nil` for null.
    static func text(_ value: AttributeValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let number): String(number)
        case .double(let number): double(number)
        case .float(let number): float(number)
        case .decimal(let number):
            number.isNaN ? "NaN" : decimalText(number)
        case .string(let text): text
        case .boolean(let flag): flag ? "true" : "false"
        case .date(let date): iso8601(date)
        case .data(let data): data.base64EncodedString()
        case .uuid(let uuid): uuid.uuidString
        case .url(let url): url.absoluteString
        case .codable(let json): String(decoding: json, as: UTF8.self)
        }
    }

    static func double(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        if number == 0 && number.sign == .minus { return "-0.0" }
        return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
    }

    static func float(_ number: Float) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        if number == 0 && number.sign == .minus { return "-0.0" }
        return number == number.rounded() && abs(number) < 1e7 ? String(Int64(number)) : "\(number)"
    }

    /// Appends `value` as JSON.
    static func appendJSON(_ value: AttributeValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .integer(let number): appendInteger(number, to: &bytes)
        case .double(let number):
            if number.isFinite { bytes.append(contentsOf: double(number).utf8) } else { appendJSONString(double(number), to: &bytes) }
        case .float(let number):
            if number.isFinite { bytes.append(contentsOf: float(number).utf8) } else { appendJSONString(float(number), to: &bytes) }
        case .decimal(let number):
            if number.isNaN { bytes.append(contentsOf: "null".utf8) } else { appendDecimal(number, to: &bytes) }
        case .string(let text): appendJSONString(text, to: &bytes)
        case .boolean(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .date(let date):
            bytes.append(UInt8(ascii: "\""))
            appendISO8601(date, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .data(let data): appendJSONString(data.base64EncodedString(), to: &bytes)
        case .uuid(let uuid):
            bytes.append(UInt8(ascii: "\""))
            appendUUID(uuid, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .url(let url): appendJSONString(url.absoluteString, to: &bytes)
        case .codable(let json):
            // Stored Codable values are JSON already (Strata writes them with JSONEncoder); a
            // value another program wrote that is not JSON is written as a string.
            if looksLikeJSON(json) || (try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])) != nil {
                bytes.append(contentsOf: json)
            } else {
                appendJSONString(String(decoding: json, as: UTF8.self), to: &bytes)
            }
        }
    }

    /// Whether `json` is an array or object whose strings and brackets balance, with no control
    /// characters outside strings: what JSONEncoder writes, checked in one pass instead of
    /// parsing.
    static func looksLikeJSON(_ json: Data) -> Bool {
        json.withUnsafeBytes { raw -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let first = bytes.first, first == UInt8(ascii: "[") || first == UInt8(ascii: "{") else { return false }
            var depth = 0
            var inString = false
            var escaped = false
            for (index, byte) in bytes.enumerated() {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    } else if byte < 0x20 {
                        return false
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                    if depth == 0 { return index == bytes.count - 1 }
                    if depth < 0 { return false }
                case UInt8(ascii: " "), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "."),
                    UInt8(ascii: "+"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "E"), 0x0A, 0x0D, 0x09:
                    continue
                default: return false
                }
            }
            return false
        }
    }

    /// Appends the exact digits of `number`, as `Decimal.description` writes them.
    ///
    /// `description` divides the 128-bit mantissa by ten once per digit and cost a third of an
    /// export; here the mantissa becomes one `UInt128` that Swift prints. `Decimal` keeps an
    /// 8-bit exponent, a byte of length and sign bits, two reserved bytes and eight 16-bit
    /// words on every platform, but where the length and sign sit in their byte differs
    /// (Foundation on Apple platforms, swift-foundation elsewhere): ``DecimalLayout`` finds out
    /// once from known values, and without a layout it can trust, `description` is used.
    static func appendDecimal(_ number: Decimal, to bytes: inout [UInt8]) {
        guard let layout = DecimalLayout.current, !number.isNaN else {
            bytes.append(contentsOf: number.description.utf8)
            return
        }
        let (exponent, isNegative, significand) = layout.parts(of: number)
        if significand == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var digits = Array(String(significand).utf8)
        if isNegative { bytes.append(UInt8(ascii: "-")) }
        if exponent >= 0 {
            bytes.append(contentsOf: digits)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: exponent))
        } else if -exponent >= digits.count {
            bytes.append(contentsOf: "0.".utf8)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -exponent - digits.count))
            bytes.append(contentsOf: digits)
        } else {
            digits.insert(UInt8(ascii: "."), at: digits.count + exponent)
            bytes.append(contentsOf: digits)
        }
    }

    /// `number`'s exact digits (see ``appendDecimal(_:to:)``).
    static func decimalText(_ number: Decimal) -> String {
        var bytes: [UInt8] = []
        appendDecimal(number, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `uuid` as its upper-case string.
    static func appendUUID(_ uuid: UUID, to bytes: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            }
        }
    }

    /// Appends the decimal digits of `number`.
    static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        if number >= 0 && number < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var magnitude = number.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            if number < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// Appends `text` as a JSON string, escaping what JSON requires.
    static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: utf8[start..<index])
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
                case 0x0A: bytes.append(contentsOf: "\\n".utf8)
                case 0x0D: bytes.append(contentsOf: "\\r".utf8)
                case 0x09: bytes.append(contentsOf: "\\t".utf8)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: "\\u00".utf8)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: utf8[start...])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `date` in ISO 8601, UTC, exactly: with the digits of the fraction of a second that tell
    /// its `Double` apart from every other (``DateText``).
    static func iso8601(_ date: Date) -> String {
        DateText.iso8601(date)
    }

    /// Appends `date` as ``iso8601(_:)`` writes it.
    static func appendISO8601(_ date: Date, to bytes: inout [UInt8]) {
        DateText.appendISO8601(date, to: &bytes)
    }

    /// Reads a date written as ISO 8601: a day (`2026-11-27`), or a day and a time with or
    /// without a fraction of a second and a zone (UTC when it has none), exactly
    /// (``DateText/date(fromISO8601:)``).
    static func parseDate(_ text: String) -> Date? {
        DateText.date(fromISO8601: text)
    }
}

/// Where `Decimal` keeps its length and sign, learned from values whose parts are known.
struct DecimalLayout: Sendable {
    /// Whether the length is the byte's high nibble (else its low nibble).
    let lengthInHighNibble: Bool
    /// The sign's bit in the byte.
    let signMask: UInt8

    /// The layout of this platform's `Decimal`, or `nil` when the probes do not agree with
    /// either known layout.
    static let current: DecimalLayout? = {
        guard MemoryLayout<Decimal>.size == 20,
            let big = Decimal(string: "99999999999999999999999999999999999999", locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        let flags = { (number: Decimal) in withUnsafeBytes(of: number) { $0[1] } }
        let signMask = flags(Decimal(1)) ^ flags(Decimal(-1))
        guard signMask.nonzeroBitCount == 1 else { return nil }
        for lengthInHighNibble in [true, false] {
            let layout = DecimalLayout(lengthInHighNibble: lengthInHighNibble, signMask: signMask)
            let probes: [(Decimal, Int, Bool, UInt128)] = [
                (Decimal(1), 0, false, 1), (Decimal(-1), 0, true, 1), (Decimal(string: "-0.125") ?? 0, -3, true, 125),
                (big, 0, false, 99_999_999_999_999_999_999_999_999_999_999_999_999),
            ]
            if probes.allSatisfy({ probe in
                let parts = layout.parts(of: probe.0)
                return parts.exponent == probe.1 && parts.isNegative == probe.2 && parts.significand == probe.3
            }) {
                return layout
            }
        }
        return nil
    }()

    /// The exponent, sign and significand of `number`.
    func parts(of number: Decimal) -> (exponent: Int, isNegative: Bool, significand: UInt128) {
        withUnsafeBytes(of: number) { raw in
            let flags = raw[1]
            let length = Int(lengthInHighNibble ? flags >> 4 : flags & 0x0F)
            var significand: UInt128 = 0
            for word in stride(from: min(length, 8) - 1, through: 0, by: -1) {
                significand = significand << 16 | UInt128(raw[5 + 2 * word]) << 8 | UInt128(raw[4 + 2 * word])
            }
            return (Int(Int8(bitPattern: raw[0])), flags & signMask != 0, significand)
        }
    }
}
