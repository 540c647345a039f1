import Foundation
import StrataTesting
import Testing

@testable import Strata

@Suite struct ContextNotificationTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
    }

    /// Saves one movie titled `title` in a new context and returns its ID.
    func savedMovie(_ title: String) throws -> ObjectID {
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = title
        try context.save()
        return movie.objectID
    }

    @Test func processingPendingChangesReportsWhatChangedSinceLastTime() throws {
        let heatID = try savedMovie("Heat")
        let roninID = try savedMovie("Ronin")
        let context = container.newBackgroundContext()
        var received: [ContextNotification] = []
        let observation = context.addObserver(for: .objectsDidChange) { received.append($0) }

        let heat = try #require(try context.existingObject(with: heatID) as? Movie)
        let ronin = try #require(try context.existingObject(with: roninID) as? Movie)
        heat.title = "Heat (1995)"
        context.delete(ronin)
        let thief = Movie(context: context)
        thief.title = "Thief"
        let scratch = Movie(context: context)
        context.delete(scratch)  // inserted and deleted before anyone heard of it
        context.processPendingChanges()

        #expect(received.count == 1)
        let notification = try #require(received.first)
        #expect(notification.name == .objectsDidChange)
        #expect(notification.insertedObjects == [thief])
        #expect(notification.updatedObjects == [heat])
        #expect(notification.deletedObjects == [ronin])

        context.processPendingChanges()  // nothing new: no notification
        #expect(received.count == 1)
        thief.title = "Thief (1981)"  // observers heard of the insertion: a later edit is an update
        context.processPendingChanges()
        #expect(received.count == 2)
        #expect(received.last?.updatedObjects == [thief])
        #expect(received.last?.insertedObjects.isEmpty == true)
        observation.cancel()
    }

    @Test func aSavePostsChangeWillSaveAndDidSaveInOrder() throws {
        let context = container.newBackgroundContext()
        context.name = "editor"
        context.transactionAuthor = "tests"
        var log: [String] = []
        var didSave: ContextNotification?
        let observations = [
            context.addObserver(for: .objectsDidChange) { log.append("change \($0.insertedObjects.count)") },
            context.addObserver(for: .willSave) { notification in
                log.append("willSave \(notification.insertedObjects.count) \(notification.author ?? "-")")
                // A late edit made here is part of the save.
                for case let movie as Movie in notification.insertedObjects { movie.rating = 9 }
            },
            context.addObserver(for: .didSave) { notification in
                log.append("didSave \(notification.insertedObjects.count)")
                didSave = notification
            },
        ]
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()

        #expect(log == ["change 1", "willSave 1 tests", "didSave 1"])
        let saved = try #require(didSave)
        #expect(saved.contextName == "editor")
        #expect(saved.author == "tests")
        let id = try #require(saved.changes.insertedObjectIDs.first)
        #expect(!id.isTemporaryID)
        #expect(id == movie.objectID)
        let reloaded = try container.newBackgroundContext().existingObject(with: id) as? Movie
        #expect(reloaded?.rating == 9)

        // A save with nothing to save posts nothing.
        try context.save()
        #expect(log.count == 3)
        withExtendedLifetime(observations) {}
    }

    @Test func updatesAndDeletesReachDidSave() throws {
        let heatID = try savedMovie("Heat")
        let roninID = try savedMovie("Ronin")
        let context = container.newBackgroundContext()
        var changes: [ContextChanges] = []
        let observation = context.addObserver(for: .didSave) { changes.append($0.changes) }
        let heat = try #require(try context.existingObject(with: heatID) as? Movie)
        heat.rating = 7
        context.delete(try context.existingObject(with: roninID))
        try context.save()
        #expect(changes == [ContextChanges(name: .didSave, updatedObjectIDs: [heatID], deletedObjectIDs: [roninID])])
        observation.cancel()
    }

    @Test func cancelledOrReleasedObservationsAreRemoved() throws {
        let context = container.newBackgroundContext()
        var calls = 0
        let kept = context.addObserver(for: .didSave) { _ in calls += 1 }
        do {
            _ = context.addObserver(for: .didSave) { _ in calls += 100 }  // released at once
        }
        #expect(context.observerCount == 1)
        Movie(context: context).title = "Heat"
        try context.save()
        #expect(calls == 1)
        kept.cancel()
        kept.cancel()
        #expect(context.observerCount == 0)
        Movie(context: context).title = "Ronin"
        try context.save()
        #expect(calls == 1)
    }

    @Test func childSavesPostDidSaveToo() throws {
        let parent = container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        var names: [String] = []
        let observation = child.addObserver(for: .didSave) { notification in
            names += notification.insertedObjects.compactMap { ($0 as? Movie)?.title }
        }
        Movie(context: child).title = "Heat"
        try child.save()
        #expect(names == ["Heat"])
        #expect(parent.insertedObjects.count == 1)
        observation.cancel()
    }

    @Test func aContextsChangeStreamYieldsIDsAndUnregistersWhenCancelled() async throws {
        let context = container.newBackgroundContext()
        let stream = context.changes(for: [.didSave])
        #expect(context.observerCount == 1)
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.insertedObjectIDs == [movie.objectID])

        let sequence = context.changes(for: [.didSave])  // Sendable: IDs only
        let consumer = Task {
            for await _ in sequence {}
        }
        try await waitUntil { context.observerCount == 2 }
        consumer.cancel()
        await consumer.value
        try await waitUntil { context.observerCount == 1 }
    }

    @Test func theContainerStreamYieldsEveryContextsSaves() async throws {
        let saves = container.savedChanges()
        let background = container.newBackgroundContext()
        background.transactionAuthor = "import"
        let movie = Movie(context: background)
        movie.title = "Heat"
        try background.save()
        let other = container.newBackgroundContext()
        other.delete(try other.existingObject(with: movie.objectID))
        try other.save()

        var iterator = saves.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.author == "import")
        #expect(first?.insertedObjectIDs == [movie.objectID])
        let second = await iterator.next()
        #expect(second?.deletedObjectIDs == [movie.objectID])

        try container.close()
        #expect(await iterator.next() == nil)  // closing the container ends the stream
    }

    /// Saved changes come from the store's commit, one value for every listener: a change set
    /// saved straight to the store reaches the stream and merging contexts like a context's
    /// save, and the stream carries exactly what the store committed.
    @Test func savedChangesAreTheStoresCommits() async throws {
        let heatID = try savedMovie("Heat")
        let reader = container.newBackgroundContext()
        reader.automaticallyMergesChangesFromContainer = true
        let heat = try #require(try reader.existingObject(with: heatID) as? Movie)
        #expect(heat.title == "Heat")
        let saves = container.savedChanges()
        var commits: [StoreCommit] = []
        let log = CommitLog()
        let observation = container.addCommitObserver { log.append($0) }

        // A save without a context (as batch requests make), straight to the store.
        let store = try #require(container.stores.first)
        let entity = try #require(container.schema.entity(named: "Movie"))
        let titleNumber = try #require(entity.attributes.firstIndex { $0.name == "title" })
        var changes = StoreChangeSet()
        let row = try #require(
            try store.fetch(StoreFetchRequest(entityName: "Movie", primaryKeys: heatID.primaryKey.map { [$0] })).first)
        changes.updates = [
            StoreChangeSet.Update(
                objectID: heatID, expectedVersion: row.version, attributes: [titleNumber: "Heat (1995)"], toOne: [:])
        ]
        changes.author = "batch"
        _ = try store.save(changes)
        let laterID = try savedMovie("Ronin")  // a context's save after it

        var iterator = saves.makeAsyncIterator()
        let saved = try #require(await iterator.next())
        let later = try #require(await iterator.next())
        #expect(later.insertedObjectIDs == [laterID])
        commits = log.all
        #expect(commits.count == 2)
        #expect(saved == ContextChanges(try #require(commits.first)))
        // Not a copy: the store's commit itself, as every consumer receives it.
        #expect(saved.commit == commits.first && later.commit == commits.last)
        #expect(saved.author == "batch" && saved.updatedObjectIDs == [heatID])
        // The merging context refreshed the object before this read.
        _ = try reader.fetch(Movie.self)
        #expect(heat.title == "Heat (1995)")
        observation.cancel()
    }

    @Test func aSlowConsumerNeverBlocksSaves() async throws {
        let context = container.newBackgroundContext()
        let stream = context.changes(for: [.didSave])  // nobody reads it while saving
        for index in 0..<200 {
            Movie(context: context).title = "Movie \(index)"
            try context.save()
        }
        var count = 0
        for await _ in stream {
            count += 1
            if count == 200 { break }
        }
        #expect(count == 200)
    }

    /// Polls `condition` (registrations are removed when a stream's consumer stops, on another thread).
    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
