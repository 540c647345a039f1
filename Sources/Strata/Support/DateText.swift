import Foundation

/// Dates as ISO 8601 text, exactly: the text written identifies the `Date` it was written from,
/// and reads back to that same `Date`, bit for bit.
///
/// A `Date` is a `Double` of seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date),
/// and stores keep exactly that `Double`. The text is the calendar date and time of its whole
/// second in UTC, then the digits of the fraction of a second that the shortest decimal reading
/// back to the same `Double` has: `2026-11-27T10:00:00Z`, `…:00.25Z`, `…:59.999999Z`, or
/// `…:40.123456789Z` for a `Date()` of today, whose `Double` holds about a tenth of a
/// microsecond more than a microsecond count would. Nothing is rounded to microseconds.
///
/// Reading works from the reference date, not from 1970: the calendar part becomes whole
/// seconds since 2001 in integers, and the whole value one correctly rounded `Double` of the
/// exact decimal, so no second rounding creeps in.
///
/// Years 0000 to 9999 have four digits; others a sign and at least four (`-0044-03-15`,
/// `+10000-01-01`), as ISO 8601's expanded form, up to some 30 billion years either way.
package enum DateText {
    /// The seconds from 1970-01-01 to 2001-01-01 are this many days.
    private static let daysFrom1970To2001: Int64 = 11_323
    /// Dates further than this from 2001, in seconds, have no calendar text (30 billion years).
    private static let calendarLimit = 1e18

    // MARK: Writing

    /// `date` as ISO 8601 text in UTC, exactly (see ``DateText``).
    ///
    /// A date more than 30 billion years from 2001, or an infinite one, has no calendar date:
    /// it is written `Date(<seconds since 2001>)`, which ``date(fromISO8601:)`` does not read.
    package static func iso8601(_ date: Date) -> String {
        var bytes: [UInt8] = []
        appendISO8601(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date` as ``iso8601(_:)`` writes it.
    package static func appendISO8601(_ date: Date, to bytes: inout [UInt8]) {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < calendarLimit else {
            bytes.append(contentsOf: "Date(\(interval))".utf8)
            return
        }
        let seconds: Int64
        var fraction: [UInt8] = []
        if interval == interval.rounded(.down) {
            seconds = Int64(interval)
        } else {
            (seconds, fraction) = wholeAndFraction(interval)
        }
        appendCalendarText(secondsSince2001: seconds, to: &bytes)
        if !fraction.isEmpty {
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: fraction)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The whole seconds (rounded down) and the digits of the fraction of the shortest decimal
    /// that reads back as `interval`, which is finite, not integral, and within the calendar
    /// limit.
    private static func wholeAndFraction(_ interval: Double) -> (Int64, [UInt8]) {
        // Swift prints the shortest digits that read back the same Double: `-0.25`, `1e-05`.
        var text = Array(interval.magnitude.description.utf8)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
            text.removeSubrange(e...)
        }
        let point = text.firstIndex(of: UInt8(ascii: ".")) ?? text.count
        let digits = text.filter { $0 != UInt8(ascii: ".") }
        // The decimal point falls after this many of `digits`.
        let split = point + exponent
        var whole: Int64 = 0
        for index in 0..<max(split, 0) {
            let digit = index < digits.count ? Int64(digits[index] - UInt8(ascii: "0")) : 0
            whole = whole * 10 + digit
        }
        var fraction = Array(repeating: UInt8(ascii: "0"), count: max(-split, 0)) + digits.dropFirst(max(split, 0))
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        guard interval < 0 else { return (whole, fraction) }
        // -(w + f) = (-w - 1) + (1 - f): the second before, and the rest of it.
        guard !fraction.isEmpty else { return (-whole, []) }
        return (-whole - 1, complement(fraction))
    }

    /// The digits of 1 − 0.`digits` (with `digits` not all zeros), without trailing zeros.
    private static func complement(_ digits: [UInt8]) -> [UInt8] {
        guard let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return [] }
        var result = digits[...last].map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
        result[last] += 1
        return result
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS` for a whole second since 2001.
    private static func appendCalendarText(secondsSince2001 seconds: Int64, to bytes: inout [UInt8]) {
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = civilDate(daysSince1970: days + daysFrom1970To2001)
        // Digits written straight into `bytes`: an export writes millions of dates.
        func digits(_ value: Int64, count: Int) {
            var divisor: Int64 = 1
            var width = 1
            while divisor <= value / 10 {
                divisor *= 10
                width += 1
            }
            if width < count { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count - width)) }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        if year < 0 {
            bytes.append(UInt8(ascii: "-"))
        } else if year > 9_999 {
            bytes.append(UInt8(ascii: "+"))
        }
        digits(abs(year), count: 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, count: 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, count: 2)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, count: 2)
    }

    // MARK: Reading

    /// The date ISO 8601 text names, exactly; `nil` for any other text.
    ///
    /// Reads a day (`1999-12-31`, midnight UTC), or a day and a time of day
    /// (`1999-12-31T23:59:59`, with `T`, `t` or a space between them; the seconds may be
    /// left out), with a fraction of a second of any length (after `.` or `,`) and a zone
    /// (`Z`, `z`, `+02:00`, `+0200`, `+02`; UTC when there is none). Days that do not exist
    /// (`2026-02-30`), hours past 23, minutes and seconds past 59 are refused, as are leading
    /// or trailing spaces.
    ///
    /// - Parameter text: The text to read.
    /// - Returns: The date, or `nil` when `text` is not ISO 8601 text of a date.
    package static func date(fromISO8601 text: some StringProtocol) -> Date? {
        var reader = Reader(bytes: Array(text.utf8))
        return reader.read()
    }

    /// The state of one ``date(fromISO8601:)``.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        private mutating func take(_ byte: Character) -> Bool {
            guard index < bytes.count, bytes[index] == byte.asciiValue else { return false }
            index += 1
            return true
        }

        /// Exactly `count` digits as a number.
        private mutating func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The digits from here on (possibly none).
        private mutating func digits() -> ArraySlice<UInt8> {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return bytes[start..<index]
        }

        mutating func read() -> Date? {
            var isNegativeYear = false
            if take("-") {
                isNegativeYear = true
            } else {
                _ = take("+")
            }
            let yearDigits = digits()
            // Up to 11 digits, so that the seconds stay within Int64.
            guard (4...11).contains(yearDigits.count) else { return nil }
            var year: Int64 = 0
            for byte in yearDigits { year = year * 10 + Int64(byte - UInt8(ascii: "0")) }
            if isNegativeYear { year = -year }
            guard take("-"), let month = number(2), take("-"), let day = number(2),
                (1...12).contains(month), day >= 1, day <= DateText.daysIn(month: month, year: year)
            else { return nil }
            var secondOfDay: Int64 = 0
            var fraction: ArraySlice<UInt8> = []
            var offset: Int64 = 0
            if index < bytes.count {
                guard take("T") || take("t") || take(" "), let hour = number(2), take(":"), let minute = number(2),
                    hour < 24, minute < 60
                else { return nil }
                var second: Int64 = 0
                if take(":") {
                    guard let value = number(2), value < 60 else { return nil }
                    second = value
                    if take(".") || take(",") {
                        fraction = digits()
                        guard !fraction.isEmpty else { return nil }
                    }
                }
                secondOfDay = hour * 3_600 + minute * 60 + second
                if take("Z") || take("z") {
                } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                    index += 1
                    guard let hours = number(2), hours < 24 else { return nil }
                    var minutes: Int64 = 0
                    if index < bytes.count {
                        _ = take(":")
                        guard let value = number(2), value < 60 else { return nil }
                        minutes = value
                    }
                    offset = sign * (hours * 3_600 + minutes * 60)
                }
                guard index == bytes.count else { return nil }
            }
            let days = DateText.daysSince1970(year: year, month: month, day: day) - DateText.daysFrom1970To2001
            let seconds = days * 86_400 + secondOfDay - offset
            return Date(timeIntervalSinceReferenceDate: DateText.interval(seconds: seconds, fraction: fraction))
        }
    }

    /// `seconds` plus 0.`fraction`, rounded once to the nearest `Double`.
    private static func interval(seconds: Int64, fraction: ArraySlice<UInt8>) -> Double {
        var digits = Array(fraction)
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard !digits.isEmpty else { return Double(seconds) }
        // The exact decimal, for Double's correctly rounded reading of text:
        // s + f = -((-s - 1) + (1 - f)) when s is negative.
        let text =
            seconds >= 0
            ? "\(seconds)." + String(decoding: digits, as: UTF8.self)
            : "-\(-seconds - 1)." + String(decoding: complement(digits), as: UTF8.self)
        return Double(text) ?? Double(seconds)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, in integers)

    /// `dividend` divided by `divisor` rounded down, and the non-negative remainder.
    private static func floorDivision(_ dividend: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = dividend / divisor - (dividend % divisor < 0 ? 1 : 0)
        return (quotient, dividend - quotient * divisor)
    }

    /// The days from 1970-01-01 to a date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivision(shiftedYear, 400).0
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).0
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days in a month of a year.
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2:
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return isLeap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
