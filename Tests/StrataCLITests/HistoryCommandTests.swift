import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCLI

/// `strata history` and persistent history across processes: this process and a `strata
/// save-loop` child share one store, each with its own author, and each reads the other's
/// transactions.
@Suite(.timeLimit(.minutes(10))) struct HistoryCommandTests {
    struct ListedTransaction: Decodable {
        var transactionNumber: Int64
        var author: String?
        var contextName: String?
        var inserted: Int
        var updated: Int
        var deleted: Int
    }

    @Test func twoProcessesEachReadTheOthersTransactions() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Shared.sqlite")
        let container = try PersistentContainer(
            name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self],
            storeDescriptions: [.sqlite(store, persistentHistoryTracking: true)])
        defer { try? container.close() }
        let remote = LockedBox<[StoreCommit]>([])
        let observation = container.addCommitObserver { commit in
            if commit.isRemote { remote.withLock { $0.append(commit) } }
        }
        defer { observation.cancel() }
        let tracker = PersistentHistoryTracker(
            container: container, currentAuthor: "app", remoteChangePollingInterval: .milliseconds(20),
            mergesIntoViewContext: false)
        let merged = LockedBox<[ContextChanges]>([])
        await tracker.addMergeTarget { changes in merged.withLock { $0.append(changes) } }
        await tracker.startMonitoring()
        defer { Task { await tracker.stopMonitoring() } }

        try await container.performBackgroundTask(author: "app") { context in
            let director = Director(context: context)
            director.name = "Michael Mann"
            try context.save()
        }
        // The child runs on a thread that may block: this test's polling and tracker tasks
        // need the cooperative pool meanwhile.
        let child = try await offThePool {
            try runStrata(["save-loop", "--store", store.path, "--batches", "2", "--author", "loop", "--history"])
        }
        // Nothing this test waits for below comes without the child's saves: stop here.
        try #require(child.status == 0, "strata save-loop failed (status \(child.status)): \(child.errorOutput)")

        // This process reads the child's transactions: in its history, in the commits its
        // polling announces (naming the objects), and through its tracker.
        let history = try container.fetchHistory()
        #expect(history.map(\.author) == ["app", "loop", "loop"])
        // Patience, not a timing check: a loaded machine may take a while to poll.
        let deadline = ContinuousClock.now + .seconds(300)
        while merged.withLock({ $0.count }) < 2 || remote.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(remote.withLock { $0.map(\.author) } == ["loop", "loop"])
        #expect(remote.withLock { $0.map(\.insertedObjectIDs.count) } == [20, 20])
        #expect(merged.withLock { $0.map(\.author) } == ["loop", "loop"])
        #expect(await tracker.lastMergedTokens.values.first == history.last?.token)

        // The child reads this process's transaction.
        let listing = try await offThePool { try runStrata(["history", store.path, "--json"]) }
        try #require(listing.status == 0, "\(listing.errorOutput)")
        let listed = try JSONDecoder().decode([ListedTransaction].self, from: Data(listing.output.utf8))
        #expect(listed.map(\.author) == ["app", "loop", "loop"])
        #expect(listed.map(\.inserted) == [1, 20, 20])
        // …and the position this process's tracker recorded.
        let positions = try container.stores[0].lastMergedHistoryTokens()
        #expect(positions["app"]?.transactionNumber == listed.last?.transactionNumber)
    }

    @Test func listsFiltersAndPrunes() throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Listed.sqlite")
        do {
            let container = try PersistentContainer(
                name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self],
                storeDescriptions: [.sqlite(store, persistentHistoryTracking: true)])
            for (author, title) in [("importer", "Heat"), ("editor", "Ronin"), ("importer", "Thief")] {
                let context = container.newBackgroundContext()
                context.transactionAuthor = TransactionAuthor(author)
                context.name = "\(author) context"
                Movie(context: context).title = title
                try context.save()
            }
            let context = container.newBackgroundContext()
            context.transactionAuthor = "editor"
            for movie in try context.fetch(Movie.self, where: \.title == "Heat") { context.delete(movie) }
            try context.save()
            try container.close()
        }
        var table = ""
        try HistoryListCommand.run(
            location: store.path, authors: [], since: nil, after: nil, limit: nil, changes: true, json: false, into: &table)
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("#") == true)
        #expect(lines.filter { !$0.hasPrefix(" ") }.count == 5)  // header and four transactions
        #expect(lines.contains { $0.contains("importer context") && $0.hasPrefix("1 ") })
        #expect(lines.contains { $0.contains("insert Movie") })
        #expect(lines.contains { $0.contains("delete Movie") })

        var filtered = ""
        try HistoryListCommand.run(
            location: store.path, authors: ["editor"], since: nil, after: 2, limit: nil, changes: false, json: true,
            into: &filtered)
        let decoded = try JSONDecoder().decode([ListedTransaction].self, from: Data(filtered.utf8))
        #expect(decoded.map(\.transactionNumber) == [4])
        #expect(decoded.map(\.deleted) == [1])

        var pruned = ""
        try HistoryPruneCommand.run(location: store.path, before: nil, beforeTransaction: 3, into: &pruned)
        #expect(pruned == "Deleted 2 transactions.\n")
        var rest = ""
        try HistoryListCommand.run(
            location: store.path, authors: [], since: nil, after: nil, limit: nil, changes: false, json: true, into: &rest)
        #expect(try JSONDecoder().decode([ListedTransaction].self, from: Data(rest.utf8)).map(\.transactionNumber) == [3, 4])
    }

    @Test func aStoreWithoutHistoryAndBadDatesAreErrors() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Plain.sqlite")
        try PersistentContainer(
            name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(store)]
        ).close()
        let plain = try await runStrata(["history", store.path])
        #expect(plain.status == 1)
        #expect(plain.errorOutput.contains("does not record persistent history"), "\(plain.errorOutput)")
        let badDate = try await runStrata(["history", store.path, "--since", "yesterday"])
        #expect(badDate.status == 1)
        #expect(badDate.errorOutput.contains("'yesterday' is not a date"), "\(badDate.errorOutput)")
        let missing = try await runStrata(["history", "prune", store.path])
        #expect(missing.status != 0)
        #expect(missing.errorOutput.contains("--before DATE or --before-transaction NUMBER"), "\(missing.errorOutput)")
        let notAStore = try await runStrata(["history", directory.file("nothing.sqlite").path])
        #expect(notAStore.status == 1)
    }
}
