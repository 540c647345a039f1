import Foundation
import StrataTesting
import Testing

@testable import Strata

@Suite struct EntityObserverTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
    }

    @Test func reportsTypedChangesOfItsEntityOnly() throws {
        let context = container.newBackgroundContext()
        var received: [EntityObserver<Movie>.Changes] = []
        let observer = EntityObserver<Movie>(context, on: .didSave) { received.append($0) }
        let heat = Movie(context: context)
        heat.title = "Heat"
        try context.save()
        #expect(received.count == 1)
        #expect(received.first?.inserted.map(\.title) == ["Heat"])
        #expect(received.first?.event == .didSave)

        // A save of reviews only: the movie observer stays quiet.
        let review = Review(context: context)
        review.text = "Great"
        try context.save()
        #expect(received.count == 1)

        heat.rating = 8
        try context.save()
        #expect(received.count == 2)
        #expect(received.last?.updated == [heat])
        #expect(received.last?.inserted.isEmpty == true)
        observer.cancel()
    }

    @Test func asksOnlyForTheKindsAndObjectsItWants() throws {
        let context = container.newBackgroundContext()
        var deletedTitles: [[String]] = []
        let observer = EntityObserver<Movie>(context, on: .willSave, changes: .deleted, where: { $0.year >= 1990 }) {
            deletedTitles.append($0.deleted.map(\.title).sorted())
        }
        for (title, year) in [("Heat", 1995), ("Thief", 1981), ("Ronin", 1998)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.year = Int16(year)
        }
        try context.save()  // insertions only: not asked for
        #expect(deletedTitles.isEmpty)
        for movie in try context.fetch(Movie.self) { context.delete(movie) }
        try context.save()
        #expect(deletedTitles == [["Heat", "Ronin"]])  // Thief is filtered out
        observer.cancel()
    }

    @Test func didChangeFollowsPendingChangesAndReleaseStopsIt() throws {
        let context = container.newBackgroundContext()
        var calls = 0
        var observer: EntityObserver<Movie>? = EntityObserver<Movie>(context, on: .didChange, changes: .inserted) { changes in
            calls += changes.inserted.count
        }
        Movie(context: context).title = "Heat"
        context.processPendingChanges()
        #expect(calls == 1)
        #expect(context.observerCount == 1)
        withExtendedLifetime(observer) {}
        observer = nil
        #expect(context.observerCount == 0)
        Movie(context: context).title = "Ronin"
        context.processPendingChanges()
        #expect(calls == 1)
    }
}

/// The main-actor form of `observeChanges`: handlers that collect into main-actor state, as the
/// stack kit's own tests (run on the main thread) do.
@MainActor @Suite struct MainActorEntityObserverTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
    }

    @Test func handlersOnTheViewContextUseMainActorState() throws {
        let context = container.viewContext
        final class Results { var inserted: [String] = []; var deleted = 0 }
        let results = Results()
        var observer: EntityObserver<Movie>? = EntityObserver<Movie>(context: context)
        observer?.observeChangesOnMainActor(for: .inserted) { inserted, updated, deleted in
            results.inserted += inserted.map(\.title)
            #expect(updated.isEmpty && deleted.isEmpty)
        }
        observer?.observeChangesOnMainActor(upon: .didSave, for: .deleted, filter: { $0.year > 2000 }) { _, _, deleted in
            results.deleted += deleted.count
        }
        for (title, year) in [("Heat", 1995), ("Drive", 2011)] as [(String, Int16)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.year = year
        }
        try context.save()
        #expect(results.inserted.sorted() == ["Drive", "Heat"])
        for movie in try context.fetch(Movie.self) { context.delete(movie) }
        try context.save()
        #expect(results.deleted == 1)  // the filter kept Drive only
        observer = nil
        Movie(context: context).title = "Ronin"
        try context.save()
        #expect(results.inserted.count == 2)  // released: quiet
    }

    @Test func anObserverOfEveryContextHearsTheViewContexts() async throws {
        final class Titles { var values: [String] = [] }
        let titles = Titles()
        let container = container
        // Other tests' view contexts are heard too: only this container's movies count.
        let observer = EntityObserver<Movie>().observeChangesOnMainActor(
            for: .inserted, filter: { $0.context?.container === container }
        ) { inserted, _, _ in
            titles.values += inserted.map(\.title)
        }
        let context = container.viewContext
        Movie(context: context).title = "Heat"
        try context.save()
        // A background context posts in its own domain: not heard by this form.
        try await container.performBackgroundTask { background in
            Movie(context: background).title = "Elsewhere"
            try background.save()
        }
        #expect(titles.values == ["Heat"])
        withExtendedLifetime(observer) {}
    }
}

