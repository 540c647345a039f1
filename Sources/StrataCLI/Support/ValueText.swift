import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the tool writes attribute values: as text (tables, CSV) and as JSON. One encoding per
/// type, the one `strata import` reads back:
///
/// - dates: ISO 8601 in UTC, with a fraction of a second when there is one
///   (`2026-11-27T10:00:00.25Z`);
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

    /// `date` in ISO 8601, UTC, with the fraction of a second when there is one (to the
    /// microsecond).
    static func iso8601(_ date: Date) -> String {
        var bytes: [UInt8] = []
        appendISO8601(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date` as ``iso8601(_:)`` writes it.
    static func appendISO8601(_ date: Date, to bytes: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var micros = Int(((interval - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            seconds += 1
            micros -= 1_000_000
        }
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else {
            bytes.append(contentsOf: ISO8601DateFormatter().string(from: date).utf8)
            return
        }
        func digits(_ value: Int, count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        let year = Int(parts.tm_year) + 1900
        if year >= 0 && year < 10_000 {
            digits(year, count: 4)
        } else {
            bytes.append(contentsOf: String(year).utf8)
        }
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, count: 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), count: 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), count: 2)
        if micros > 0 {
            bytes.append(UInt8(ascii: "."))
            var fraction = micros
            var count = 6
            while fraction % 10 == 0 {
                fraction /= 10
                count -= 1
            }
            digits(fraction, count: count)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Reads a date written as ISO 8601: a full date and time with or without a fraction of a
    /// second and a zone (UTC when it has none), or a day (`2026-11-27`).
    static func parseDate(_ text: String) -> Date? {
        if let date = parseTimestamp(text) { return date }
        // A day that does not exist (2026-02-30) is no date: the formatters below would move it
        // into March.
        let leadingDay = text.prefix(10)
        if leadingDay.count == 10, leadingDay.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }),
            parseTimestamp(String(leadingDay)) == nil
        {
            return nil
        }
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withFraction.date(from: text) {
            // The formatter keeps milliseconds only; the digits after them are added back.
            return refiningFraction(of: date, from: text)
        }
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let noZone = ISO8601DateFormatter()
        noZone.formatOptions = [.withFullDate, .withFullTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        noZone.timeZone = TimeZone(identifier: "UTC")
        if let date = noZone.date(from: text + "Z") { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }

    /// The common forms, read by hand (a formatter per value would cost more than the rest of
    /// an import): `YYYY-MM-DD`, then optionally `THH:MM:SS`, a fraction, and `Z` or `±HH:MM`.
    static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var fraction = 0.0
        var offset = 0
        if index < bytes.count {
            guard expect("T") || expect(" "), let h = number(2), expect(":"), let m = number(2), expect(":"),
                let s = number(2), h < 24, m < 60, s < 61
            else { return nil }
            (hour, minute, second) = (h, m, s)
            if expect(".") {
                // The digits as one integer, divided once: one rounding, not one per digit.
                var value: Int64 = 0
                var divisor = 1.0
                var digits = 0
                while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                    if digits < 15 {
                        value = value * 10 + Int64(bytes[index] - 48)
                        divisor *= 10
                    }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                fraction = Double(value) / divisor
            }
            if expect("Z") {
            } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let hours = number(2), expect(":"), let minutes = number(2) else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard index == bytes.count else { return nil }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalizes 2026-02-30 to March; a date that moved was not a date.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    private static func refiningFraction(of date: Date, from text: String) -> Date {
        guard let dot = text.firstIndex(of: ".") else { return date }
        let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
        guard digits.count > 3, let fraction = Double("0." + digits) else { return date }
        let whole = date.timeIntervalSince1970.rounded(.down)
        return Date(timeIntervalSince1970: whole + fraction)
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
