import Foundation
import Logging
import Metrics
import MetricsTestKit
import Strata

/// One message a ``LogCapture`` kept.
public struct CapturedLogMessage: Sendable, CustomStringConvertible {
    /// The message's level.
    public var level: Logger.Level
    /// The message.
    public var message: String
    /// Its metadata (the logger's and the message's), as text.
    public var metadata: [String: String]

    /// The level, message and metadata on one line, metadata sorted by key.
    public var description: String {
        "[\(level)] \(message) " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

/// Keeps everything logged through its loggers, for tests that check what a store logs (and
/// what it never logs: passwords, bound values).
///
/// ```swift
/// let logs = LogCapture()
/// var description = StoreDescription.sqlite(url)
/// description.logger = logs.logger()
/// description.tracesStatements = true
/// // … use the container …
/// #expect(logs.messages.contains { $0.message == "Statement" })
/// #expect(!logs.text.contains("secret"))
/// ```
public final class LogCapture: Sendable {
    private let box = LockedBox<[CapturedLogMessage]>([])

    /// An empty capture.
    public init() {}

    /// A logger that keeps its messages here, letting through `level` and above.
    public func logger(label: String = "strata.test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label, factory: { _ in CapturingLogHandler(box: self.box) })
        logger.logLevel = level
        return logger
    }

    /// Every message kept so far, in order.
    public var messages: [CapturedLogMessage] { box.withLock { $0 } }

    /// Every message kept so far, one per line: for checks that something never appears.
    public var text: String { messages.map(\.description).joined(separator: "\n") }

    /// Forgets the messages kept so far.
    public func removeAll() { box.withLock { $0.removeAll() } }
}

/// The log handler behind ``LogCapture``.
private struct CapturingLogHandler: LogHandler {
    let box: LockedBox<[CapturedLogMessage]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let message = CapturedLogMessage(
            level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" })
        box.withLock { $0.append(message) }
    }
}

/// The process's swift-metrics backend during tests: a `TestMetrics` that records every
/// counter and timer, bootstrapped on first use.
///
/// A process can bootstrap its metrics system once, so every test reads the same recorder;
/// metrics made before the first use (by stores opened earlier) go nowhere. Give each test's
/// store a name of its own (metrics carry the store's file name or PostgreSQL schema) so that
/// tests running at once do not count into one another.
public enum MetricsCapture {
    /// The recorder, bootstrapped as the process's metrics backend on first use.
    public static let shared: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    /// The total of the counter `label` of a store, or 0 when it was never incremented.
    public static func total(_ label: String, store kind: String, name: String) -> Int64 {
        (try? shared.expectCounter(label, [("store", kind), ("name", name)]).totalValue) ?? 0
    }

    /// The values the timer `label` of a store recorded, in nanoseconds.
    public static func timings(_ label: String, store kind: String, name: String) -> [Int64] {
        (try? shared.expectTimer(label, [("store", kind), ("name", name)]).values) ?? []
    }
}
