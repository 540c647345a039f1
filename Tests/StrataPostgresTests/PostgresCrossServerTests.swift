import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

@Entity final class Note: ManagedObject {
    @Attribute(.unique) var slug: String = ""
    var body: String = ""
    var count: Int64 = 0
}

/// Two containers on one database behave as two app servers: each hears the other's commits
/// and conflicts are found across them exactly as within one process.
@Suite struct PostgresCrossServerTests {
    /// Waits up to `timeout` for `condition`, on this thread.
    private func eventually(timeout: Duration = .seconds(300), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return condition()
    }

    @Test func aSaveOnOneServerReachesTheOtherWithItsObjects() async throws {
        try await offThePool {
            let servers = try TwoServers()
            let (first, second) = (servers.first, servers.second)
            let received = Received()
            let observation = second.addCommitObserver { commit in received.append(commit, at: Date()) }
            defer { observation.cancel() }
            let context = first.newBackgroundContext()
            let note = Note(context: context)
            note.slug = "hello"
            try context.save()
            #expect(eventually { !received.commits.isEmpty })
            let commit = try #require(received.commits.first)
            #expect(commit.isRemote)
            #expect(commit.insertedObjectIDs == [note.objectID])
            // From the transaction's notice to the other server's observer. Its speed is
            // measured by the benchmarks (a loaded test machine says little); here it must
            // simply arrive, well within a human's patience.
            let latency = try #require(received.latencies.first)
            #expect(latency < 5, "notice took \(latency) s")
            // The other server's context sees the object.
            let other = second.newBackgroundContext()
            #expect(try other.fetch(Note.self).map(\.slug) == ["hello"])
        }
    }

    @Test func mergingContextsOnTheOtherServerRefreshTheirObjects() async throws {
        try await offThePool {
            let servers = try TwoServers()
            let (first, second) = (servers.first, servers.second)
            let writer = first.newBackgroundContext()
            let note = Note(context: writer)
            note.slug = "n"
            note.body = "before"
            try writer.save()
            let reader = second.newBackgroundContext()
            reader.automaticallyMergesChangesFromContainer = true
            let seen = try #require(try reader.fetch(Note.self).first)
            #expect(seen.body == "before")
            note.body = "after"
            try writer.save()
            #expect(eventually {
                reader.processPendingChanges()
                return seen.body == "after"
            })
        }
    }

    @Test func aStaleSaveOnTheOtherServerIsAConflict() async throws {
        try await offThePool {
            let servers = try TwoServers()
            let (first, second) = (servers.first, servers.second)
            let a = first.newBackgroundContext()
            let note = Note(context: a)
            note.slug = "shared"
            try a.save()
            let b = second.newBackgroundContext()
            let twin = try #require(try b.fetch(Note.self).first)
            note.count = 1
            try a.save()
            twin.count = 2
            #expect {
                try b.save()
            } throws: { ($0 as? StrataError)?.code == .optimisticLockingFailure }
            // A duplicate unique value from the other server is a typed conflict too.
            let clash = Note(context: b)
            clash.slug = "shared"
            b.delete(twin)
            b.rollback()
            let again = Note(context: b)
            again.slug = "shared"
            #expect {
                try b.save()
            } throws: { ($0 as? StrataError)?.code == .constraintConflict }
            _ = clash
        }
    }
}

/// Two containers on one new schema, as two app servers; closed when released.
final class TwoServers {
    let database: PostgresTestDatabase
    let first: PersistentContainer
    let second: PersistentContainer

    init() throws {
        database = try PostgresTestDatabase()
        first = try PersistentContainer(name: "A", entities: [Note.self], storeDescriptions: [database.description()])
        second = try PersistentContainer(name: "B", entities: [Note.self], storeDescriptions: [database.description()])
    }

    deinit {
        try? first.close()
        try? second.close()
    }
}

/// Commits another container heard, with the seconds from each one's notice to its arrival.
final class Received: Sendable {
    private let stored = LockedBox<[(commit: StoreCommit, latency: TimeInterval)]>([])

    func append(_ commit: StoreCommit, at date: Date) {
        stored.withLock { $0.append((commit, date.timeIntervalSince(commit.timestamp))) }
    }

    var commits: [StoreCommit] { stored.withLock { $0.map(\.commit) } }

    var latencies: [TimeInterval] { stored.withLock { $0.map(\.latency) } }
}
