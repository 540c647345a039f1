import Foundation
import Logging
import StrataTesting
import Testing

@testable import Strata

/// What an SQLite store logs through ``StoreDescription/logger`` and counts through
/// swift-metrics: statements (never their values), slow statements, conflicts, saves, fetches,
/// writer waits and the latency of other processes' commits.
@Suite(.timeLimit(.minutes(10))) struct StoreInstrumentationTests {
    let directory: TemporaryDirectory
    /// The store's file name, which names its metrics: unique, so that tests count apart.
    let name = "Instrumented-\(UUID().uuidString).sqlite"
    var url: URL { directory.file(name) }

    init() throws {
        _ = MetricsCapture.shared  // before any store makes its metrics
        directory = try TemporaryDirectory()
    }

    func container(_ configure: (inout StoreDescription) -> Void) throws -> PersistentContainer {
        var description = StoreDescription.sqlite(url)
        configure(&description)
        return try PersistentContainer(name: "Movies", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [description])
    }

    func saveMovie(_ title: String, id: UUID = UUID(), in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.id = id
        movie.title = title
        try context.save()
    }

    @Test func theTraceLogsEveryStatementsSQLButNeverItsValues() throws {
        let logs = LogCapture()
        let container = try container {
            $0.logger = logs.logger()
            $0.tracesStatements = true
            // Every statement at `trace`: a statement slower than the threshold (a loaded
            // machine) would be logged as slow instead.
            $0.slowStatementThreshold = nil
        }
        try saveMovie("Secret-Title-4821", in: container)
        let found = try container.newBackgroundContext().fetch(Movie.self, where: \.title == "Secret-Title-4821")
        #expect(found.count == 1)

        let statements = logs.messages.filter { $0.message == "Statement" }
        #expect(statements.contains { $0.metadata["strata.sql"]?.hasPrefix("INSERT INTO") == true })
        #expect(statements.contains { ($0.metadata["strata.sql"] ?? "").contains("SELECT") && ($0.metadata["strata.sql"] ?? "").contains("?") })
        #expect(statements.allSatisfy { $0.level == .trace && $0.metadata["strata.durationMilliseconds"] != nil })
        #expect(statements.allSatisfy { $0.metadata["strata.store"] == "sqlite:\(name)" })
        #expect(logs.messages.contains { $0.message == "Opened SQLite store" && $0.level == .info })
        #expect(!logs.text.contains("Secret-Title-4821"))
    }

    @Test func statementsAtOrAboveTheThresholdAreLoggedAsSlow() throws {
        let logs = LogCapture()
        let container = try container {
            $0.logger = logs.logger(level: .info)
            $0.slowStatementThreshold = .zero
        }
        try saveMovie("Heat", in: container)
        let slow = logs.messages.filter { $0.message == "Slow statement" }
        #expect(slow.contains { $0.metadata["strata.sql"]?.hasPrefix("INSERT INTO") == true })
        #expect(slow.allSatisfy { $0.level == .warning })
        // The trace is off: no statement is logged as a mere statement.
        #expect(!logs.messages.contains { $0.message == "Statement" })
    }

    @Test func byDefaultOnlyStatementsSlowerThanHalfASecondAreLogged() throws {
        let logs = LogCapture()
        let container = try container { $0.logger = logs.logger() }
        try saveMovie("Heat", in: container)
        _ = try container.newBackgroundContext().count(for: FetchRequest<Movie>())
        #expect(!logs.messages.contains { $0.message == "Slow statement" || $0.message == "Statement" })
        #expect(logs.messages.contains { $0.message == "Opened SQLite store" })
    }

    @Test func conflictsAreLoggedAndCounted() throws {
        let logs = LogCapture()
        let container = try container { $0.logger = logs.logger() }
        let id = UUID()
        try saveMovie("Heat", id: id, in: container)
        #expect(throws: StrataError.self) { try saveMovie("Heat again", id: id, in: container) }
        let conflict = try #require(logs.messages.first { $0.message == "Save conflict" })
        #expect(conflict.level == .notice)
        #expect(conflict.metadata["strata.code"] == "constraintConflict")
        #expect(MetricsCapture.total("strata_conflicts_total", store: "sqlite", name: name) == 1)
    }

    @Test func savesFetchesAndWriterWaitsAreCounted() throws {
        let container = try container { _ in }
        try saveMovie("Heat", in: container)
        try saveMovie("Ronin", in: container)
        let context = container.newBackgroundContext()
        _ = try context.fetch(FetchRequest<Movie>())
        _ = try context.count(for: FetchRequest<Movie>())
        #expect(MetricsCapture.total("strata_saves_total", store: "sqlite", name: name) == 2)
        #expect(MetricsCapture.total("strata_fetches_total", store: "sqlite", name: name) >= 2)
        #expect(MetricsCapture.timings("strata_pool_wait_seconds", store: "sqlite", name: name).count == 2)
    }

    @Test func anotherProcesssCommitRecordsItsNotificationLatency() async throws {
        let watching = try container {
            $0.remoteChangePollingInterval = .milliseconds(10)
            $0.isPersistentHistoryTrackingEnabled = true
        }
        let other = try PersistentContainer(
            name: "Movies", entities: [Movie.self, Review.self, Person.self],
            storeDescriptions: [.sqlite(url, persistentHistoryTracking: true)])
        var saves = watching.savedChanges().makeAsyncIterator()
        try saveMovie("Heat", in: other)
        // With history, the other container's commit arrives naming its objects.
        let changes = await saves.next()
        #expect(changes?.insertedObjectIDs.count == 1)
        let latencies = MetricsCapture.timings("strata_commit_notification_latency_seconds", store: "sqlite", name: name)
        #expect(latencies.count == 1)
        #expect(latencies.allSatisfy { $0 >= 0 })
    }

    @Test func descriptionsThatDifferOnlyInTheirLoggersAreEqual() {
        let plain = StoreDescription.sqlite(URL(fileURLWithPath: "/tmp/Movies.sqlite"))
        var logged = plain
        logged.logger = LogCapture().logger()
        #expect(plain == logged)
        #expect(Set([plain, logged]).count == 1)
        var traced = plain
        traced.tracesStatements = true
        #expect(plain != traced)
    }
}
