import Foundation

/// The machinery behind the repository's subscriptions: the value now, then again after each
/// commit that can change it, computed on a fresh background context (committed data).
///
/// Commits only mark the value stale; one worker task recomputes, so saves never wait for the
/// consumer. A value equal to the previous one (when the type is `Equatable`) is not yielded
/// again. Ending the stream — the consumer leaving its loop, its task cancelled, or the stream
/// released — removes the commit observer and ends the worker.
struct RepositorySubscription<Value: Sendable>: Sendable {
    let container: PersistentContainer
    /// The entities whose changes count, or `nil` for every commit.
    let relevantEntities: Set<String>?
    /// Whether a failure ends the `Result` stream (a read subscription's lookup) or is yielded
    /// and followed by later values (a fetch).
    let failureEnds: Bool
    let compute: @Sendable (ObjectContext) throws -> Value

    /// The values as `Result`s.
    func resultStream() -> AsyncStream<Result<Value, RepositoryError>> {
        let (stream, continuation) = AsyncStream<Result<Value, RepositoryError>>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let stopper = Stopper()
        continuation.onTermination = { _ in stopper.stop() }
        stopper.set(start { result in
            continuation.yield(result)
            if case .failure = result, failureEnds {
                continuation.finish()
                return false
            }
            return true
        } finish: {
            continuation.finish()
        })
        return stream
    }

    /// The values, ending with the first failure.
    func throwingStream() -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let stopper = Stopper()
        continuation.onTermination = { _ in stopper.stop() }
        stopper.set(start { result in
            switch result {
            case .success(let value):
                continuation.yield(value)
                return true
            case .failure(let error):
                continuation.finish(throwing: error)
                return false
            }
        } finish: {
            continuation.finish()
        })
        return stream
    }

    /// Starts observing; `deliver` returns whether to go on. Returns the function that stops.
    private func start(
        deliver: @escaping @Sendable (Result<Value, RepositoryError>) -> Bool, finish: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void {
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = container.addCommitObserver(touching: relevantEntities) { trigger.yield() }
        let container = container
        let compute = compute
        let worker = Task.detached(executorPreference: BlockingWorkExecutor.shared) {
            var last: Value?
            func emit() -> Bool {
                let result: Result<Value, RepositoryError>
                do {
                    let value = try compute(container.newBackgroundContext())
                    if let last, isEqual(last, value) { return true }
                    last = value
                    result = .success(value)
                } catch {
                    last = nil
                    result = .failure(RepositoryError(error))
                }
                return deliver(result)
            }
            guard emit() else { return }
            for await _ in triggers {
                if Task.isCancelled { break }
                guard emit() else { return }
            }
            finish()
        }
        return {
            observation.cancel()
            trigger.finish()
            worker.cancel()
        }
    }
}

/// Whether two values are equal, when their type is `Equatable`; `false` otherwise.
private func isEqual<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
    guard let lhs = lhs as? any Equatable else { return false }
    return lhs.isEqual(to: rhs)
}

extension Equatable {
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

/// The function that stops a subscription, installed before the subscription starts: a stream
/// that ends at once (a failed first lookup) still stops it.
private final class Stopper: Sendable {
    private let state = LockedBox<(stop: (@Sendable () -> Void)?, stopped: Bool)>((nil, false))

    /// Installs `stop`, calling it now when the stream has already ended.
    func set(_ stop: @escaping @Sendable () -> Void) {
        let stopNow = state.withLock { state -> Bool in
            state.stop = stop
            return state.stopped
        }
        if stopNow { stop() }
    }

    /// Stops the subscription (once it is installed).
    func stop() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            state.stopped = true
            defer { state.stop = nil }
            return state.stop
        }
        stop?()
    }
}
