import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Many threads incrementing one counter, each in its own context, under every merge policy.
///
/// Each worker loads the counter, waits until every worker has loaded it (so the first save
/// makes every other worker's copy stale), then increments and saves it over and over without
/// refreshing. `STRATA_CONFLICT_ROUNDS` sets the increments per worker (default 40).
@Suite struct ConflictLoadTests {
    static let workers = 8
    static let rounds = ProcessInfo.processInfo.environment["STRATA_CONFLICT_ROUNDS"].flatMap(Int.init) ?? 40

    /// What one worker saw.
    struct Outcome: Sendable {
        /// Saves refused with `optimisticLockingFailure` (each retried after a refresh).
        var conflicts = 0
        /// Other save errors.
        var failures: [String] = []
        /// The counter's value in the worker's context after its last save.
        var lastValue: Int64 = 0
    }

    static func run(policy: MergePolicy) throws -> (outcomes: [Outcome], final: Int64) {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Sample.self], in: directory)
        let setup = container.newBackgroundContext()
        _ = Sample(context: setup)
        try setup.save()

        let loaded = LockedBox(0)
        let outcomes = LockedBox<[Outcome]>([])
        let finished = DispatchGroup()
        for _ in 0..<workers {
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                var outcome = Outcome()
                let context = container.newBackgroundContext()
                context.mergePolicy = policy
                do {
                    guard let counter = try context.fetch(Sample.self).first else {
                        outcome.failures.append("no counter")
                        outcomes.withLock { $0.append(outcome) }
                        return
                    }
                    loaded.withLock { $0 += 1 }
                    while loaded.withLock({ $0 }) < workers { usleep(200) }
                    for _ in 0..<rounds {
                        while true {
                            counter.int64 += 1
                            do {
                                try context.save()
                                break
                            } catch let error as StrataError where error.code == .optimisticLockingFailure {
                                outcome.conflicts += 1
                                if policy != .error { outcome.failures.append(error.message) }
                                context.refresh(counter, mergeChanges: false)
                                if policy != .error { break }  // counted as a failure below
                            }
                        }
                    }
                    outcome.lastValue = counter.int64
                } catch {
                    outcome.failures.append("\(error)")
                }
                outcomes.withLock { $0.append(outcome) }
            }
            thread.start()
        }
        finished.wait()
        let final = try container.newBackgroundContext().fetch(Sample.self).first?.int64 ?? -1
        return (outcomes.withLock { $0 }, final)
    }

    @Test func theErrorPolicyReportsEveryConflictAndLosesNoIncrement() throws {
        let (outcomes, final) = try Self.run(policy: .error)
        #expect(outcomes.count == Self.workers)
        let failures = outcomes.flatMap(\.failures)
        #expect(failures.isEmpty, "\(failures)")
        // Every stale save was refused and retried, so every increment counts.
        #expect(final == Int64(Self.workers * Self.rounds))
        // After the barrier every worker holds the same version: the first save makes the
        // other workers' first saves conflict.
        #expect(outcomes.map(\.conflicts).reduce(0, +) >= Self.workers - 1)
    }

    @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump, .rollback])
    func resolvingPoliciesReportNoConflictAndFollowTheirRule(policy: MergePolicy) throws {
        let (outcomes, final) = try Self.run(policy: policy)
        #expect(outcomes.count == Self.workers)
        let failures = outcomes.flatMap(\.failures)
        #expect(failures.isEmpty, "\(failures)")
        #expect(outcomes.map(\.conflicts).reduce(0, +) == 0, "\(policy)")
        #expect((1...Int64(Self.workers * Self.rounds)).contains(final), "\(policy): \(final)")
        let lastValues = outcomes.map(\.lastValue)
        switch policy {
        case .mergeByPropertyObjectTrump, .overwrite:
            // The object's value wins: the store keeps what the last saving worker wrote,
            // whatever others wrote before.
            #expect(lastValues.contains(final), "\(policy): \(final) not in \(lastValues)")
        default:
            // The store's value wins: a worker's increment of a stale value is dropped, so
            // the counter only ever goes up by one from the stored value, and the last
            // writer's value is the largest any worker holds.
            #expect(lastValues.max() == final, "\(policy): \(final), workers hold \(lastValues)")
        }
    }
}
