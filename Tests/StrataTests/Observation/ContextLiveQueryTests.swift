import Foundation
import StrataTesting
import Testing

@testable import Strata

@Suite(.timeLimit(.minutes(10))) struct ContextLiveQueryTests {
    let library: MovieLibrary
    var container: PersistentContainer { library.container }

    init() throws {
        library = try MovieLibrary(movies: [("Heat", 1995), ("Thief", 1981)])
    }

    @Test func yieldsUnsavedChangesOnceProcessedAndOtherContextsSaves() async throws {
        let context = container.newBackgroundContext()
        let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
        var results = context.observe(request).makeAsyncIterator()
        #expect(try await results.next()?.map(\.title) == ["Heat", "Thief"])

        // An unsaved insertion, once the context processes it.
        let ronin = Movie(context: context)
        ronin.title = "Ronin"
        context.processPendingChanges()
        #expect(try await results.next()?.map(\.title) == ["Heat", "Ronin", "Thief"])

        // Another context's save: merged into this context (which does not merge by itself),
        // so the objects it holds show the saved values, next to its own unsaved insertion.
        let heat = try #require(try context.fetch(Movie.self, where: \.title == "Heat").first)
        try await container.performBackgroundTask { other in
            Review(context: other).text = "unrelated"  // no new result for this one
            try other.save()
            try #require(try other.fetch(Movie.self, where: \.title == "Heat").first).title = "Heat (1995)"
            try other.save()
        }
        #expect(try await results.next()?.map(\.title) == ["Heat (1995)", "Ronin", "Thief"])
        #expect(heat.title == "Heat (1995)")
        #expect(context.hasChanges)  // the insertion is still unsaved

        try context.save()  // saving changes nothing in the result: no new element
        try await container.performBackgroundTask { other in
            other.delete(try #require(try other.fetch(Movie.self, where: \.title == "Thief").first))
            try other.save()
        }
        #expect(try await results.next()?.map(\.title) == ["Heat (1995)", "Ronin"])
    }

    @Test func endingTheIterationRemovesItsRegistrations() async throws {
        let context = container.newBackgroundContext()
        let observers = context.observerCount
        let inboxes = container.mergeInboxes.count
        var seen: [[String]] = []
        for try await movies in context.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])) {
            seen.append(movies.map(\.title))
            #expect(context.observerCount == observers + 2)
            #expect(container.mergeInboxes.count == inboxes + 2)  // its wake-ups, and the context's saves
            if seen.count == 2 { break }
            try await container.performBackgroundTask { other in
                Movie(context: other).title = "Alien"
                try other.save()
            }
        }
        #expect(seen == [["Heat", "Thief"], ["Alien", "Heat", "Thief"]])
        #expect(context.observerCount == observers)
        #expect(container.mergeInboxes.count == inboxes)
    }

    @Test func aContextWithoutAContainerFollowsItsOwnChanges() async throws {
        let context = ObjectContext(schema: container.schema)
        var results = context.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])).makeAsyncIterator()
        #expect(try await results.next()?.isEmpty == true)
        Movie(context: context).title = "Brazil"
        context.processPendingChanges()
        #expect(try await results.next()?.map(\.title) == ["Brazil"])
    }
}
