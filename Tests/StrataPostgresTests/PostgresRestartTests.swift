import Foundation
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// A server restart in the middle of a session, on a private server of the test's own (other
/// tests share the main one): the operation in flight gets a typed error, the next operation
/// reconnects, and listeners reconnect and announce that they may have missed commits.
@Suite(.serialized, .timeLimit(.minutes(10))) struct PostgresRestartTests {
    /// Runs `scripts/postgres.sh` with arguments and returns what it printed.
    @discardableResult
    static func script(_ arguments: [String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appendingPathComponent("scripts/postgres.sh")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StrataError(.storeError, "scripts/postgres.sh \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aRestartFailsTheOperationInFlightAndTheNextOneReconnects() async throws {
        try await offThePool {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-restart-\(UUID().uuidString)")
            var configuration = try PostgresConfiguration(url: try Self.script(["start", folder.path]))
            defer { _ = try? Self.script(["stop", folder.path]) }
            configuration.tlsMode = .disable
            configuration.schemaName = "restart"
            configuration.pool.connectTimeout = PostgresTestServer.connectTimeout
            let first = try PersistentContainer(name: "A", entities: [Note.self], storeDescriptions: [.postgres(configuration)])
            let second = try PersistentContainer(name: "B", entities: [Note.self], storeDescriptions: [.postgres(configuration)])
            defer {
                try? first.close()
                try? second.close()
            }
            let received = Received()
            let observation = second.addCommitObserver { commit in received.append(commit, at: Date()) }
            defer { observation.cancel() }
            let context = first.newBackgroundContext()
            Note(context: context).slug = "before"
            try context.save()
            #expect(Self.eventually { received.commits.count == 1 })

            // A statement in flight when the server goes down.
            let store = try #require(first.stores.first as? PostgresStore)
            let inFlight = InFlight()
            let thread = Thread {
                do {
                    try store.withSession { session in _ = try session.query("SELECT pg_sleep(10)") }
                    inFlight.finish(nil)
                } catch {
                    inFlight.finish(error)
                }
            }
            thread.start()
            Thread.sleep(forTimeInterval: 0.3)
            try Self.script(["restart", folder.path])
            #expect(Self.eventually { inFlight.isDone })
            let error = inFlight.error as? StrataError
            #expect(error?.code == .connectionLost, "\(String(describing: inFlight.error))")

            // The next operations reconnect.
            let fetched = try Self.retryingOnce { try first.newBackgroundContext().fetch(FetchRequest<Note>()).map(\.slug) }
            #expect(fetched == ["before"])
            // The other server's listener came back and said it may have missed commits…
            #expect(Self.eventually { received.commits.contains { $0.changedObjectsAreUnknown } })
            // …and hears new ones again.
            let again = first.newBackgroundContext()
            Note(context: again).slug = "after"
            try Self.retryingOnce { try again.save() }
            #expect(Self.eventually { received.commits.contains { $0.insertedObjectIDs.count == 1 && !$0.changedObjectsAreUnknown && $0 != received.commits.first } })
        }
    }

    /// Runs `body`, and once more if it lost its connection (a pooled connection the restart
    /// closed may be lent once before the pool notices).
    static func retryingOnce<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StrataError where error.code == .connectionLost {
            return try body()
        }
    }

    static func eventually(timeout: Duration = .seconds(300), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}

/// The outcome of an operation running on another thread: `nil` while it runs, then its error
/// or `.some(nil)`.
final class InFlight: Sendable {
    private let outcome = LockedBox<(any Error)??>(nil)

    func finish(_ error: (any Error)?) { outcome.withLock { $0 = .some(error) } }

    var isDone: Bool { outcome.withLock { $0 != nil } }

    var error: (any Error)? { outcome.withLock { $0 ?? nil } }
}
