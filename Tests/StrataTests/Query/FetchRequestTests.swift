import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// Fetch requests through contexts: predicates, sorting, limits, pending changes, result
/// types and errors.
@Suite struct FetchRequestTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer(
            [Movie.self, Review.self, Person.self, Sample.self], in: directory)
        let context = container.newBackgroundContext()
        let ann = Person(context: context)
        ann.name = "Ann"
        let bob = Person(context: context)
        bob.name = "Bob"
        for (index, (title, year)) in [
            ("Heat", 1995), ("Ronin", 1998), ("Clara Köhler", 2001), ("the thing", 1982), ("The Insider", 1999),
            ("a10", 2010),
            ("a9", 2009),
        ].enumerated() {
            let movie = Movie(title: title, year: Int16(year))
            context.insert(movie)
            movie.boxOffice = Decimal(index) + Decimal(string: "0.25")!
            movie.director = index.isMultiple(of: 2) ? ann : (index == 3 ? nil : bob)
            for stars in 0..<index {
                let review = Review(context: context)
                review.stars = Int32(stars % 6)
                review.movie = movie
            }
        }
        try context.save()
    }

    func titles(_ movies: [Movie]) -> [String] { movies.map(\.title) }

    @Test func keyPathOperatorsFilterInTheStore() throws {
        let context = container.newBackgroundContext()
        #expect(
            titles(try context.fetch(Movie.self, where: \.year > 1998, sortedBy: [.ascending(\.year)])) == [
                "The Insider", "Clara Köhler", "a9", "a10",
            ])
        #expect(
            titles(
                try context.fetch(
                    Movie.self, where: \.year > 1990 && !(\Movie.title == "Heat"), sortedBy: [.ascending(\.year)])) == [
                    "Ronin", "The Insider", "Clara Köhler", "a9", "a10",
                ])
        #expect(
            titles(
                try context.fetch(
                    Movie.self, where: (\Movie.year).between(1995...1999), sortedBy: [.ascending(\.title)])) == [
                    "Heat", "Ronin", "The Insider",
                ])
        #expect(
            titles(
                try context.fetch(
                    Movie.self, where: (\Movie.title).in(["Heat", "Ronin", "Nope"]), sortedBy: [.ascending(\.title)]))
                == [
                    "Heat", "Ronin",
                ])
        #expect(
            titles(
                try context.fetch(
                    Movie.self, where: (\Movie.title).beginsWith("the", options: .caseInsensitive),
                    sortedBy: [.ascending(\.year)])) == [
                    "the thing", "The Insider",
                ])
        #expect(
            titles(
                try context.fetch(
                    Movie.self,
                    where: (\Movie.title).equal(to: "clara kohler", options: [.caseInsensitive, .diacriticInsensitive]))
            ) == [
                "Clara Köhler"
            ])
        #expect(titles(try context.fetch(Movie.self, where: (\Movie.title).like("?eat"))) == ["Heat"])
        #expect(
            titles(
                try context.fetch(Movie.self, where: (\Movie.title).matches("a[0-9]+"), sortedBy: [.ascending(\.title)])
            ) == ["a10", "a9"])
        #expect(
            titles(try context.fetch(Movie.self, where: \.director?.name == "Bob", sortedBy: [.ascending(\.year)])) == [
                "Ronin", "a10",
            ])
        #expect(titles(try context.fetch(Movie.self, where: \.director == nil)) == ["the thing"])
        #expect(
            titles(try context.fetch(Movie.self, where: (\Movie.reviews).count >= 5, sortedBy: [.ascending(\.year)]))
                == ["a9", "a10"])
    }

    @Test func relationshipsCompareWithObjects() throws {
        let context = container.newBackgroundContext()
        let ann = try #require(try context.fetch(Person.self, where: \.name == "Ann").first)
        #expect(
            titles(try context.fetch(Movie.self, where: \.director == ann, sortedBy: [.ascending(\.year)])) == [
                "Heat", "The Insider", "Clara Köhler", "a9",
            ])
        let review = try #require(try context.fetch(Review.self, where: \.stars == 4).first)
        let movies = try context.fetch(Movie.self, where: (\Movie.reviews).contains(review))
        #expect(movies.count == 1 && movies.first === review.movie)
        #expect(try context.fetch(Movie.self, where: \.director != ann).count == 3)
    }

    @Test func sortingIsStableAndNumericAware() throws {
        let context = container.newBackgroundContext()
        let standard = titles(try context.fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)]))
        #expect(standard == ["Clara Köhler", "Heat", "Ronin", "The Insider", "a10", "a9", "the thing"])
        let localized = titles(
            try context.fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title, comparison: .localizedStandard)]))
        #expect(localized == ["a9", "a10", "Clara Köhler", "Heat", "Ronin", "The Insider", "the thing"])
        let caseless = titles(
            try context.fetch(Movie.self, where: nil, sortedBy: [.descending(\.title, comparison: .caseInsensitive)]))
        #expect(caseless == ["the thing", "The Insider", "Ronin", "Heat", "Clara Köhler", "a9", "a10"])
        // Nil sorts first ascending: "the thing" has no director.
        let byDirector = titles(
            try context.fetch(
                FetchRequest<Movie>(sortDescriptors: [
                    FetchSortDescriptor<Movie>(key: "director.name"), .ascending(\.year),
                ])))
        #expect(byDirector == ["the thing", "Heat", "The Insider", "Clara Köhler", "a9", "Ronin", "a10"])
        let byDecimal = titles(
            try context.fetch(Movie.self, where: nil, sortedBy: [.descending(\.boxOffice)], limit: 2))
        #expect(byDecimal == ["a9", "a10"])
    }

    @Test func limitsAndOffsets() throws {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Movie>().sorted(by: .ascending(\.year)).limit(2).offset(1)
        #expect(titles(try context.fetch(request)) == ["Heat", "Ronin"])
        #expect(try context.count(for: request) == 2)
        #expect(try context.count(for: FetchRequest<Movie>(predicate: \.year < 2000)) == 4)
        #expect(try context.fetchObjectIDs(request) == (try context.fetch(request)).map(\.objectID))
    }

    @Test func pendingChangesAreIncludedInOrder() throws {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Movie>(predicate: \.year >= 1998, sortDescriptors: [.ascending(\.year)])
        let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
        heat.year = 2000  // edited into the result
        let ronin = try #require(try context.fetch(Movie.self, where: \.title == "Ronin").first)
        context.delete(ronin)  // deleted out of it
        let insider = try #require(try context.fetch(Movie.self, where: \.title == "The Insider").first)
        insider.year = 1980  // edited out of it
        let new = Movie(title: "Collateral", year: 2004)  // inserted into it
        context.insert(new)
        let old = Movie(context: context)  // inserted, not matching
        old.title = "Old"
        old.year = 1950
        let pending = titles(try context.fetch(request))
        #expect(pending == ["Heat", "Clara Köhler", "Collateral", "a9", "a10"])
        #expect(try context.count(for: request) == 5)
        #expect(titles(try context.fetch(request.limit(2).offset(1))) == ["Clara Köhler", "Collateral"])
        var storeOnly = request
        storeOnly.includesPendingChanges = false
        #expect(titles(try context.fetch(storeOnly)).contains("Ronin"))
        try context.save()
        #expect(
            titles(try container.newBackgroundContext().fetch(request)) == [
                "Heat", "Clara Köhler", "Collateral", "a9", "a10",
            ])
    }

    @Test func unknownKeysAndWrongTypesAreTypedErrors() throws {
        let context = container.newBackgroundContext()
        let unknown = FetchRequest<Movie>(predicate: FetchPredicate(.comparison(.keyPath("titel"), .equalTo, "x")))
        let error = try #require(throws: StrataError.self) { try context.fetch(unknown) }
        #expect(error.code == .unknownKey)
        #expect(error.entityName == "Movie")
        #expect(error.message.contains("Did you mean 'title'?"))
        let wrongType = FetchRequest<Movie>(predicate: FetchPredicate(.comparison(.keyPath("year"), .equalTo, "x")))
        #expect(throws: StrataError.self) { try context.fetch(wrongType) }
        #expect((try? context.fetch(wrongType)) == nil)
        do { _ = try context.fetch(wrongType) } catch let error as StrataError { #expect(error.code == .typeMismatch) }
        let computed = FetchRequest<Movie>(predicate: \.loudTitle == "HEAT")
        do { _ = try context.fetch(computed) } catch let error as StrataError { #expect(error.code == .unknownKey) }
        // `@Transient` properties are not part of the entity at all.
        let transient = FetchRequest<Movie>(predicate: \.cache == 1)
        do { _ = try context.fetch(transient) } catch let error as StrataError { #expect(error.code == .unknownKey) }
        let badRegex = FetchRequest<Movie>(predicate: (\Movie.title).matches("(unclosed"))
        do { _ = try context.fetch(badRegex) } catch let error as StrataError {
            #expect(error.code == .invalidPredicate)
        }
        let badSort = FetchRequest<Movie>(sortDescriptors: [FetchSortDescriptor<Movie>(key: "reviews")])
        do { _ = try context.fetch(badSort) } catch let error as StrataError {
            #expect(error.code == .invalidPredicate)
        }
    }

    @Test func valuesAreBoundNeverSpliced() throws {
        let context = container.newBackgroundContext()
        for hostile in ["x'; DROP TABLE \"Movie\"; --", "\" OR 1=1 --", "%' OR '1'='1"] {
            #expect(try context.fetch(Movie.self, where: \.title == hostile).isEmpty)
            #expect(try context.fetch(Movie.self, where: (\Movie.title).contains(hostile)).isEmpty)
        }
        #expect(try context.count(for: FetchRequest<Movie>()) == 7)
        let hostileKey = FetchRequest<Movie>(
            predicate: FetchPredicate(.comparison(.keyPath("title\" = title OR \"1"), .equalTo, "x")))
        do { _ = try context.fetch(hostileKey) } catch let error as StrataError { #expect(error.code == .unknownKey) }
    }

    @Test func anEqualityFetchOnAnIndexedAttributeUsesTheIndex() throws {
        let store = try #require(container.stores.first as? SQLiteStore)
        var query = try #require(
            try store.makeQuery(
                FetchPlan(
                    StoreFetchRequest(entityName: "Movie", predicate: .comparison(.keyPath("title"), .equalTo, "Heat")),
                    in: store.schema)))
        let sql = "EXPLAIN QUERY PLAN SELECT t0.\"_pk\"" + query.sql(withOrder: true)
        let arguments = StatementArguments(query.arguments)
        let plan = try store.writer.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.contains { $0.contains("INDEX") && $0.contains("title") && !$0.hasPrefix("SCAN") }, "\(plan)")
    }

    @Test func prefetchingLoadsRelationshipsWithTheFetch() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)])
        request.relationshipKeyPathsForPrefetching = ["director.directed", "reviews"]
        let movies = try context.fetch(request)
        // Everything prefetched is in memory: it reads the same with the store closed.
        try container.close()
        #expect(movies.map { $0.reviews.count } == [3, 0, 1, 4, 2, 6, 5])
        #expect(movies.map { $0.director?.name ?? "-" } == ["-", "Ann", "Bob", "Ann", "Ann", "Ann", "Bob"])
        #expect(movies.map { $0.director?.directed.count ?? 0 } == [0, 4, 2, 4, 4, 4, 2])
        #expect(movies.allSatisfy { $0.faultingError == nil })
    }

    /// Many objects that share a few related objects load each related object once: 600 movies
    /// of two directors read the directors with one statement, not one per 500 movies.
    @Test func prefetchingLoadsEachSharedObjectOnce() throws {
        let logs = LogCapture()
        var description = StoreDescription.sqlite(directory.file("Shared.sqlite"))
        description.logger = logs.logger()
        description.tracesStatements = true
        description.slowStatementThreshold = nil
        let shared = try PersistentContainer(
            name: "Shared", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [description])
        defer { try? shared.close() }
        let writer = shared.newBackgroundContext()
        let directors = ["Ann", "Bob"].map { name in
            let person = Person(context: writer)
            person.name = name
            return person
        }
        for number in 0..<600 {
            let movie = Movie(title: "Movie \(number)", year: 2000)
            writer.insert(movie)
            movie.director = directors[number % 2]
        }
        try writer.save()

        let context = shared.newBackgroundContext()
        var request = FetchRequest<Movie>()
        request.relationshipKeyPathsForPrefetching = ["director"]
        let start = logs.messages.count
        let movies = try context.fetch(request)
        let statements = logs.messages.dropFirst(start).filter { $0.message == "Statement" }
            .compactMap { $0.metadata["strata.sql"] }
        let personReads = statements.filter { $0.hasPrefix("SELECT") && $0.contains("\"Person\"") }
        #expect(personReads.count == 1, "\(personReads)")
        try shared.close()
        #expect(Set(movies.compactMap { $0.director?.name }) == ["Ann", "Bob"])
        #expect(movies.allSatisfy { $0.director?.faultingError == nil })
    }

    @Test func prefetchingAnUnknownRelationshipIsATypedError() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>()
        request.relationshipKeyPathsForPrefetching = ["directr"]
        let error = try #require(throws: StrataError.self) { try context.fetch(request) }
        #expect(error.code == .unknownKey)
        #expect(error.message.contains("director"))
    }

    @Test func buildersChain() throws {
        let context = container.newBackgroundContext()
        #expect(try context.fetch(FetchRequest<Movie>.fetchingAll()).count == 7)
        #expect(titles(try context.fetch(FetchRequest<Movie>.fetchingBy(key: "title", value: "Heat"))) == ["Heat"])
        #expect(
            titles(try context.fetch(FetchRequest<Movie>.fetchingBy(pairs: [("title", "Heat"), ("year", 1995)]))) == [
                "Heat"
            ])
        #expect(try context.fetch(FetchRequest<Movie>.fetchingBy(pairs: [("title", "Heat"), ("year", 1996)])).isEmpty)
        #expect(
            titles(
                try context.fetch(
                    FetchRequest<Movie>.fetchingFor(key: "year", values: [1995, 1998]).sortedBy(key: "year"))) == [
                    "Heat", "Ronin",
                ])
        #expect(
            titles(
                try context.fetch(
                    FetchRequest<Movie>.fetchingFor(keys: ["title", "director.name"], value: "Ann").sortedBy(
                        keys: ["year"], ascending: false)))
                == ["a9", "Clara Köhler", "The Insider", "Heat"])
        let removed = try context.removeInstances(of: Movie.self, matching: \.year < 1990)
        #expect(removed == 1)
        #expect(try context.fetch(FetchRequest<Movie>.fetchingAll()).count == 6)
    }

    @Test func batchedFetchesKeepOneBatchInMemory() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.year)])
        request.fetchBatchSize = 2
        let results = try context.fetchBatched(request)
        #expect(results.count == 7)
        #expect(results.map(\.title) == titles(try context.fetch(request)))
        weak let first = results[0]
        #expect(first != nil)
        _ = results[6]
        #expect(first == nil)
        #expect(results[0].title == "the thing")
        #expect(throws: StrataError.self) { try context.fetchBatched(FetchRequest<Movie>(entityName: "Review")) }
        // Unsaved changes are included, as in fetch(_:).
        context.insert(Movie(title: "Zz", year: 2030))
        #expect(try context.fetchBatched(request).last?.title == "Zz")
    }

    @Test func formatStringsAndFoundationPredicatesFetchTheSameObjects() throws {
        let context = container.newBackgroundContext()
        let byKeyPath = titles(
            try context.fetch(
                Movie.self, where: \.year > 1995 && \.director?.name == "Ann", sortedBy: [.ascending(\.year)]))
        #expect(byKeyPath == ["The Insider", "Clara Köhler", "a9"])
        let format = try FetchRequest<Movie>(format: "%K > %d AND director.name == %@", "year", 1995, "Ann").sorted(
            by: .ascending(\.year))
        #expect(titles(try context.fetch(format)) == byKeyPath)
        let foundation = try FetchRequest(
            #Predicate<Movie> { $0.year > 1995 && $0.director?.name == "Ann" }, sortDescriptors: [.ascending(\.year)])
        #expect(titles(try context.fetch(foundation)) == byKeyPath)

        let template = try QueryPredicate(format: "year >= $FROM AND ANY reviews.stars >= $STARS")
        let filled = try template.substituting(["FROM": 2000, "STARS": 5])
        #expect(
            titles(
                try context.fetch(
                    FetchRequest<Movie>(predicate: FetchPredicate(filled), sortDescriptors: [.ascending(\.year)]))) == [
                    "a9"
                ])
        let subquery = try FetchRequest<Movie>(format: "SUBQUERY(reviews, $r, $r.stars >= 3).@count >= 2").sorted(
            by: .ascending(\.year))
        #expect(titles(try context.fetch(subquery)) == ["a9", "a10"])
        let folded = try FetchRequest<Movie>(format: "title ==[cd] %@", "clara kohler")
        #expect(titles(try context.fetch(folded)) == ["Clara Köhler"])
        let unbound = try FetchRequest<Movie>(format: "year > $YEAR")
        do { _ = try context.fetch(unbound) } catch let error as StrataError {
            #expect(error.code == .invalidPredicate)
        }
        let malformed = #expect(throws: StrataError.self) { try FetchRequest<Movie>(format: "year > ") }
        #expect(malformed?.code == .invalidPredicate)
        #expect(malformed?.offset == 7)
    }

    @Test func theReadmeExampleCompilesAndRuns() throws {
        let context = container.newBackgroundContext()
        let movies = try context.fetch(
            Movie.self, where: \.title == "Ronin" && (\Movie.reviews).count > 0, sortedBy: [.descending(\.releaseDate)])
        let same = try context.fetch(FetchRequest<Movie>(format: "title == %@ AND reviews.@count > 0", "Ronin"))
        #expect(movies.map(\.title) == ["Ronin"])
        #expect(same == movies)
        #expect(try context.max(\Review.stars) == 5)
    }
}
