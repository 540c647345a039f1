import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// Dates through `strata export` and `strata import`, as processes: the text export writes
/// names the stored `Date` exactly, and importing it stores that same `Date` again.
///
/// A stored `Date` is the `Double` of seconds since 2001 that it holds (see `SQLiteValueCoding`),
/// so "the same" here means the same `Double`, bit for bit: not merely the same microsecond.
@Suite(.timeLimit(.minutes(10))) struct ExportedDateTests {
    /// 1,000 seeded random dates of the kinds stores hold (every bit of a `Double`, whole
    /// microseconds, near 2001, whole seconds, today's, thousands of years away), and a few that
    /// broke before.
    static func intervals() -> [Double] {
        var generator = SplitMix64(seed: 0xDA7E_5EED)
        var intervals = [59.999999, 812_345_678.999999, -0.25, 0.1, -978_307_200.000001]
        while intervals.count < 1_000 {
            intervals.append(ExportedDateTests.randomInterval(using: &generator))
        }
        return intervals
    }

    static func randomInterval(using generator: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return Double.random(in: -4e9...4e9, using: &generator)
        case 1: return Double(Int64.random(in: -4_000_000_000_000_000...4_000_000_000_000_000, using: &generator)) / 1e6
        case 2: return Double.random(in: -1...1, using: &generator) * pow(10, -Double(Int.random(in: 0...9, using: &generator)))
        case 3: return Double(Int64.random(in: -4_000_000_000...4_000_000_000, using: &generator))
        case 4: return 8e8 + Double.random(in: -1e7...1e7, using: &generator)
        default: return Double.random(in: -3e11...3e11, using: &generator)
        }
    }

    private static let entities: [ManagedObject.Type] = [Movie.self, Director.self, Critic.self]

    /// A store of the demo model with one movie per interval, its title the interval's index.
    private static func makeStore(_ url: URL, intervals: [Double]) throws {
        let container = try PersistentContainer(name: "Dates", entities: entities, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        for (index, interval) in intervals.enumerated() {
            let movie = Movie(context: context)
            movie.title = "\(index)"
            movie.releaseDate = Date(timeIntervalSinceReferenceDate: interval)
        }
        try context.save()
        try container.close()
    }

    /// The stored release dates by title, read through the framework.
    private static func storedIntervals(_ url: URL) throws -> [String: Double] {
        let container = try PersistentContainer(
            name: "Dates", entities: entities, storeDescriptions: [.sqlite(url, isReadOnly: true)])
        defer { try? container.close() }
        let movies = try container.newBackgroundContext().fetch(FetchRequest<Movie>())
        return Dictionary(uniqueKeysWithValues: movies.map { ($0.title, $0.releaseDate?.timeIntervalSinceReferenceDate ?? .nan) })
    }

    /// The exact value of ISO 8601 text `yyyy-MM-ddTHH:mm:ss[.fraction]Z` as seconds since 2001,
    /// worked out without Strata: Foundation's calendar for the whole second, `Decimal` for the
    /// fraction, and one correctly rounded reading of the sum. `nil` outside years 1–9999.
    private static func exactInterval(of text: String, calendar: DateFormatter) -> Double? {
        guard text.hasSuffix("Z") else { return nil }
        let body = text.dropLast()
        let parts = body.split(separator: ".", maxSplits: 1)
        guard parts[0].count == 19, !parts[0].hasPrefix("0000"), let whole = calendar.date(from: String(parts[0])) else {
            return nil
        }
        var exact = Decimal(Int64(whole.timeIntervalSinceReferenceDate))
        if parts.count == 2 {
            guard let fraction = Decimal(string: "0." + parts[1], locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            exact += fraction
        }
        return Double(exact.description)
    }

    @Test(arguments: ["ndjson", "json", "csv"])
    func exportedDatesNameTheStoredDateAndImportBackBitForBit(format: String) async throws {
        let directory = try TemporaryDirectory()
        let intervals = Self.intervals()
        let source = directory.file("Source.sqlite")
        try Self.makeStore(source, intervals: intervals)
        let file = directory.file("movies.\(format)")
        let exported = try await offThePool {
            try runStrata(["export", source.path, "--entity", "Movie", "--format", format, "--output", file.path])
        }
        try #require(exported.status == 0, "\(exported.errorOutput)")

        // What export wrote: each date's text has exactly the stored Double's value.
        let reader = try RecordReader(path: file.path, format: ImportFormat(rawValue: format) ?? .ndjson)
        let calendar = DateTextCalendar.make()
        var checked = 0
        while let record = try reader.next() {
            let title = record.fields.first { $0.name == "title" }.flatMap { Self.text($0.value) }
            let index = try #require(title.flatMap { Int($0) }, "no title in \(record.fields)")
            let date = record.fields.first { $0.name == "releaseDate" }?.value
            checked += Self.check(date, stored: intervals[index], calendar: calendar)
        }
        // Dates of years 1 to 9999 are checked against Foundation's calendar: most of them.
        #expect(checked > 850, "only \(checked) dates were checked against Foundation")

        // And the import stores those very Doubles again.
        let target = directory.file("Target.sqlite")
        try Self.makeStore(target, intervals: [])
        let imported = try await offThePool { try runStrata(["import", target.path, file.path, "--entity", "Movie"]) }
        try #require(imported.status == 0, "\(imported.errorOutput)")
        let stored = try Self.storedIntervals(target)
        #expect(stored.count == intervals.count)
        var mismatches: [String] = []
        for (index, interval) in intervals.enumerated() {
            let read = stored["\(index)"] ?? .nan
            if read.bitPattern != interval.bitPattern && !(read == 0 && interval == 0) {
                mismatches.append("\(interval) came back as \(read)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) dates changed: \(mismatches.prefix(5))")
    }

    /// The text of a JSON string or CSV field.
    private static func text(_ field: ImportedField) -> String? {
        switch field {
        case .string(let value), .text(let value): value
        default: nil
        }
    }

    /// Checks one exported date field; returns 1 when Foundation could check its calendar part.
    private static func check(_ field: ImportedField?, stored interval: Double, calendar: DateFormatter) -> Int {
        guard let text = field.flatMap(Self.text) else {
            Issue.record("the date \(interval) was exported as \(String(describing: field))")
            return 0
        }
        guard let exact = exactInterval(of: text, calendar: calendar) else { return 0 }
        #expect(exact.bitPattern == interval.bitPattern || (exact == 0 && interval == 0), "\(interval) was exported as \(text)")
        return 1
    }
}

/// Foundation's reading of whole seconds in ISO 8601's (proleptic Gregorian) calendar, in UTC.
enum DateTextCalendar {
    static func make() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.gregorianStartDate = .distantPast
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter
    }
}
