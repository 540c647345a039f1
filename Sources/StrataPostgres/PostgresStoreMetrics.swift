import Foundation
import Metrics

/// What a PostgreSQL store counts through swift-metrics, with the dimension `schema` (the
/// PostgreSQL schema the store lives in). Whatever metrics backend the process bootstrapped
/// (Prometheus, StatsD, OpenTelemetry) receives them; without one they cost nothing.
///
/// | metric | kind | what |
/// | --- | --- | --- |
/// | `strata_saves_total` | counter | committed write transactions (saves and batch requests) |
/// | `strata_fetches_total` | counter | fetches, counts and value fetches |
/// | `strata_conflicts_total` | counter | optimistic-locking and uniqueness conflicts |
/// | `strata_pool_wait_seconds` | timer | how long requests waited for a free connection |
/// | `strata_pool_exhausted_total` | counter | requests that gave up waiting |
/// | `strata_commit_notification_latency_seconds` | timer | from another server's commit to its notice here |
struct PostgresStoreMetrics: Sendable {
    let saves: Counter
    let fetches: Counter
    let conflicts: Counter
    let poolWaits: Metrics.Timer
    let poolExhausted: Counter
    let notificationLatency: Metrics.Timer

    init(schemaName: String) {
        let dimensions = [("schema", schemaName), ("store", "postgres")]
        saves = Counter(label: "strata_saves_total", dimensions: dimensions)
        fetches = Counter(label: "strata_fetches_total", dimensions: dimensions)
        conflicts = Counter(label: "strata_conflicts_total", dimensions: dimensions)
        poolWaits = Metrics.Timer(label: "strata_pool_wait_seconds", dimensions: dimensions)
        poolExhausted = Counter(label: "strata_pool_exhausted_total", dimensions: dimensions)
        notificationLatency = Metrics.Timer(label: "strata_commit_notification_latency_seconds", dimensions: dimensions)
    }

    func recordPoolWait(_ waited: Duration) {
        poolWaits.recordNanoseconds(waited.components.seconds * 1_000_000_000 + waited.components.attoseconds / 1_000_000_000)
    }

    func recordNotificationLatency(seconds: Double) {
        notificationLatency.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }
}
