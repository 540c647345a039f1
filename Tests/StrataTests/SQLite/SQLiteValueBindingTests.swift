import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The SQLite store binds and reads values through the C API on its per-row paths; these check
/// the values that are easy to get wrong there (empty text and bytes, control characters and NUL bytes, extreme
/// numbers) and the shortcuts the save and fetch paths take.
@Suite struct SQLiteValueBindingTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self, Sample.self], in: directory)
    }

    struct Values: Sendable, CustomStringConvertible {
        var string: String
        var optionalString: String?
        var data: Data
        var int64: Int64
        var double: Double
        var decimal: Decimal
        var date: Date
        var url: URL
        var description: String { "\(string.debugDescription) \(data.count) bytes \(int64) \(decimal)" }
    }

    static let edgeValues: [Values] = [
        Values(
            string: "", optionalString: "", data: Data(), int64: 0, double: 0, decimal: 0,  // -0.0 is refused: UnrepresentableValueTests
            date: Date(timeIntervalSinceReferenceDate: 0), url: URL(fileURLWithPath: "/")),
        Values(
            // U+0000 in text is refused before it reaches a store (UnrepresentableValueTests); the
            // control characters next to it, and NUL bytes in data, go through.
            string: "a\u{1}b\u{7F}", optionalString: nil, data: Data([0, 0, 0]), int64: .max, double: .greatestFiniteMagnitude,
            decimal: Decimal(string: "-12345678901234567890.123456789") ?? 0,
            date: Date(timeIntervalSinceReferenceDate: -1_234_567.125), url: URL(string: "https://example.com/ä?q=1")!),
        Values(
            string: "Ünïcødé 🎬 " + String(repeating: "x", count: 10_000), optionalString: "\u{FFFD}\u{1}",
            data: Data((0..<100_000).map { UInt8($0 % 251) }), int64: .min, double: .leastNonzeroMagnitude,
            decimal: Decimal(string: "0.000000000000000000000000000001") ?? 0,
            date: Date(timeIntervalSinceReferenceDate: 1e9 + 0.5), url: URL(fileURLWithPath: "/tmp/a b")),
    ]

    @Test(arguments: edgeValues)
    func valuesRoundTripThroughSaveAndFetch(_ values: Values) throws {
        let context = container.newBackgroundContext()
        let sample = Sample(context: context)
        let uuid = UUID()
        sample.string = values.string
        sample.optionalString = values.optionalString
        sample.data = values.data
        sample.int64 = values.int64
        sample.double = values.double
        sample.decimal = values.decimal
        sample.date = values.date
        sample.url = values.url
        sample.uuid = uuid
        try context.save()

        let loaded = try #require(try container.newBackgroundContext().fetch(Sample.self).first)
        #expect(loaded.string == values.string)
        #expect(loaded.optionalString == values.optionalString)
        #expect(loaded.data == values.data)
        #expect(loaded.int64 == values.int64)
        #expect(loaded.double == values.double)
        #expect(loaded.decimal == values.decimal)
        #expect(loaded.date == values.date)
        #expect(loaded.url == values.url)
        #expect(loaded.uuid == uuid)

        // Updates bind through the same path.
        let editor = container.newBackgroundContext()
        let edited = try #require(try editor.fetch(Sample.self).first)
        edited.string = values.string + "!"
        edited.optionalString = nil
        try editor.save()
        let reloaded = try #require(try container.newBackgroundContext().fetch(Sample.self).first)
        #expect(reloaded.string == values.string + "!")
        #expect(reloaded.optionalString == nil)
        #expect(reloaded.data == values.data)
    }

    @Test func toOneReferencesAreSavedWhicheverObjectWasInsertedFirst() throws {
        let context = container.newBackgroundContext()
        // The review is inserted before its movie: its reference is written once the movie has
        // a key. The second review points at a movie inserted before it.
        let early = Review(context: context)
        early.text = "early"
        let movie = Movie(context: context)
        movie.title = "Heat"
        early.movie = movie
        let late = Review(context: context)
        late.text = "late"
        late.movie = movie
        let director = Person(context: context)
        director.name = "Michael Mann"
        movie.director = director  // the movie points at an object inserted after it
        try context.save()

        let reader = container.newBackgroundContext()
        let reviews = try reader.fetch(Review.self, where: nil, sortedBy: [.ascending(\.text)])
        #expect(reviews.map(\.text) == ["early", "late"])
        #expect(reviews.map { $0.movie?.title } == ["Heat", "Heat"])
        #expect(reviews.first?.movie?.director?.name == "Michael Mann")

        // A new review of the saved movie refers to it by its permanent key.
        let writer = container.newBackgroundContext()
        let saved = try #require(try writer.fetch(Movie.self).first)
        let third = Review(context: writer)
        third.text = "third"
        third.movie = saved
        try writer.save()
        let movieReviews = try container.newBackgroundContext().fetch(Movie.self).first?.reviews.map(\.text).sorted()
        #expect(movieReviews == ["early", "late", "third"])
    }

    @Test func primaryKeysMatchTheObjectIDsOfARequest() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Car.self, Bike.self], in: directory)
        let context = container.newBackgroundContext()
        for index in 0..<7 {
            if index.isMultiple(of: 2) {
                Car(context: context).maker = "car \(index)"
            } else {
                Bike(context: context).maker = "bike \(index)"
            }
        }
        try context.save()
        let store = try #require(container.store(forEntityNamed: "Vehicle"))
        let request = StoreFetchRequest(
            entityName: "Vehicle", includesSubentities: true,
            sortDescriptors: [QuerySortDescriptor(key: "maker", ascending: false)])
        let ids = try store.fetchObjectIDs(request)
        let (keys, names) = try store.fetchPrimaryKeys(request, includingEntityNames: true)
        #expect(ids.count == 7)
        #expect(keys == ids.compactMap(\.primaryKey))
        #expect(names == ids.map(\.entityName))
        #expect(try store.fetchPrimaryKeys(request, includingEntityNames: false).entityNames == nil)

        // A batched fetch built on the keys gives the same objects in the same order.
        let batched = try context.fetchBatched(FetchRequest<Vehicle>(sortDescriptors: [.descending(\.maker)]))
        #expect(batched.map(\.objectID) == ids)
        #expect(batched.map { $0 is Car } == ids.map { $0.entityName == "Car" })
    }
}
