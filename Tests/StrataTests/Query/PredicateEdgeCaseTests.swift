import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Edge cases a review found: huge and NaN numbers, folding on both sides, unsaved edits of
/// related objects, affected stores, damaged rows.
@Suite struct PredicateEdgeCaseTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer(
            [Movie.self, Review.self, Person.self, Sample.self], in: directory)
        let context = container.newBackgroundContext()
        let ann = Person(context: context)
        ann.name = "Ann"
        for title in ["Heat", "heat", "Ronin"] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = title == "Heat" ? ann : nil
            movie.rating = 5
        }
        let review = Review(context: context)
        review.text = "R1"
        review.movie = try context.fetch(Movie.self, where: \.title == "Heat").first
        let sample = Sample(context: context)
        sample.string = "abc"
        sample.optionalString = "Abc"
        sample.int64 = Int64.max
        try context.save()
    }

    /// Titles from the store and from the in-memory evaluator.
    func bothWays(_ predicate: QueryPredicate) throws -> (store: [String], memory: [String]) {
        let context = container.newBackgroundContext()
        let fromStore = try context.fetch(
            FetchRequest<Movie>(predicate: FetchPredicate(predicate), sortDescriptors: [.ascending(\.title)]))
        let evaluator = PredicateEvaluator(
            predicate: try PredicateResolver.resolve(predicate, for: Movie.entity, in: container.schema))
        let all = try context.fetch(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]))
        return (fromStore.map(\.title), all.filter { evaluator.evaluate($0) }.map(\.title))
    }

    @Test func hugeDoublesCompareWithoutTrapping() throws {
        let context = container.newBackgroundContext()
        // Int64.max is just below 2^63, the double nearest to it.
        for (value, expected) in [
            (9.25e18, 0), (-9.25e18, 1), (0x1p63, 0), (0x1p62, 1), (.infinity, 0), (-.infinity, 1),
        ] {
            let predicate = FetchPredicate<Sample>(
                .comparison(.keyPath("int64"), .greaterThanOrEqualTo, .value(.double(value))))
            #expect(try context.fetch(FetchRequest(predicate: predicate)).count == expected, "\(value)")
            _ = Sample(context: context)  // unsaved: the next fetch evaluates in memory too
            #expect(
                try context.fetch(FetchRequest(predicate: predicate)).filter { !$0.isInserted }.count == expected,
                "\(value)")
            context.rollback()
        }
    }

    /// NaN is unequal to everything, so SQL and memory used to disagree about it; both now refuse
    /// it with the same typed error, in a comparison and inside an `IN` list.
    @Test func nanIsRefusedByBothEvaluators() throws {
        let predicates: [QueryPredicate] = [
            .comparison(.keyPath("rating"), .greaterThan, .value(.double(.nan))),
            .not(.comparison(.keyPath("rating"), .lessThan, .value(.double(.nan)))),
            .comparison(.keyPath("rating"), .in, .list([.value(.double(1)), .value(.double(.nan))])),
        ]
        for predicate in predicates {
            let context = container.newBackgroundContext()
            #expect(throws: StrataError.self) {
                try context.fetch(FetchRequest<Movie>(predicate: FetchPredicate(predicate)))
            }
            do {
                _ = try PredicateResolver.resolve(predicate, for: Movie.entity, in: container.schema)
                Issue.record("NaN was accepted by the in-memory resolver: \(predicate)")
            } catch let error as StrataError {
                #expect(error.code == .invalidPredicate)
                #expect(error.message.contains("NaN"))
            }
        }
    }

    @Test func foldingAppliesToBothSidesAndToAggregates() throws {
        let attributes = FetchPredicate<Sample>(
            .comparison(.keyPath("string"), .equalTo, .keyPath("optionalString"), options: .caseInsensitive))
        let context = container.newBackgroundContext()
        #expect(try context.fetch(FetchRequest(predicate: attributes)).count == 1)
        let sample = try #require(try context.fetch(Sample.self).first)
        let evaluator = PredicateEvaluator(
            predicate: try PredicateResolver.resolve(attributes.tree, for: Sample.entity, in: container.schema))
        #expect(evaluator.evaluate(sample))

        let within = try bothWays(
            .comparison(.keyPath("title"), .in, .value(.string("The Big Heat")), options: .caseInsensitive))
        #expect(within.store == ["Heat", "heat"] && within.memory == ["Heat", "heat"])
        let maximum = try bothWays(
            .comparison(.keyPath("reviews.@max.text"), .equalTo, .value(.string("r1")), options: .caseInsensitive))
        #expect(maximum.store == ["Heat"] && maximum.memory == ["Heat"])
    }

    @Test func unsavedEditsOfReleasedRelatedObjectsCount() throws {
        let context = container.newBackgroundContext()
        let ann = try #require(try context.fetch(Person.self).first)
        ann.name = "Zed"  // the movies are not loaded in this context
        #expect(try context.fetch(Movie.self, where: \.director?.name == "Zed").map(\.title) == ["Heat"])
        #expect(try context.fetch(Movie.self, where: \.director?.name == "Ann").isEmpty)
    }

    @Test func neverMatchesNothingAndAlwaysEverything() throws {
        let context = container.newBackgroundContext()
        #expect(try context.fetch(Movie.self, where: .never).isEmpty)
        #expect(try context.fetch(Movie.self, where: .always).count == 3)
        #expect(try context.removeInstances(of: Movie.self, matching: .never) == 0)
    }

    @Test func affectedStoresHoldForUnsavedObjectsAndBatches() throws {
        let context = container.newBackgroundContext()
        _ = Movie(context: context).title = "Unsaved"
        var request = FetchRequest<Movie>()
        request.affectedStores = ["another-store"]
        #expect(try context.fetch(request).isEmpty)
        #expect(try context.fetchBatched(request).isEmpty)
        request.affectedStores = [try #require(container.store(forEntityNamed: "Movie")).identifier]
        #expect(try context.fetch(request).count == 4)
    }

    @Test func damagedRowsAreSkippedNotTrusted() throws {
        let store = try #require(container.store(forEntityNamed: "Movie") as? SQLiteStore)
        try store.writer.write { db in
            try db.execute(sql: #"UPDATE "Movie" SET "_entity" = 42 WHERE "title" = 'Ronin'"#)
            try db.execute(sql: #"UPDATE "Movie" SET "director" = 'not a key' WHERE "title" = 'Heat'"#)
        }
        let context = container.newBackgroundContext()
        let movies = try context.fetch(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]))
        #expect(movies.map(\.title) == ["Heat", "heat"])
        #expect(movies.first?.director == nil)
        #expect(try context.fetchObjectIDs(FetchRequest<Movie>()).count == 2)
    }

    @Test func codableCollectionsContainValues() throws {
        let context = container.newBackgroundContext()
        let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
        heat.tags = ["crime", "Thriller", "1995"]
        let ronin = try #require(try context.fetch(Movie.self, where: \.title == "Ronin").first)
        ronin.tags = ["spy"]
        try context.save()
        let cases: [(QueryPredicate, [String])] = [
            (.comparison(.keyPath("tags"), .contains, "crime"), ["Heat"]),
            (.comparison(.keyPath("tags"), .contains, "thriller"), []),
            (.comparison(.keyPath("tags"), .contains, "thriller", options: .caseInsensitive), ["Heat"]),
            (.comparison(.keyPath("tags"), .contains, "1995"), ["Heat"]),
            (.comparison(.keyPath("tags"), .contains, 1995), []),
            (.not(.comparison(.keyPath("tags"), .contains, "spy")), ["Heat", "heat"]),
        ]
        for (predicate, expected) in cases {
            let result = try bothWays(predicate)
            #expect(result.store == expected, "\(predicate)")
            #expect(result.memory == expected, "\(predicate) in memory")
        }
        let translated = try FetchPredicate(#Predicate<Movie> { $0.tags.contains("spy") })
        #expect(try context.fetch(FetchRequest(predicate: translated)).map(\.title) == ["Ronin"])
        let sample = FetchPredicate<Sample>(.comparison(.keyPath("location"), .contains, .value(.integer(0))))
        #expect(try context.fetch(FetchRequest(predicate: sample)).count == 1)
        let wrong = FetchRequest<Movie>(predicate: FetchPredicate(.comparison(.keyPath("tags"), .beginsWith, "c")))
        do { _ = try context.fetch(wrong) } catch let error as StrataError { #expect(error.code == .typeMismatch) }
    }
}
