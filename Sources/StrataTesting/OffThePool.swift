import Foundation

/// Runs blocking work — synchronous store calls that wait on a server or a disk — on threads of
/// its own instead of Swift's cooperative threads: a test's blocking work there starves other
/// tests' tasks, and timing-sensitive ones fail. The work stays in the calling task (through a
/// task executor preference), so `#expect` and task-local values work as usual.
///
/// ```swift
/// @Test func savesOnPostgreSQL() async throws {
///     try await offThePool {
///         try context.save()
///     }
/// }
/// ```
///
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func offThePool<Result>(_ body: () throws -> Result) async throws -> Result {
    try await withTaskExecutorPreference(BlockingWorkExecutor.shared) {
        try body()
    }
}

/// A task executor whose threads may block: one thread per job in flight, reused while jobs
/// keep coming, so that blocked work never waits for another blocked job to give back its
/// thread.
final class BlockingWorkExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `jobs` and `idle` are read and written only under `condition`'s lock.
    static let shared = BlockingWorkExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var idle = 0

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        let needsThread = idle < jobs.count
        condition.signal()
        condition.unlock()
        if needsThread {
            let thread = Thread { [self] in work() }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty {
                idle += 1
                // Threads that wait a while with nothing to do go away.
                let woke = condition.wait(until: Date().addingTimeInterval(10))
                idle -= 1
                if !woke && jobs.isEmpty {
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
