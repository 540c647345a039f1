import Foundation
import Logging
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// Many concurrent requests from async code — a server's request handlers — share a small pool
/// without deadlock or starvation: their store work runs on threads that may block, and the
/// pool lends its connections in turn.
@Suite(.timeLimit(.minutes(10))) struct PostgresConcurrencyTests {
    @Test func sixtyFourConcurrentBackgroundTasksAllComplete() async throws {
        let database = try PostgresTestDatabase()
        var configuration = database.configuration
        configuration.pool.maximumConnections = 4
        // The 64 saves queue for the schema's write lock one by one; on a machine busy with
        // other suites the last may wait longer than the default 30 s for a connection. A
        // deadlock would still run into the suite's time limit.
        configuration.pool.acquireTimeout = .seconds(300)
        let container = try await offThePool {
            try PersistentContainer(name: "Load", entities: [Note.self], storeDescriptions: [.postgres(configuration)])
        }
        defer { try? container.close() }
        // A live query follows the whole time, as a server's live endpoint would.
        var updates = container.observe(FetchRequest<Note>()).makeAsyncIterator()
        #expect(try await updates.next()?.count == 0)
        let written = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    try await container.performBackgroundTask(author: "request-\(index)") { context in
                        let note = Note(context: context)
                        note.slug = "note-\(index)"
                        note.count = Int64(index)
                        try context.save()
                        return try context.count(for: Note.self)
                    }
                }
            }
            var counts: [Int] = []
            for try await count in group { counts.append(count) }
            return counts
        }
        #expect(written.count == 64)
        #expect(written.allSatisfy { (1...64).contains($0) })
        let total = try await container.performBackgroundTask { context in try context.count(for: Note.self) }
        #expect(total == 64)
        // The live query catches up with the last commit.
        var last = 0
        while last < 64, let next = try await updates.next() { last = next.count }
        #expect(last == 64)
    }

    @Test func tasksBlockedInTheStoreDoNotStarveOtherTasks() async throws {
        let database = try PostgresTestDatabase()
        var configuration = database.configuration
        // Once the lock is let go, the 64 saves take the pool's 8 connections in turn; on a
        // busy machine the last waits longer than the default 30 s (a hang detector here).
        configuration.pool.acquireTimeout = .seconds(300)
        let container = try await offThePool {
            try PersistentContainer(name: "Load", entities: [Note.self], storeDescriptions: [.postgres(configuration)])
        }
        defer { try? container.close() }
        // Another server holds the write lock: every save waits for it.
        let holder = LockHolder(configuration: database.configuration)
        try holder.take()
        let saves = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        try await container.performBackgroundTask { context in
                            Note(context: context).slug = "blocked-\(index)"
                            try context.save()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // With 64 saves blocked, other tasks still run: a few short sleeps finish while the
        // lock is held.
        try await Task.sleep(for: .milliseconds(200))
        for _ in 0..<5 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(holder.isHeld)
        holder.release()
        try await saves.value
        let total = try await container.performBackgroundTask { context in try context.count(for: Note.self) }
        #expect(total == 64)
    }
}

/// Holds a store's write lock from a connection of its own, as another server's long save would.
///
/// `@unchecked Sendable`: `held` is read and written only under `condition`'s lock.
final class LockHolder: @unchecked Sendable {
    private let configuration: PostgresConfiguration
    private let condition = NSCondition()
    private var held = false
    private var releasing = false

    init(configuration: PostgresConfiguration) { self.configuration = configuration }

    var isHeld: Bool {
        condition.lock()
        defer { condition.unlock() }
        return held
    }

    /// Takes the lock on a thread of its own and returns once it is held.
    func take() throws {
        let configuration = configuration
        let thread = Thread { [self] in
            let pool = try? PostgresConnectionPool(
                configuration: configuration, instrumentation: .silent(kind: "postgres", name: "test"),
                sessionSetup: [])
            try? pool?.withConnection { session in
                var key = PostgresBindings()
                key.append(integer: PostgresStore.lockKey(forSchemaNamed: configuration.schemaName))
                try session.query("BEGIN")
                try session.query("SELECT pg_advisory_xact_lock($1)", key)
                condition.lock()
                held = true
                condition.broadcast()
                // Let go after five minutes whatever happens, so that a failing test cannot
                // hang the run (a busy machine may take many seconds to run the test's sleeps).
                let deadline = Date().addingTimeInterval(300)
                while !releasing, condition.wait(until: deadline) {}
                held = false
                condition.unlock()
                try session.query("COMMIT")
            }
            pool?.close()
        }
        thread.start()
        condition.lock()
        while !held { condition.wait() }
        condition.unlock()
    }

    func release() {
        condition.lock()
        releasing = true
        condition.broadcast()
        condition.unlock()
    }
}
