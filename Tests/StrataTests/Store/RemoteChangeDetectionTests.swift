import Foundation
import StrataTesting
import Testing

@testable import Strata

/// A second container on the same file writes as another process would: its commits reach this
/// container only through `PRAGMA data_version` polling.
@Suite(.timeLimit(.minutes(10))) struct RemoteChangeDetectionTests {
    let directory: TemporaryDirectory
    let url: URL
    let container: PersistentContainer
    let other: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.url.appendingPathComponent("Shared.sqlite")
        container = try PersistentContainer(
            name: "Shared", entities: [Movie.self, Review.self, Person.self],
            storeDescriptions: [.sqlite(url, remoteChangePollingInterval: .milliseconds(10))])
        other = try PersistentContainer(
            name: "Shared", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        for (title, year) in [("Heat", 1995), ("Ronin", 1998), ("Thief", 1981)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.year = Int16(year)
        }
        try context.save()
    }

    /// Waits for the next remote change the container's saved-changes stream reports.
    func nextRemoteChange(_ iterator: inout ContextChangesSequence.Iterator) async throws -> ContextChanges {
        while let changes = await iterator.next() {
            if changes.isRemoteChange { return changes }
        }
        throw CancellationError()
    }

    @Test func ownSavesAreNotRemoteChanges() async throws {
        let remote = LockedBox(0)
        let observation = container.addCommitObserver { commit in
            if commit.isRemote { remote.withLock { $0 += 1 } }
        }
        let context = container.newBackgroundContext()
        try context.fetch(Movie.self, where: \.title == "Heat").first?.rating = 4
        try context.save()
        try await Task.sleep(for: .milliseconds(100))
        #expect(remote.withLock { $0 } == 0)
        observation.cancel()
    }

    @Test func mergingARemoteChangeRefreshesObjectsAndRefetchesControllers() async throws {
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        try controller.performFetch()
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        let heat = try #require(controller.fetchedObjects.first { $0.title == "Heat" })
        let thief = try #require(controller.fetchedObjects.first { $0.title == "Thief" })
        let roninID = try #require(controller.fetchedObjects.first { $0.title == "Ronin" }).objectID
        thief.rating = 5  // an unsaved local edit, kept through the merge
        var saves = container.savedChanges().makeAsyncIterator()

        let writer = other.newBackgroundContext()
        try #require(try writer.fetch(Movie.self, where: \.title == "Heat").first).title = "Heat (1995)"
        writer.delete(try #require(try writer.fetch(Movie.self, where: \.title == "Ronin").first))
        try #require(try writer.fetch(Movie.self, where: \.title == "Thief").first).year = 1980
        let alien = Movie(context: writer)
        alien.title = "Alien"
        try writer.save()

        let remote = try await nextRemoteChange(&saves)
        #expect(remote.insertedObjectIDs.isEmpty && remote.updatedObjectIDs.isEmpty)
        context.processPendingChanges()
        #expect(heat.title == "Heat (1995)")
        #expect(thief.year == 1980)
        #expect(thief.rating == 5)
        #expect(controller.fetchedObjects.map(\.title) == ["Alien", "Heat (1995)", "Thief"])
        // Which objects changed is unknown: every object that stays is reported as updated.
        let change = try #require(delegate.batches.first?.change)
        #expect(change.deletedIndexPaths == [IndexPath(item: 1, section: 0)])
        #expect(change.objectChanges.first { $0.type == .delete }?.objectID == roninID)
        #expect(change.insertedIndexPaths == [IndexPath(item: 0, section: 0)])
        #expect(change.updatedIndexPaths == [IndexPath(item: 0, section: 0), IndexPath(item: 2, section: 0)])
    }

    @Test func liveQueriesRunAgainAfterARemoteChange() async throws {
        var titles = container.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])).makeAsyncIterator()
        #expect(try await titles.next()?.map(\.title) == ["Heat", "Ronin", "Thief"])
        let writer = other.newBackgroundContext()
        writer.delete(try #require(try writer.fetch(Movie.self, where: \.title == "Ronin").first))
        try writer.save()
        #expect(try await titles.next()?.map(\.title) == ["Heat", "Thief"])
    }

    @Test func closingTheContainerStopsPolling() async throws {
        try container.close()
        let store = try #require(container.stores.first as? SQLiteStore)
        let writer = other.newBackgroundContext()
        Movie(context: writer).title = "Alien"
        try writer.save()
        let remote = LockedBox(0)
        let observation = store.addCommitObserver { commit in
            if commit.isRemote { remote.withLock { $0 += 1 } }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(remote.withLock { $0 } == 0)
        observation.cancel()
    }
}
