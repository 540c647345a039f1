import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Persistent history in an SQLite file shared by two containers, each with its own author: what
/// one writes, the other reads — in its history, and in the commits its polling announces.
@Suite(.timeLimit(.minutes(10))) struct SQLiteHistoryTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.url.appendingPathComponent("Shared.sqlite")
    }

    func open(polling: Duration? = nil, history: Bool = true, readOnly: Bool = false) throws -> PersistentContainer {
        try PersistentContainer(
            name: "Shared", entities: [Movie.self, Review.self, Person.self],
            storeDescriptions: [
                .sqlite(url, remoteChangePollingInterval: polling, isReadOnly: readOnly, persistentHistoryTracking: history)
            ])
    }

    func tables(_ container: PersistentContainer) throws -> [String] {
        let store = try #require(container.stores.first as? SQLiteStore)
        return try store.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '_strata_history%' ORDER BY name")
        }
    }

    @Test func twoContainersOnOneFileReadEachOthersTransactions() throws {
        let app = try open()
        let widget = try open()
        let appContext = app.newBackgroundContext()
        appContext.transactionAuthor = "app"
        let movie = Movie(context: appContext)
        movie.title = "Heat"
        try appContext.save()

        let widgetContext = widget.newBackgroundContext()
        widgetContext.transactionAuthor = "widget"
        let seen = try widget.fetchHistory()
        #expect(seen.map(\.author) == ["app"])
        #expect(seen.first?.changes?.map(\.changedObjectID) == [movie.objectID])
        let loaded = try #require(try widgetContext.existingObject(with: movie.objectID) as? Movie)
        loaded.rating = 4
        try widgetContext.save()

        let both = try app.fetchHistory()
        #expect(both.map(\.author) == ["app", "widget"])
        #expect(both.last?.changes?.first?.updatedProperties == ["rating"])
        #expect(try app.fetchHistory(HistoryFetchRequest(excludedAuthors: ["app"])).map(\.author) == ["widget"])
        // Both read the same token for the same transaction.
        #expect(try app.currentHistoryToken() == widget.currentHistoryToken())
    }

    @Test func pollingAnnouncesOtherConnectionsTransactionsWithTheirObjects() async throws {
        let watcher = try open(polling: .milliseconds(10))
        let writer = try open()
        let commits = LockedBox<[StoreCommit]>([])
        let observation = watcher.addCommitObserver { commit in commits.withLock { $0.append(commit) } }
        defer { observation.cancel() }

        // The watcher's own save is announced once, locally.
        let own = watcher.newBackgroundContext()
        own.transactionAuthor = "watcher"
        Person(context: own).name = "Ann"
        try own.save()

        let context = writer.newBackgroundContext()
        context.transactionAuthor = "writer"
        context.name = "editing"
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        let movieID = movie.objectID
        context.delete(movie)
        try context.save()

        // Patience, not a timing check: a loaded test machine can hold a polling task back.
        let deadline = ContinuousClock.now + .seconds(300)
        while commits.withLock({ $0.filter(\.isRemote).count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let all = commits.withLock { $0 }
        #expect(all.filter { !$0.isRemote }.map(\.author) == ["watcher"])
        let remote = all.filter(\.isRemote)
        try #require(remote.count == 2)
        #expect(remote.map(\.author) == ["writer", "writer"])
        #expect(remote.map(\.contextName) == ["editing", "editing"])
        #expect(remote[0].insertedObjectIDs == [movieID])
        #expect(remote[1].deletedObjectIDs == [movieID])
        #expect(remote.allSatisfy { !$0.changedObjectsAreUnknown && $0.historyToken != nil })
        #expect(remote.map(\.historyToken) == (try writer.fetchHistory(HistoryFetchRequest(authors: ["writer"])).map(\.token)))
    }

    @Test func aRemoteChangeWithHistoryMergesOnlyTheNamedObjects() async throws {
        let watcher = try open(polling: .milliseconds(10))
        let writer = try open()
        let setup = watcher.newBackgroundContext()
        for title in ["Heat", "Ronin"] { Movie(context: setup).title = title }
        try setup.save()

        let context = watcher.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let movies = try context.fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)])
        let notifications = LockedBox<[ContextChanges]>([])
        let observation = context.addObserver(for: .objectsDidChange) { notification in
            notifications.withLock { $0.append(notification.changes) }
        }
        defer { observation.cancel() }

        let other = writer.newBackgroundContext()
        try #require(try other.fetch(Movie.self, where: \.title == "Heat").first).rating = 5
        try other.save()
        // Patience, not a timing check: a loaded test machine can hold a polling task back.
        let deadline = ContinuousClock.now + .seconds(300)
        while movies[0].rating != 5, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            _ = try context.count(for: Movie.self)  // a fetch merges what arrived
        }
        #expect(movies[0].rating == 5)
        let merged = notifications.withLock { $0 }
        #expect(merged.allSatisfy { !$0.isRemoteChange })
        #expect(merged.contains { $0.updatedObjectIDs == [movies[0].objectID] })
    }

    @Test func historyPrunedBeforeItWasReadIsAnnouncedAsUnknownChanges() async throws {
        let watcher = try open(polling: .milliseconds(300))
        let writer = try open()
        let commits = LockedBox<[StoreCommit]>([])
        let observation = watcher.addCommitObserver { commit in commits.withLock { $0.append(commit) } }
        defer { observation.cancel() }
        // Between two looks of the watcher: two saves, and the first one's history deleted.
        let context = writer.newBackgroundContext()
        context.transactionAuthor = "writer"
        Movie(context: context).title = "Heat"
        try context.save()
        Movie(context: context).title = "Ronin"
        try context.save()
        let last = try #require(try writer.currentHistoryToken())
        try writer.deleteHistory(before: last)
        // Patience, not a timing check: a loaded test machine can hold a polling task back.
        let deadline = ContinuousClock.now + .seconds(300)
        while commits.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let seen = commits.withLock { $0 }
        try #require(seen.count == 2, "\(seen)")
        // What the pruned transaction held is unknown; the one left names its object.
        #expect(seen[0].changedObjectsAreUnknown)
        #expect(seen[1].historyToken == last && seen[1].insertedObjectCount == 1)
    }

    @Test func historyStaysOnForAFileThatRecordedIt() throws {
        let early = try open(history: false)
        #expect(try tables(early).isEmpty)
        #expect(early.historyTrackingStores.isEmpty)
        do {
            let tracked = try open(history: true)
            #expect(
                try tables(tracked) == [
                    "_strata_history_change", "_strata_history_reader", "_strata_history_tombstone",
                    "_strata_history_transaction",
                ])
            let context = tracked.newBackgroundContext()
            Person(context: context).name = "Ann"
            try context.save()
            // A container that opened the file before history was turned on records from its
            // next save on.
            let earlyContext = early.newBackgroundContext()
            Person(context: earlyContext).name = "Early"
            try earlyContext.save()
            #expect(early.historyTrackingStores.count == 1)
            #expect(try tracked.fetchHistory().count == 2)
            try tracked.close()
            try early.close()
        }
        let reopened = try open(history: false)
        #expect(reopened.historyTrackingStores.count == 1)
        let context = reopened.newBackgroundContext()
        Person(context: context).name = "Bob"
        try context.save()
        #expect(try reopened.fetchHistory().count == 3)
        try reopened.close()

        let readOnly = try open(history: false, readOnly: true)
        #expect(try readOnly.fetchHistory().count == 3)
        #expect(throws: StrataError.self) { try readOnly.deleteHistory(before: Date()) }
    }

    @Test func aReadOnlyStoreWithoutHistoryHasNone() throws {
        try open(history: false).close()
        let readOnly = try open(history: true, readOnly: true)
        #expect(readOnly.historyTrackingStores.isEmpty)
        let error = #expect(throws: StrataError.self) { try readOnly.fetchHistory() }
        #expect(error?.code == .persistentHistoryUnavailable)
    }

    @Test func readersPositionsAreKeptInTheStore() throws {
        let container = try open()
        let store = try #require(container.stores.first)
        let context = container.newBackgroundContext()
        Person(context: context).name = "Ann"
        try context.save()
        let token = try #require(try container.currentHistoryToken())
        try store.setLastMergedHistoryToken(token, forAuthor: "app")
        try store.setLastMergedHistoryToken(token, forAuthor: "widget")
        try store.setLastMergedHistoryToken(nil, forAuthor: "widget")
        try container.close()
        let reopened = try open()
        #expect(try reopened.stores[0].lastMergedHistoryTokens() == ["app": token])
    }
}
