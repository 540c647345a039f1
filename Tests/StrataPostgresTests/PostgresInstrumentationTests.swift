import Foundation
import Logging
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// What a PostgreSQL store logs and counts: the same events under the same names as SQLite,
/// plus connection events and pool waits; never a password or a bound value, even at `trace`.
@Suite struct PostgresInstrumentationTests {
    init() { _ = MetricsCapture.shared }  // before any store makes its metrics

    func container(_ database: PostgresTestDatabase, _ configure: (inout StoreDescription) -> Void) throws -> PersistentContainer {
        var description = database.description()
        configure(&description)
        return try PersistentContainer(name: "Notes", entities: [Note.self], storeDescriptions: [description])
    }

    @Test func theTraceLogsStatementsButNeverValuesOrThePassword() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            let logs = LogCapture()
            let container = try container(database) {
                $0.logger = logs.logger()
                $0.tracesStatements = true
                // Every statement at `trace`: a statement slower than the threshold (a loaded
                // machine) would be logged as slow instead.
                $0.slowStatementThreshold = nil
            }
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let note = Note(context: context)
            note.slug = "secret-slug-7731"
            note.body = "secret-body-7731"
            try context.save()
            let found = try context.fetch(Note.self, where: \.slug == "secret-slug-7731")
            #expect(found.count == 1)

            let statements = logs.messages.filter { $0.message == "Statement" }
            #expect(statements.contains { ($0.metadata["strata.sql"] ?? "").contains("INSERT INTO") })
            #expect(statements.contains { ($0.metadata["strata.sql"] ?? "").contains("$1") })
            #expect(statements.allSatisfy { $0.metadata["strata.store"] == "postgres:\(database.schemaName)" })
            #expect(logs.messages.contains { $0.message == "Opened PostgreSQL store" })
            #expect(logs.messages.contains { $0.message == "Connected to PostgreSQL" })
            let text = logs.text
            #expect(!text.contains("secret-slug-7731"))
            #expect(!text.contains("secret-body-7731"))
            let password = try #require(database.configuration.password)
            #expect(!text.contains(password))
        }
    }

    @Test func slowStatementsAreLoggedAtWarning() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            let logs = LogCapture()
            let container = try container(database) {
                $0.logger = logs.logger(level: .info)
                $0.slowStatementThreshold = .seconds(1)
            }
            defer { try? container.close() }
            logs.removeAll()
            // A statement that takes just over a second, through the store's own query path; the
            // threshold is far above what a quick statement takes even on a loaded machine.
            let store = try #require(container.stores.first as? PostgresStore)
            _ = try store.pool.withConnection { try $0.query("SELECT pg_sleep(1.05)") }
            _ = try container.newBackgroundContext().count(for: Note.self)
            // The sleep is logged once. (Whether the count is quick enough not to be logged is up
            // to the machine's load, so the test does not ask.)
            let slow = logs.messages.filter {
                $0.message == "Slow statement" && $0.metadata["strata.sql"] == "SELECT pg_sleep(1.05)"
            }
            #expect(slow.count == 1)
            #expect(slow.first?.level == .warning)
            #expect(Double(slow.first?.metadata["strata.durationMilliseconds"] ?? "") ?? 0 >= 1000)
        }
    }

    @Test func conflictsSavesAndFetchesAreCounted() async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            let logs = LogCapture()
            let container = try container(database) { $0.logger = logs.logger() }
            defer { try? container.close() }
            let name = database.schemaName
            for slug in ["a", "b"] {
                let context = container.newBackgroundContext()
                Note(context: context).slug = slug
                try context.save()
            }
            let clash = container.newBackgroundContext()
            Note(context: clash).slug = "a"
            #expect(throws: StrataError.self) { try clash.save() }
            _ = try container.newBackgroundContext().fetch(Note.self)
            #expect(MetricsCapture.total("strata_saves_total", store: "postgres", name: name) == 2)
            #expect(MetricsCapture.total("strata_conflicts_total", store: "postgres", name: name) == 1)
            #expect(MetricsCapture.total("strata_fetches_total", store: "postgres", name: name) >= 1)
            #expect(logs.messages.contains { $0.message == "Save conflict" && $0.metadata["strata.code"] == "constraintConflict" })
        }
    }

    @Test func anotherServersCommitRecordsItsNotificationLatency() async throws {
        try await offThePool {
            let servers = try TwoServers()
            let received = Received()
            let observation = servers.second.addCommitObserver { received.append($0, at: Date()) }
            defer { observation.cancel() }
            let context = servers.first.newBackgroundContext()
            Note(context: context).slug = "heard"
            try context.save()
            let deadline = ContinuousClock.now + .seconds(300)
            while received.commits.isEmpty, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
            let latencies = MetricsCapture.timings(
                "strata_commit_notification_latency_seconds", store: "postgres", name: servers.database.schemaName)
            #expect(latencies.count == 1)
            #expect(latencies.allSatisfy { $0 >= 0 })
        }
    }
}
