import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Two containers on one file stand for two processes (an app and its widget), each with its own
/// author and history tracker.
@Suite(.timeLimit(.minutes(10))) struct PersistentHistoryTrackerTests {
    let directory: TemporaryDirectory
    let url: URL

    init() throws {
        directory = try TemporaryDirectory()
        url = directory.url.appendingPathComponent("Tracked.sqlite")
    }

    func open() throws -> PersistentContainer {
        try PersistentContainer(
            name: "Tracked", entities: [Movie.self, Review.self, Person.self],
            storeDescriptions: [.sqlite(url, persistentHistoryTracking: true)])
    }

    /// Saves a movie with `title` from a background context of `author`.
    @discardableResult
    func saveMovie(_ title: String, in container: PersistentContainer, author: TransactionAuthor) async throws -> ObjectID {
        try await container.performBackgroundTask(author: author) { context in
            let movie = Movie(context: context)
            movie.title = title
            try context.save()
            return movie.objectID
        }
    }

    /// Waits for `condition`; the limit only catches a hang (no test depends on timing).
    func eventually(within limit: Duration = .seconds(300), _ condition: @MainActor () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await MainActor.run(body: condition) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await MainActor.run(body: condition)
    }

    @Test @MainActor func aSaveByOneContainerReachesTheOthersViewContextLiveQueriesAndControllers() async throws {
        let app = try open()
        let widget = try open()
        let heatID = try await saveMovie("Heat", in: app, author: "app")

        widget.viewContext.transactionAuthor = "widget"
        widget.viewContext.automaticallyMergesChangesFromContainer = false  // only the tracker merges
        let heat = try #require(try widget.viewContext.existingObject(with: heatID) as? Movie)
        #expect(heat.title == "Heat")
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: widget.viewContext)
        try controller.performFetch()
        let counts = LockedBox<[Int]>([])
        let countTask = Task {
            for try await count in widget.observeCount(of: FetchRequest<Movie>()) {
                counts.withLock { $0.append(count) }
            }
        }
        defer { countTask.cancel() }
        #expect(try await eventually { counts.withLock { $0 } == [1] })

        let appTracker = PersistentHistoryTracker(container: app, currentAuthor: "app")
        let widgetTracker = PersistentHistoryTracker(container: widget, currentAuthor: "widget")
        await appTracker.startMonitoring()
        await widgetTracker.startMonitoring()
        defer { Task { await appTracker.stopMonitoring(); await widgetTracker.stopMonitoring() } }

        try await app.performBackgroundTask(author: "app") { context in
            let movie = try #require(try context.existingObject(with: heatID) as? Movie)
            movie.title = "Heat (1995)"
            Movie(context: context).title = "Ronin"
            try context.save()
        }
        #expect(try await eventually { heat.title == "Heat (1995)" }, "the view context never heard of the update")
        #expect(try await eventually { controller.fetchedObjects.map(\.title) == ["Heat (1995)", "Ronin"] })
        #expect(try await eventually { counts.withLock { $0.last } == 2 })
        #expect(await widgetTracker.lastError == nil)
    }

    @Test func theTrackerNeverMergesItsOwnAuthorsTransactions() async throws {
        let container = try open()
        let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app", remoteChangePollingInterval: nil)
        try await saveMovie("Mine", in: container, author: "app")
        try await saveMovie("Theirs", in: container, author: "widget")
        try await saveMovie("Mine again", in: container, author: "app")
        let merged = try await tracker.processNewTransactions()
        #expect(merged.map(\.author) == ["widget"])
        #expect(try await tracker.processNewTransactions().isEmpty)
        // Its position is past its own transactions too, and recorded in the store.
        let recorded = try container.stores[0].lastMergedHistoryTokens()["app"]
        #expect(recorded == (try container.currentHistoryToken()))
    }

    @Test func pruningNeverDeletesWhatALaggingAuthorHasNotRead() async throws {
        let app = try open()
        let widget = try open()
        let appTracker = PersistentHistoryTracker(
            container: app, currentAuthor: "app", maxTransactionAge: 0, remoteChangePollingInterval: nil)
        let widgetTracker = PersistentHistoryTracker(
            container: widget, currentAuthor: "widget", maxTransactionAge: 0, remoteChangePollingInterval: nil)
        // Both authors are known once each has run.
        try await appTracker.processNewTransactions()
        try await widgetTracker.processNewTransactions()
        try await saveMovie("One", in: widget, author: "widget")
        try await saveMovie("Two", in: app, author: "app")
        try await saveMovie("Three", in: widget, author: "widget")

        // The app has read everything; the widget nothing since it started.
        try await appTracker.processNewTransactions()
        #expect(try await appTracker.pruneHistory() == 0)
        #expect(try app.fetchHistory().count == 3)

        // The widget catches up (it reads the app's one transaction): everything is read.
        #expect(try await widgetTracker.processNewTransactions().map(\.author) == ["app"])
        // Each has read the other's transactions and passed its own: everything is read.
        #expect(try await appTracker.pruneHistory() == 3)
        #expect(try app.fetchHistory().isEmpty)

        // An author who stops reading can be forgotten; until then it holds pruning back.
        try await saveMovie("Four", in: app, author: "app")
        try await appTracker.processNewTransactions()
        #expect(try await appTracker.pruneHistory() == 0)
        #expect(try app.fetchHistory().map(\.author) == ["app"])
        try await appTracker.forgetAuthor("widget")
        #expect(try await appTracker.pruneHistory() == 1)
        #expect(try app.fetchHistory().isEmpty)
        #expect(try app.stores[0].lastMergedHistoryTokens().keys.sorted() == ["app"])
    }

    @Test func aSingleWritersHistoryIsPrunedToo() async throws {
        let container = try open()
        let tracker = PersistentHistoryTracker(
            container: container, currentAuthor: "app", maxTransactionAge: 0, remoteChangePollingInterval: nil)
        for title in ["One", "Two", "Three"] { try await saveMovie(title, in: container, author: "app") }
        // Nothing of another author to merge, but the position passes the tracker's own work.
        // (Its first pass prunes too.)
        #expect(try await tracker.processNewTransactions().isEmpty)
        #expect(try container.fetchHistory().isEmpty)
        try await saveMovie("Four", in: container, author: "app")
        try await tracker.processNewTransactions()
        #expect(try await tracker.pruneHistory() == 1)
    }

    @Test func concurrentPassesNeverMoveThePositionBack() async throws {
        let container = try open()
        let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app", remoteChangePollingInterval: nil)
        for index in 0..<20 { try await saveMovie("Movie \(index)", in: container, author: "widget") }
        async let first = tracker.processNewTransactions()
        async let second = tracker.processNewTransactions()
        let (a, b) = try await (first, second)
        // The passes run one after the other: every transaction is merged once.
        #expect(a.count + b.count == 20)
        let head = try container.currentHistoryToken()
        #expect(try container.stores[0].lastMergedHistoryTokens()["app"] == head)
    }

    @Test func aMaximumAgeKeepsRecentHistory() async throws {
        let container = try open()
        let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app", remoteChangePollingInterval: nil)
        try await saveMovie("Theirs", in: container, author: "widget")
        try await tracker.processNewTransactions()
        // Read by the only known author, but younger than a week.
        #expect(try await tracker.pruneHistory() == 0)
        #expect(try container.fetchHistory().count == 1)
    }

    @Test func aRestartedTrackerResumesFromItsRecordedPosition() async throws {
        do {
            let container = try open()
            try await saveMovie("Before", in: container, author: "widget")
            let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app", remoteChangePollingInterval: nil)
            #expect(try await tracker.processNewTransactions().count == 1)
            try container.close()
        }
        let container = try open()
        try await saveMovie("While away", in: container, author: "widget")
        let tracker = PersistentHistoryTracker(container: container, currentAuthor: "app", remoteChangePollingInterval: nil)
        let merged = try await tracker.processNewTransactions()
        #expect(merged.count == 1)
        #expect(merged.first?.changes?.count == 1)
        let title = try await container.performBackgroundTask { context in
            try (context.existingObject(with: #require(merged.first?.changes?.first?.changedObjectID)) as? Movie)?.title
        }
        #expect(title == "While away")
    }

    @Test func registeredMergeTargetsReceiveOtherAuthorsChanges() async throws {
        let container = try open()
        let tracker = PersistentHistoryTracker(
            container: container, currentAuthor: "app", remoteChangePollingInterval: nil, mergesIntoViewContext: false)
        let received = LockedBox<[ContextChanges]>([])
        let registration = await tracker.addMergeTarget { changes in received.withLock { $0.append(changes) } }
        let id = try await saveMovie("Theirs", in: container, author: "widget")
        try await tracker.processNewTransactions()
        #expect(received.withLock { $0.map(\.insertedObjectIDs) } == [[id]])
        await tracker.removeMergeTarget(registration)
        try await saveMovie("Theirs again", in: container, author: "widget")
        try await tracker.processNewTransactions()
        #expect(received.withLock { $0.count } == 1)
    }
}
