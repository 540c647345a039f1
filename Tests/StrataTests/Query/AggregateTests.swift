import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Aggregates and dictionary fetches, computed by the store.
@Suite struct AggregateTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
        let context = container.newBackgroundContext()
        let ann = Person(context: context)
        ann.name = "Ann"
        let bob = Person(context: context)
        bob.name = "Bob"
        let rows: [(String, Int16, String, Double, Person?)] = [
            ("Heat", 1995, "0.1", 8.5, ann), ("Ronin", 1998, "0.2", 7, bob), ("Thief", 1981, "0.3", 7.5, ann),
            ("Collateral", 2004, "100000000000000000000.01", 7.5, ann), ("Untitled", 2020, "0", 0, nil),
        ]
        for (title, year, boxOffice, rating, director) in rows {
            let movie = Movie(title: title, year: year)
            context.insert(movie)
            movie.boxOffice = Decimal(string: boxOffice)!
            movie.rating = rating
            movie.director = director
            movie.releaseDate = Date(timeIntervalSinceReferenceDate: Double(year) * 1000)
        }
        try context.save()
    }

    @Test func sumsAreTypedAndDecimalsExact() throws {
        let context = container.newBackgroundContext()
        let total: Decimal = try context.sum(\Movie.boxOffice)
        #expect(total == Decimal(string: "100000000000000000000.61"))
        let years: Int = try context.sum(\Movie.year, where: \.year < 2000)
        #expect(years == 1995 + 1998 + 1981)
        let ratings: Double = try context.sum(\Movie.rating)
        #expect(ratings == 30.5)
        #expect(try context.sum(\Movie.year, where: \.year > 3000) == 0)
    }

    /// SQLite's SUM fails when an integer sum leaves Int64's range, even on the way back.
    @Test func integerSumsAreExactAndOverflowIsATypedError() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Sample.self], in: directory)
        let context = container.newBackgroundContext()
        for (number, value) in [Int64.max, 1, -2, Int64.max].enumerated() {
            let sample = Sample(context: context)
            sample.int = number
            sample.int64 = value
        }
        try context.save()
        // Int64.max + 1 - 2 passes beyond the range and comes back.
        #expect(try context.sum(\Sample.int64, where: \.int < 3) == Int(Int64.max) - 1)
        #expect(try context.sum(\Sample.int64, where: \.int == 0) == Int(Int64.max))
        #expect(try context.average(\Sample.int64, where: \.int < 3) == Double(Int64.max - 1) / 3)
        let error = try #require(throws: StrataError.self) { try context.sum(\Sample.int64) }
        #expect(error.code == .valueOutOfRange)
        // A dictionary fetch gives the sum beyond the range as a Double.
        var request = FetchRequest<Sample>()
        request.propertiesToFetch = [.sum("int64", as: "total")]
        #expect(try context.fetchDictionaries(request).first?["total"] == .double(2 * Double(Int64.max)))
    }

    @Test func averagesMinimaAndMaxima() throws {
        let context = container.newBackgroundContext()
        #expect(try context.average(\Movie.rating, where: \.director != nil) == 7.625)
        #expect(try context.average(\Movie.boxOffice, where: \.year < 2000) == Decimal(string: "0.2"))
        #expect(try context.average(\Movie.rating, where: \.year > 3000) == nil)
        #expect(try context.min(\Movie.year) == 1981)
        #expect(try context.max(\Movie.boxOffice) == Decimal(string: "100000000000000000000.01"))
        #expect(try context.min(\Movie.boxOffice, where: \.boxOffice > 0) == Decimal(string: "0.1"))
        #expect(try context.max(\Movie.releaseDate) == Date(timeIntervalSinceReferenceDate: 2_020_000))
        #expect(try context.min(\Movie.title) == "Collateral")
        #expect(try context.max(\Movie.rating, where: \.year > 3000) == nil)
    }

    @Test func aggregatesComeInTheAttributesTypeOrTheTypeNamed() throws {
        let context = container.newBackgroundContext()
        let latest: Int16? = try context.max(\Movie.year)  // the attribute's own type
        #expect(latest == 2020)
        let rating: Double? = try context.min(\Movie.rating, where: \.rating > 0)
        #expect(rating == 7)
        #expect(try context.sum(\Movie.year, as: Int64.self) == 1995 + 1998 + 1981 + 2004 + 2020)
        #expect(try context.sum(\Movie.rating, as: Float.self) == 30.5)
        #expect(try context.sum(\Movie.year, as: Decimal.self, where: \.year < 1990) == 1981)
        #expect(try context.sum(\Movie.year, as: Int8.self, where: \.year > 3000) == 0)
        let tooSmall = #expect(throws: StrataError.self) { try context.sum(\Movie.year, as: Int8.self) }
        #expect(tooSmall?.code == .valueOutOfRange)
        let fraction = #expect(throws: StrataError.self) { try context.sum(\Movie.rating, as: Int.self) }
        #expect(fraction?.code == .valueOutOfRange)
    }

    @Test func groupedDictionariesWithHaving() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>()
        request.propertiesToFetch = [
            .attribute("director.name", as: "director"), .count(as: "movies"), .sum("boxOffice", as: "total"),
            .average("rating", as: "rating"),
        ]
        request.propertiesToGroupBy = ["director.name"]
        let rows = try context.fetchDictionaries(request)
        #expect(rows.count == 3)
        #expect(rows[0]["director"] == .null && rows[0]["movies"] == .integer(1))
        #expect(rows[1]["director"] == .string("Ann") && rows[1]["movies"] == .integer(3))
        #expect(rows[1]["total"] == .decimal(Decimal(string: "100000000000000000000.41")!))
        #expect(rows[1]["rating"] == .double(23.5 / 3))
        #expect(rows[2]["director"] == .string("Bob") && rows[2]["movies"] == .integer(1))

        request.havingPredicate = try QueryPredicate(format: "movies > 1")
        let busy = try context.fetchDictionaries(request)
        #expect(busy.map { $0["director"] } == [.string("Ann")])
        request.havingPredicate = try QueryPredicate(format: "moovies > 1")
        do { _ = try context.fetchDictionaries(request) } catch let error as StrataError {
            #expect(error.code == .unknownKey)
        }
    }

    @Test func dictionariesOfPropertiesAndDistinctValues() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>(predicate: \.year < 2000, sortDescriptors: [.ascending(\.year)])
        request.propertiesToFetch = [.attribute(\Movie.title), .attribute("director.name", as: "director")]
        let rows = try context.fetchDictionaries(request)
        #expect(rows.map { $0["title"] } == [.string("Thief"), .string("Heat"), .string("Ronin")])
        #expect(rows.map { $0["director"] } == [.string("Ann"), .string("Ann"), .string("Bob")])
        var distinct = FetchRequest<Movie>(predicate: \.director != nil)
        distinct.propertiesToFetch = [.attribute("director.name", as: "director")]
        distinct.returnsDistinctResults = true
        #expect(
            Set(try context.fetchDictionaries(distinct).compactMap { $0["director"] }) == [
                .string("Ann"), .string("Bob"),
            ])
        #expect(try context.fetchDictionaries(distinct).count == 2)
        var everything = FetchRequest<Movie>(predicate: \.title == "Heat")
        everything.propertiesToFetch = []
        let heat = try #require(try context.fetchDictionaries(everything).first)
        #expect(heat["year"] == .integer(1995))
        #expect(heat["title"] == .string("Heat"))
    }

    @Test func aggregatesOfTheWrongTypeAreTypedErrors() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>()
        request.propertiesToFetch = [.sum("title", as: "x")]
        do { _ = try context.fetchDictionaries(request) } catch let error as StrataError {
            #expect(error.code == .typeMismatch)
        }
        request.propertiesToFetch = [.sum("nope", as: "x")]
        do { _ = try context.fetchDictionaries(request) } catch let error as StrataError {
            #expect(error.code == .unknownKey)
        }
    }
}
