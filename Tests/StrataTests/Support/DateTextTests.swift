import Foundation
import StrataTesting
import Testing

@testable import Strata

/// ISO 8601 text of dates, exactly: what is written reads back to the same `Double`, and the
/// calendar part agrees with Foundation's.
@Suite struct DateTextTests {
    /// Foundation's reading of `yyyy-MM-dd'T'HH:mm:ss` in UTC, in the proleptic Gregorian
    /// calendar (as ISO 8601 counts), for years 1 to 9999.
    static func foundationFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.gregorianStartDate = .distantPast
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter
    }

    /// A random `Double` of seconds since 2001 of one of the kinds stores hold.
    static func randomInterval(using generator: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0:  // Any Double within about 130 years of 2001, every bit of it.
            return Double.random(in: -4e9...4e9, using: &generator)
        case 1:  // Whole microseconds, as a microsecond clock gives.
            return Double(Int64.random(in: -4_000_000_000_000_000...4_000_000_000_000_000, using: &generator)) / 1e6
        case 2:  // Near the reference date, where the fraction has the most digits.
            return Double.random(in: -1...1, using: &generator) * pow(10, -Double(Int.random(in: 0...12, using: &generator)))
        case 3:  // Whole seconds.
            return Double(Int64.random(in: -4_000_000_000...4_000_000_000, using: &generator))
        case 4:  // Today, with the sub-microsecond digits `Date()` has.
            return 8e8 + Double.random(in: -1e7...1e7, using: &generator)
        default:  // Thousands of years either way: years before 1 and after 9999.
            return Double.random(in: -3e11...3e11, using: &generator)
        }
    }

    @Test func randomDatesReadBackBitForBit() throws {
        var generator = SplitMix64(seed: 0x5EED_DA7E)
        let formatter = Self.foundationFormatter()
        var intervals = [0.25, -0.25, 59.999999, -1e-300, .leastNonzeroMagnitude, 1e-7, 0.1, 86_399.999_999_999, -978_307_200.5]
        for _ in 0..<20_000 { intervals.append(Self.randomInterval(using: &generator)) }
        for interval in intervals {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let text = DateText.iso8601(date)
            let read = try #require(DateText.date(fromISO8601: text), "\(interval): \(text)")
            #expect(
                read.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern || (interval == 0 && read.timeIntervalSinceReferenceDate == 0),
                "\(interval) was written \(text) and read back as \(read.timeIntervalSinceReferenceDate)")
            // The whole second is the one Foundation's calendar names.
            let whole = String(text.prefix { $0 != "." && $0 != "Z" })
            if whole.count == 19 && !whole.hasPrefix("0000") {
                let calendar = try #require(formatter.date(from: whole), "\(interval): \(text)")
                #expect(calendar.timeIntervalSinceReferenceDate == interval.rounded(.down), "\(interval): \(text)")
            } else {
                #expect(abs(interval) > 6e10, "\(interval): \(text) has no four-digit year")
            }
        }
    }

    @Test func writesTheShortestFractionThatIdentifiesTheDate() {
        func text(_ interval: Double) -> String { DateText.iso8601(Date(timeIntervalSinceReferenceDate: interval)) }
        #expect(text(0) == "2001-01-01T00:00:00Z")
        #expect(text(0.25) == "2001-01-01T00:00:00.25Z")
        #expect(text(-0.25) == "2000-12-31T23:59:59.75Z")
        #expect(text(59.999999) == "2001-01-01T00:00:59.999999Z")
        #expect(text(1e-7) == "2001-01-01T00:00:00.0000001Z")
        // What a microsecond clock gives, and a value between two microseconds.
        #expect(text(812_345_678.123456) == "2026-09-29T03:34:38.123456Z")
        #expect(text(812_345_678.1234567) == "2026-09-29T03:34:38.1234567Z")
        // Years before 1: 0000 is a leap year, then -0001 (ISO 8601's expanded years).
        #expect(text(-63_113_904_000) == "0001-01-01T00:00:00Z")
        #expect(text(-63_113_904_000 - 366 * 86_400) == "0000-01-01T00:00:00Z")
        #expect(text(-63_113_904_000 - 731 * 86_400) == "-0001-01-01T00:00:00Z")
        #expect(text(252_423_993_600) == "+10000-01-01T00:00:00Z")
        #expect(text(.infinity) == "Date(inf)")
        #expect(DateText.date(fromISO8601: "Date(inf)") == nil)
    }

    @Test func readsTheFormsOfISO8601() throws {
        func interval(_ text: String) -> Double? { DateText.date(fromISO8601: text)?.timeIntervalSinceReferenceDate }
        #expect(interval("2001-01-01") == 0)
        #expect(interval("2000-12-31") == -86_400)
        #expect(interval("1999-12-31") == -31_708_800)
        #expect(interval("2001-01-01T00:00:00Z") == 0)
        #expect(interval("2001-01-01t00:00:00z") == 0)
        #expect(interval("2001-01-01 00:00:00") == 0)
        #expect(interval("2001-01-01T00:00") == 0)
        #expect(interval("2001-01-01T01:00:00+01:00") == 0)
        #expect(interval("2001-01-01T01:00:00+0100") == 0)
        #expect(interval("2001-01-01T01:00:00+01") == 0)
        #expect(interval("2000-12-31T22:30:00-01:30") == 0)
        #expect(interval("2001-01-01T00:00:00,5Z") == 0.5)
        #expect(interval("2001-01-01T00:00:00.100000000000000000000000000001Z") == 0.1)
        #expect(interval("2000-02-29") == -26_524_800)
        #expect(interval("-0001-01-01") == -63_177_062_400)
        #expect(interval("+10000-01-01") == 252_423_993_600)
        #expect(interval("0000-03-01") != nil)
        for bad in [
            "", "2001", "2001-1-01", "2001-01-1", "2001-13-01", "2001-00-10", "2001-02-29", "1900-02-29", "2001-04-31",
            "2001-01-01T24:00:00Z", "2001-01-01T00:60:00Z", "2001-01-01T00:00:60Z", "2001-01-01T00:00:00.Z",
            "2001-01-01T00:00:00+24:00", "2001-01-01T00:00:00 ", " 2001-01-01", "2001-01-01T", "2001-01-01X00:00:00",
            "yesterday", "123456789012-01-01", "2001-01-01T00:00:00ZZ", "٢٠٠١-٠١-٠١",
        ] {
            #expect(DateText.date(fromISO8601: bad) == nil, "\(bad)")
        }
    }

    @Test func agreesWithFoundationOnWholeSeconds() throws {
        var generator = SplitMix64(seed: 7)
        let iso = ISO8601DateFormatter()
        for _ in 0..<5_000 {
            let seconds = Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            #expect(DateText.iso8601(date) == iso.string(from: date))
            #expect(DateText.date(fromISO8601: iso.string(from: date)) == date)
        }
    }
}
