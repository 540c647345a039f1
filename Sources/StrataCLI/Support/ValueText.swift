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
        case .decimal(let number): number.description
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
            if number.isNaN { bytes.append(contentsOf: "null".utf8) } else { bytes.append(contentsOf: number.description.utf8) }
        case .string(let text): appendJSONString(text, to: &bytes)
        case .boolean(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .date(let date): appendJSONString(iso8601(date), to: &bytes)
        case .data(let data): appendJSONString(data.base64EncodedString(), to: &bytes)
        case .uuid(let uuid): appendJSONString(uuid.uuidString, to: &bytes)
        case .url(let url): appendJSONString(url.absoluteString, to: &bytes)
        case .codable(let json):
            // Stored Codable values are JSON already; anything else is written as a string.
            if (try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])) != nil {
                bytes.append(contentsOf: json)
            } else {
                appendJSONString(String(decoding: json, as: UTF8.self), to: &bytes)
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
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var micros = Int(((interval - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            seconds += 1
            micros -= 1_000_000
        }
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return ISO8601DateFormatter().string(from: date) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 10_000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        var text = "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        if micros > 0 {
            var fraction = String(micros)
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
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
