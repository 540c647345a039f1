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
package final class BlockingWorkExecutor: TaskExecutor, Sendable {
    /// The executor Strata's background work uses.
    package static let shared = BlockingWorkExecutor()

    /// The most threads the executor runs at once.
    package let maximumThreads: Int

    private struct State {
        var jobs: [UnownedJob] = []
        /// Threads waiting for a job.
        var idle = 0
        var threads = 0
    }

    private let state = LockedBox(State())

    package init(maximumThreads: Int = 128) {
        self.maximumThreads = maximumThreads
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let startsThread = state.withLock { state in
            state.jobs.append(unowned)
            let startsThread = state.idle < state.jobs.count && state.threads < maximumThreads
            if startsThread { state.threads += 1 }
            self.state.signal()
            return startsThread
        }
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = "strata.blocking"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            // `nil` once the thread waited 10 seconds for a job in vain: it ends.
            let next = state.withLock(waitingAsNeeded: { state, wake -> LockStep<UnownedJob?> in
                if wake != .notWaited {
                    state.idle -= 1
                    if wake == .timedOut && state.jobs.isEmpty {
                        state.threads -= 1
                        return .done(nil)
                    }
                }
                guard state.jobs.isEmpty else { return .done(state.jobs.removeFirst()) }
                state.idle += 1
                return .wait(until: Date().addingTimeInterval(10))
            })
            guard let job = next else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
