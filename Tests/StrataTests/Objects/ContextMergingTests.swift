import Foundation
import StrataTesting
import Testing

@testable import Strata

@Suite struct ContextMergingTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
        let context = container.newBackgroundContext()
        let heat = Movie(context: context)
        heat.title = "Heat"
        heat.rating = 7
        for text in ["Great", "Long"] {
            let review = Review(context: context)
            review.text = text
            review.movie = heat
        }
        try context.save()
    }

    func movie(in context: ObjectContext) throws -> Movie {
        try #require(try context.fetch(Movie.self).first)
    }

    @Test func explicitMergeRefreshesAndKeepsLocalEdits() throws {
        let reader = container.newBackgroundContext()
        let local = try movie(in: reader)
        local.year = 1995  // an unsaved edit here

        let writer = container.newBackgroundContext()
        var saved: ContextChanges?
        let observation = writer.addObserver(for: .didSave) { saved = $0.changes }
        let remote = try movie(in: writer)
        remote.rating = 9
        try writer.save()
        observation.cancel()

        #expect(local.rating == 7)  // not merged yet
        reader.mergeChanges(from: try #require(saved))
        #expect(local.rating == 9)
        #expect(local.year == 1995)
        #expect(local.hasChanges)
        try reader.save()  // no optimistic-locking failure: the merge brought the new version
        let check = try movie(in: container.newBackgroundContext())
        #expect(check.rating == 9)
        #expect(check.year == 1995)
    }

    @Test func storeTrumpLetsTheSavedValueWinAndRollbackDropsEdits() throws {
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .rollback] {
            let reader = container.newBackgroundContext()
            reader.mergePolicy = policy
            reader.automaticallyMergesChangesFromContainer = true
            let local = try movie(in: reader)
            local.rating = 1
            local.year = 2001

            let writer = container.newBackgroundContext()
            let remote = try movie(in: writer)
            remote.rating = remote.rating + 1
            let expected = remote.rating
            try writer.save()

            _ = try reader.fetch(Movie.self)  // merges before fetching
            #expect(local.rating == expected, "\(policy)")
            #expect(local.year == (policy == .rollback ? 1999 : 2001), "\(policy)")
        }
    }

    @Test func automaticMergingFollowsOtherContextsSaves() async throws {
        let viewer = container.newBackgroundContext()
        viewer.automaticallyMergesChangesFromContainer = true
        let local = try movie(in: viewer)
        #expect(local.reviews.count == 2)
        let long = try #require(local.reviews.first { $0.text == "Long" })

        // Another context, on another thread, updates and deletes.
        let heatID = local.objectID
        try await container.performBackgroundTask { context in
            let movie = try #require(try context.existingObject(with: heatID) as? Movie)
            movie.title = "Heat (1995)"
            let long = try #require(movie.reviews.first { $0.text == "Long" })
            context.delete(long)
            try context.save()
        }

        let titles = try viewer.fetch(Movie.self).map(\.title)
        #expect(titles == ["Heat (1995)"])
        #expect(local.title == "Heat (1995)")
        #expect(local.reviews.map(\.text) == ["Great"])  // the deleted review left the relationship
        #expect(try viewer.fetch(Review.self).map(\.text) == ["Great"])
        #expect(long.context == nil)  // the deleted object left the context
        #expect(!viewer.hasChanges)

        // Turned off, saves are no longer collected.
        viewer.automaticallyMergesChangesFromContainer = false
        let writer = container.newBackgroundContext()
        try movie(in: writer).rating = 3
        try writer.save()
        _ = try viewer.fetch(Review.self)
        #expect(local.rating == 7)
    }

    @Test func aContextDoesNotMergeItsOwnSaves() throws {
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let heat = try movie(in: context)
        heat.rating = 8
        try context.save()
        #expect(context.mergeInbox?.drain().isEmpty == true)
        #expect(!context.hasChanges)
    }
}
