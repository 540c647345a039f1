import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// Two processes on one PostgreSQL database, as two app servers: `strata save-loop` saves in
/// a child process, and this process's commit observers and live query hear every save, with
/// its objects, through `LISTEN`/`NOTIFY` alone.
@Suite(.timeLimit(.minutes(10))) struct PostgresTwoProcessTests {
    @Test func anotherProcesssSavesReachObserversAndLiveQueriesHere() async throws {
        let schema = "twoproc_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let url = try PostgresTestServer.url(schema: schema)
        let container = try SaveLoopCommand.makeContainer(store: SaveLoopCommand.storeDescription(for: url, history: false))
        defer { try? container.close() }
        let received = LockedBox<[(commit: StoreCommit, arrived: Date)]>([])
        let observation = container.addCommitObserver { commit in
            if commit.isRemote { received.withLock { $0.append((commit, Date())) } }
        }
        defer { observation.cancel() }
        var movies = container.observeCount(of: FetchRequest<Movie>()).makeAsyncIterator()
        #expect(try await movies.next() == 0)

        let batches = 5
        let child = try await offThePool {
            try runStrata(["save-loop", "--store", url, "--batches", "\(batches)"])
        }
        // Without the child's saves the live query below would wait for ever: stop here.
        try #require(child.status == 0, "strata save-loop failed (status \(child.status)): \(child.errorOutput)")

        // The live query follows the other process's saves to the end.
        var count = 0
        let deadline = ContinuousClock.now + .seconds(300)
        while count < batches * SaveLoopCommand.batchSize, ContinuousClock.now < deadline {
            count = try await movies.next() ?? count
        }
        #expect(count == batches * SaveLoopCommand.batchSize)

        // Every save arrived as its own commit, naming its ten movies and ten reviews.
        while received.withLock({ $0.count }) < batches, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let commits = received.withLock { $0 }
        #expect(commits.count == batches)
        #expect(commits.allSatisfy { $0.commit.insertedObjectIDs.count == 2 * SaveLoopCommand.batchSize })
        let movieIDs = commits.flatMap { $0.commit.insertedObjectIDs.filter { $0.entityName == "Movie" } }
        let context = container.newBackgroundContext()
        let titles = try movieIDs.map { try context.existingObject(with: $0).value(forKey: "title") as? String }
        #expect(Set(titles.compactMap { $0 }).count == batches * SaveLoopCommand.batchSize)
        // Across processes, within a human's patience (the benchmarks measure the speed).
        #expect(commits.allSatisfy { $0.arrived.timeIntervalSince($0.commit.timestamp) < 10 })
    }
}
