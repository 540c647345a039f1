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
