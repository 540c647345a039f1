import Foundation
import Logging
import Metrics

/// What a store logs and counts, made from its description: the swift-log `Logger`, the
/// statement log settings and the swift-metrics instruments. Every store (SQLite, in-memory,
/// PostgreSQL) reports through one of these, so the two stores log and count the same events
/// under the same names.
package struct StoreInstrumentation: Sendable {
    /// Where the store logs; a logger that drops everything when the description has none.
    package let logger: Logger
    /// Whether the description gave a logger: without one, statements are not even timed.
    package let isLogging: Bool
    /// Statements slower than this are logged at `warning`; `nil` logs none.
    package let slowStatementThreshold: Duration?
    /// Whether every statement's SQL is logged at `trace`.
    package let tracesStatements: Bool
    /// The store's counters and timers.
    package let metrics: StoreMetrics

    /// The instrumentation a description asks for, for a store of `kind` (`sqlite`,
    /// `memory`, `postgres`) named `name` (a file name, a PostgreSQL schema).
    package init(description: StoreDescription?, kind: String, name: String) {
        if let logger = description?.logger {
            var logger = logger
            logger[metadataKey: "strata.store"] = "\(kind):\(name)"
            self.logger = logger
            isLogging = true
        } else {
            logger = Logger(label: "strata", factory: { _ in SwiftLogNoOpLogHandler() })
            isLogging = false
        }
        slowStatementThreshold = description?.slowStatementThreshold
        tracesStatements = description?.tracesStatements ?? false
        metrics = StoreMetrics(kind: kind, name: name)
    }

    /// Instrumentation that logs nothing and counts under `kind` and `name`.
    package static func silent(kind: String, name: String) -> StoreInstrumentation {
        StoreInstrumentation(description: nil, kind: kind, name: name)
    }

    /// Whether statements need timing: a logger is set and slow statements or the trace are
    /// asked for.
    package var observesStatements: Bool {
        isLogging && (slowStatementThreshold != nil || tracesStatements)
    }

    /// Reports one statement that ran for `duration`: at `trace` when the trace is on, at
    /// `warning` when it was slow. Only the SQL text is logged; bound values never are (they
    /// are parameters, not part of the text).
    package func statement(_ sql: @autoclosure () -> String, duration: Duration) {
        guard isLogging else { return }
        let isSlow = slowStatementThreshold.map { duration >= $0 } ?? false
        guard isSlow || tracesStatements else { return }
        let text = sql()
        let milliseconds = Self.milliseconds(duration)
        if isSlow {
            logger.warning(
                "Slow statement", metadata: ["strata.sql": "\(text)", "strata.durationMilliseconds": "\(milliseconds)"])
        } else {
            logger.trace("Statement", metadata: ["strata.sql": "\(text)", "strata.durationMilliseconds": "\(milliseconds)"])
        }
    }

    /// Runs `body`, timing it as the statement `sql` when statements are observed.
    package func timing<T>(_ sql: @autoclosure () -> String, _ body: () throws -> T) rethrows -> T {
        guard observesStatements else { return try body() }
        let clock = ContinuousClock()
        let start = clock.now
        defer { statement(sql(), duration: clock.now - start) }
        return try body()
    }

    /// Counts and logs a save that failed with a conflict (optimistic locking or uniqueness).
    package func conflict(_ error: StrataError) {
        guard error.code == .optimisticLockingFailure || error.code == .constraintConflict else { return }
        metrics.conflicts.increment()
        logger.notice(
            "Save conflict", metadata: ["strata.code": "\(error.code)", "strata.message": "\(error.message)"])
    }

    static func milliseconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.3f", value)
    }
}

/// What a store counts through swift-metrics. Whatever metrics backend the process bootstrapped
/// (Prometheus, StatsD, OpenTelemetry) receives them; without one they cost nothing.
///
/// Every metric has the dimensions `store` (`sqlite`, `memory` or `postgres`) and `name` (the
/// store file's name, or the PostgreSQL schema).
///
/// | metric | kind | what |
/// | --- | --- | --- |
/// | `strata_saves_total` | counter | committed write transactions (saves and batch requests) |
/// | `strata_fetches_total` | counter | fetches, counts and value fetches |
/// | `strata_conflicts_total` | counter | optimistic-locking and uniqueness conflicts |
/// | `strata_pool_wait_seconds` | timer | how long a request waited for a connection (SQLite: the writer) |
/// | `strata_pool_exhausted_total` | counter | requests that gave up waiting (PostgreSQL) |
/// | `strata_commit_notification_latency_seconds` | timer | from another process's or server's commit to its notice here |
package struct StoreMetrics: Sendable {
    package let saves: Counter
    package let fetches: Counter
    package let conflicts: Counter
    package let poolWaits: Metrics.Timer
    package let poolExhausted: Counter
    package let notificationLatency: Metrics.Timer

    package init(kind: String, name: String) {
        let dimensions = [("store", kind), ("name", name)]
        saves = Counter(label: "strata_saves_total", dimensions: dimensions)
        fetches = Counter(label: "strata_fetches_total", dimensions: dimensions)
        conflicts = Counter(label: "strata_conflicts_total", dimensions: dimensions)
        poolWaits = Metrics.Timer(label: "strata_pool_wait_seconds", dimensions: dimensions)
        poolExhausted = Counter(label: "strata_pool_exhausted_total", dimensions: dimensions)
        notificationLatency = Metrics.Timer(label: "strata_commit_notification_latency_seconds", dimensions: dimensions)
    }

    package func recordPoolWait(_ waited: Duration) {
        poolWaits.recordNanoseconds(
            waited.components.seconds * 1_000_000_000 + waited.components.attoseconds / 1_000_000_000)
    }

    /// Records how long a commit took to reach this store, from the commit's timestamp.
    package func recordNotificationLatency(since timestamp: Date) {
        notificationLatency.recordNanoseconds(Int64(max(0, Date().timeIntervalSince(timestamp)) * 1e9))
    }
}
