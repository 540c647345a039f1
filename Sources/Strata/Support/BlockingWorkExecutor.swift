import Foundation

/// A task executor for work that blocks a thread: synchronous store calls waiting on a disk or
/// a database server.
///
/// Swift's cooperative pool has one thread per core. Store work that blocks one of them holds
/// up every other task — a server's request handlers, a live query's updates — and work that
/// blocks all of them stalls the process. `performBackgroundTask`, repositories and live
/// queries run their store work on this executor instead: it starts a thread for each job that
/// finds none free, up to ``maximumThreads``, reuses threads while jobs keep coming, and lets
/// idle ones end. Jobs beyond the limit wait their turn; no job here waits for another job
/// here, so the limit cannot deadlock.
package final class BlockingWorkExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `jobs`, `idle` and `threads` are read and written only under
    // `condition`'s lock.

    /// The executor Strata's background work uses.
    package static let shared = BlockingWorkExecutor()

    /// The most threads the executor runs at once.
    package let maximumThreads: Int

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var idle = 0
    private var threads = 0

    package init(maximumThreads: Int = 128) {
        self.maximumThreads = maximumThreads
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        let startsThread = idle < jobs.count && threads < maximumThreads
        if startsThread { threads += 1 }
        condition.signal()
        condition.unlock()
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = "strata.blocking"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty {
                idle += 1
                let woke = condition.wait(until: Date().addingTimeInterval(10))
                idle -= 1
                if !woke && jobs.isEmpty {
                    threads -= 1
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
