import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCLI

/// Another process (`strata save-loop`) saves to the store this process has open; the store's
/// polling notices, and live queries, merging contexts and their controllers follow.
@Suite(.timeLimit(.minutes(10))) struct RemoteChangeTests {
    /// Collects the values of a live query in a task of its own, until `stop` says it has what
    /// it waits for or `timeout` passes (the task is then cancelled, which ends the query).
    final class Collector<Value: Sendable & Equatable>: Sendable {
        let received = LockedBox<[Value]>([])
        let task: Task<Void, any Error>

        init(_ query: LiveQuery<Value>, until stop: @escaping @Sendable (Value) -> Bool, timeout: Duration = .seconds(300)) {
            let received = received
            task = Task {
                for try await value in query {
                    received.withLock { $0.append(value) }
                    if stop(value) { break }
                }
            }
            let task = task
            Task {
                try? await Task.sleep(for: timeout)
                task.cancel()
            }
        }

        /// Waits until the first value is in.
        func waitForFirstValue() async {
            while received.withLock({ $0.isEmpty }) { try? await Task.sleep(for: .milliseconds(5)) }
        }

        /// Every value, once the collection ended.
        func values() async throws -> [Value] {
            try await task.value
            return received.withLock { $0 }
        }
    }

    /// Runs `strata save-loop` for `batches` batches and waits for it to end; throws (ending
    /// the test at once, with the child's standard error) when it fails, as nothing the test
    /// waits for afterwards would come.
    func runSaveLoop(store: URL, batches: Int) async throws {
        let result = try await offThePool {
            try runStrata(["save-loop", "--store", store.path, "--batches", "\(batches)"])
        }
        try #require(result.status == 0, "strata save-loop failed (status \(result.status)): \(result.errorOutput)")
    }

    @Test func anotherProcessesSavesReachLiveQueriesContextsAndControllers() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("SaveLoop.sqlite")
        let container = try PersistentContainer(
            name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self],
            storeDescriptions: [.sqlite(store, remoteChangePollingInterval: .milliseconds(20))])
        defer { try? container.close() }
        let remoteCommits = LockedBox(0)
        let observation = container.addCommitObserver { commit in
            if commit.isRemote { remoteCommits.withLock { $0 += 1 } }
        }
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        let controller = FetchedResultsController(
            FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]), context: context)
        try controller.performFetch()
        #expect(controller.fetchedObjects.isEmpty)

        // The live query has its first value (no movies) before the other process saves.
        let counts = Collector(container.observeCount(of: FetchRequest<Movie>())) { $0 == 10 }
        await counts.waitForFirstValue()
        try await runSaveLoop(store: store, batches: 1)
        try #require(try await counts.values() == [0, 10], "the live query never heard of the other process's save")
        #expect(remoteCommits.withLock { $0 } >= 1)

        // The context merged a change of unknown objects: its controller fetched again.
        var changes = controller.changes.makeAsyncIterator()
        context.processPendingChanges()
        try #require(controller.fetchedObjects.count == 10)
        #expect(await changes.next()?.insertedIndexPaths.count == 10)

        // Again: the objects the context holds were refreshed and read their stored values.
        let first = try #require(controller.fetchedObjects.first)
        let title = first.title
        let more = Collector(container.observeCount(of: FetchRequest<Movie>())) { $0 == 20 }
        await more.waitForFirstValue()
        try await runSaveLoop(store: store, batches: 1)
        try #require(try await more.values() == [10, 20])
        context.processPendingChanges()
        try #require(controller.fetchedObjects.count == 20)
        #expect(first.title == title)
        #expect(await changes.next()?.insertedIndexPaths.count == 10)
        observation.cancel()
    }

    @Test func withoutPollingNothingIsNoticed() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("SaveLoop.sqlite")
        let container = try PersistentContainer(
            name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(store)])
        defer { try? container.close() }
        let remoteCommits = LockedBox(0)
        let observation = container.addCommitObserver { commit in
            if commit.isRemote { remoteCommits.withLock { $0 += 1 } }
        }
        try await runSaveLoop(store: store, batches: 1)
        try await Task.sleep(for: .milliseconds(200))
        #expect(remoteCommits.withLock { $0 } == 0)
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 10)  // the data is there all the same
        observation.cancel()
    }
}
