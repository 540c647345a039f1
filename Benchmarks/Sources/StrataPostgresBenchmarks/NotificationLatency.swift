import BenchmarkSupport
import Foundation
import Strata
import StrataPostgres

// N1: how long another app server takes to hear a commit. Two containers (two "servers") open
// the same PostgreSQL schema; the second observes commits with `addCommitObserver`; the first
// saves one small object at a time and waits for the second to hear of it before the next.
// Latency: from just before `save()` to the observer's call on the other container (the save
// itself included, as a user sees it).

/// N1's figures, in milliseconds.
struct LatencySummary {
    var saves: Int
    var median: Double
    var p95: Double
    var max: Double
    /// The target, on loopback.
    static let targetMilliseconds = 100.0

    var meetsTarget: Bool { p95 <= Self.targetMilliseconds }

    var line: String {
        func milliseconds(_ value: Double) -> String { String(format: "%.2f ms", value) }
        return "N1: commit notice latency between two containers on one PostgreSQL schema, \(saves) one-object saves, "
            + "from just before `save()` to the other container's commit observer: median \(milliseconds(median)), "
            + "p95 \(milliseconds(p95)), max \(milliseconds(max)) "
            + "(target ≤ \(Int(Self.targetMilliseconds)) ms at p95: \(meetsTarget ? "met" : "missed"))."
    }
}

/// The remote commits the observing container heard, handed to the saving thread.
///
/// `@unchecked Sendable`: every property is read and written only while `condition` is locked.
final class CommitInbox: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrivals: [(time: ContinuousClock.Instant, keys: [Int64])] = []

    func deliver(_ commit: StoreCommit) {
        let time = ContinuousClock.now
        condition.lock()
        arrivals.append((time, commit.insertedObjectIDs.compactMap(\.primaryKey)))
        condition.broadcast()
        condition.unlock()
    }

    /// The next commit heard, or nil after `timeout`.
    func next(timeout: TimeInterval) -> (time: ContinuousClock.Instant, keys: [Int64])? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while arrivals.isEmpty {
            if !condition.wait(until: deadline) { return nil }
        }
        return arrivals.removeFirst()
    }

    var pending: Int {
        condition.lock()
        defer { condition.unlock() }
        return arrivals.count
    }
}

/// Runs N1: `saves` measured saves after `warmUp` unmeasured ones.
func runNotificationLatency(server: BenchmarkServer, saves: Int, warmUp: Int = 5) throws -> LatencySummary {
    let description = StoreDescription.postgres(server.strataConfiguration(schema: Schemas.strataNotes))
    let saving = try PersistentContainer(name: "N1-first", entities: [Note.self], storeDescriptions: [description])
    defer { try? saving.close() }
    let observing = try PersistentContainer(name: "N1-second", entities: [Note.self], storeDescriptions: [description])
    defer { try? observing.close() }
    let inbox = CommitInbox()
    let observation = observing.addCommitObserver { commit in
        guard commit.isRemote else { return }
        inbox.deliver(commit)
    }
    defer { observation.cancel() }

    let context = saving.newBackgroundContext()
    var latencies: [Double] = []
    for number in 0..<(warmUp + saves) {
        let note = Note(context: context)
        note.number = Int64(number)
        note.text = "note \(number)"
        let start = ContinuousClock.now
        try context.save()
        guard let arrival = inbox.next(timeout: 10) else {
            throw BenchmarkError("N1: the second container heard nothing of save \(number) within 10 s")
        }
        try expect(arrival.keys, [note.objectID.primaryKey].compactMap { $0 }, "N1: the keys of save \(number)'s notice")
        if number >= warmUp { latencies.append(seconds(arrival.time - start) * 1_000) }
    }
    // Every save was heard once, and the second container reads them all.
    Thread.sleep(forTimeInterval: 0.2)
    try expect(inbox.pending, 0, "N1: notices beyond one per save")
    try expect(try observing.newBackgroundContext().count(for: Note.self), warmUp + saves, "N1: notes the second container reads")
    return LatencySummary(
        saves: saves, median: median(latencies), p95: percentile(latencies, 0.95), max: latencies.max() ?? 0)
}
