import Foundation
import StrataTesting
import Testing

@testable import Strata

@Suite struct LiveQueryTests {
    let library: MovieLibrary
    var container: PersistentContainer { library.container }

    init() throws {
        library = try MovieLibrary(movies: [("Heat", 1995), ("Thief", 1981)])
    }

    func save(_ body: @escaping @Sendable (ObjectContext) throws -> Void) async throws {
        try await container.performBackgroundTask { context in
            try body(context)
            try context.save()
        }
    }

    var commitObserverCount: Int {
        container.stores.compactMap { ($0 as? SQLiteStore)?.commitObservers.count }.reduce(0, +)
    }

    @Test func yieldsTheResultThenEachChangedResult() async throws {
        let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
        var results = container.observe(request).makeAsyncIterator()
        #expect(try await results.next()?.map(\.title) == ["Heat"])

        try await save { context in
            let ronin = Movie(context: context)
            ronin.title = "Ronin"
            ronin.year = 1998
        }
        #expect(try await results.next()?.map(\.title) == ["Heat", "Ronin"])

        // A save that leaves the result as it was (a review; a movie outside the predicate)
        // yields nothing; the next result is the one after the change that matters.
        try await save { context in
            Review(context: context).text = "Great"
            let thief = try #require(try context.fetch(Movie.self, where: \.title == "Thief").first)
            thief.rating = 3
        }
        try await save { context in
            let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
            context.delete(heat)
        }
        #expect(try await results.next()?.map(\.title) == ["Ronin"])
    }

    @Test func aTrackingRequestDecidesWhenToReRun() async throws {
        let movies = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
        var results = container.observe(movies, trackingChangesOf: FetchRequest<Review>()).makeAsyncIterator()
        let first = try #require(try await results.next())
        #expect(first.map(\.title) == ["Heat", "Thief"])

        // A movie's review changes what the list shows (its reviews' IDs).
        try await save { context in
            let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
            let review = Review(context: context)
            review.text = "Great"
            review.movie = heat
        }
        let second = try #require(try await results.next())
        #expect(second.first?.reviews.count == 1)
    }

    @Test func endingTheIterationRemovesTheRegistration() async throws {
        let before = commitObserverCount
        let sequence = container.observe(FetchRequest<Movie>())
        let consumer = Task {
            var count = 0
            for try await _ in sequence { count += 1 }
            return count
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while commitObserverCount == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(commitObserverCount == before + 1)
        consumer.cancel()
        _ = try? await consumer.value
        while commitObserverCount != before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(commitObserverCount == before)
    }

    @Test func aSlowConsumerGetsTheLatestResultAndNeverBlocksSaves() async throws {
        var results = container.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])).makeAsyncIterator()
        #expect(try await results.next()?.count == 2)
        for index in 0..<50 {
            try await save { context in Movie(context: context).title = "Movie \(index)" }
        }
        // Saves coalesce while nobody reads: the results read now end with all 52 movies.
        var latest = 0
        let deadline = ContinuousClock.now + .seconds(300)
        while latest < 52, ContinuousClock.now < deadline {
            latest = try await results.next()?.count ?? 0
        }
        #expect(latest == 52)
    }

    @Test func oneObjectIsFollowedUntilItIsDeleted() async throws {
        let context = container.newBackgroundContext()
        let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
        var values = container.observe(heat.typedObjectID, includingRelatedObjects: true).makeAsyncIterator()
        #expect(try await values.next()?.rating == 0)

        try await save { context in
            let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
            heat.rating = 8
        }
        #expect(try await values.next()?.rating == 8)

        // A related object: a new review changes the movie's snapshot (its review IDs).
        try await save { context in
            let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
            let review = Review(context: context)
            review.text = "Great"
            review.movie = heat
        }
        #expect(try await values.next()?.reviews.count == 1)

        try await save { context in
            for movie in try context.fetch(Movie.self, where: \.title == "Heat") { context.delete(movie) }
        }
        do {
            _ = try await values.next()
            Issue.record("the observation should end with objectDeleted")
        } catch let error as StrataError {
            #expect(error.code == .objectDeleted)
        }
    }

    @Test func aggregatesAreRecomputedOnRelevantSaves() async throws {
        var counts = container.observeCount(of: FetchRequest<Movie>(predicate: \.year >= 1990)).makeAsyncIterator()
        var sums = container.observeSum(of: \Movie.year).makeAsyncIterator()
        var maxima = container.observeMax(of: \Movie.year).makeAsyncIterator()
        #expect(try await counts.next() == 1)
        #expect(try await sums.next() == 1995 + 1981)
        #expect(try await maxima.next() == 1995)
        try await save { context in
            let ronin = Movie(context: context)
            ronin.title = "Ronin"
            ronin.year = 1998
        }
        #expect(try await counts.next() == 2)
        #expect(try await sums.next() == 1995 + 1981 + 1998)
        #expect(try await maxima.next() == 1998)
        var averages = container.observeAverage(of: \Movie.year, where: \.year < 1990).makeAsyncIterator()
        #expect(try await averages.next() == 1981)
    }
}
