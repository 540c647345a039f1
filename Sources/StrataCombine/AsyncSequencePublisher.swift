#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Strata

/// A Combine publisher of the elements of one of Strata's `Sendable` asynchronous sequences
/// (live queries, notifications, controller changes).
///
/// Each subscription iterates its own sequence in a task of its own, from the first demand on.
/// The iteration never waits for the subscriber: elements it has not asked for yet are kept —
/// every one of them for notifications and controller changes, only the latest for live
/// queries, whose next result supersedes the previous one. Cancelling the subscription cancels
/// the task, which ends the iteration and with it every registration the sequence made.
/// Elements arrive on the producing task's thread (or the one that requested them); use
/// `receive(on:)` to move them.
public struct AsyncSequencePublisher<Output: Sendable, Failure: Error>: Publisher {
    let keepsLatestOnly: Bool
    let produce: @Sendable (Emitter<Output>) async -> Failure?

    /// Delivers the elements of `sequence`; the publisher fails with the sequence's error.
    ///
    /// - Parameter keepsLatestOnly: Whether an element the subscriber has not asked for yet is
    ///   replaced by the next one (for sequences of whole states, such as query results).
    public init<Base: AsyncSequence & Sendable>(_ sequence: Base, keepsLatestOnly: Bool = false)
    where Base.Element == Output, Failure == any Error {
        self.keepsLatestOnly = keepsLatestOnly
        produce = { emitter in
            do {
                for try await element in sequence {
                    guard emitter.send(element) else { return nil }
                }
                return nil
            } catch {
                return error
            }
        }
    }

    /// Delivers what `produce` sends; the publisher completes with the failure it returns.
    init(keepsLatestOnly: Bool, produce: @escaping @Sendable (Emitter<Output>) async -> Failure?) {
        self.keepsLatestOnly = keepsLatestOnly
        self.produce = produce
    }

    /// Delivers every element of a sequence that never fails.
    public init<Base: AsyncSequence & Sendable>(neverFailing sequence: Base)
    where Base.Element == Output, Base.Failure == Never, Failure == Never {
        keepsLatestOnly = false
        produce = { emitter in
            for await element in sequence {
                guard emitter.send(element) else { return nil }
            }
            return nil
        }
    }

    /// Attaches `subscriber` with a subscription of its own; the sequence is iterated from the
    /// subscriber's first demand.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let subscription = SequenceSubscription(subscriber: subscriber, keepsLatestOnly: keepsLatestOnly, produce: produce)
        subscriber.receive(subscription: subscription)
    }
}

/// Hands a subscription's elements to its subscriber as demand allows.
final class Emitter<Output: Sendable>: Sendable {
    let state: SubscriptionState<Output>

    init(state: SubscriptionState<Output>) {
        self.state = state
    }

    /// Queues `element` and delivers what the subscriber asked for; `false` once the
    /// subscription was cancelled (the producer should stop).
    func send(_ element: Output) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            guard !state.isCancelled else { return true }
            if state.keepsLatestOnly { state.buffer.removeAll() }
            state.buffer.append(element)
            return false
        }
        if cancelled { return false }
        state.deliver()
        return true
    }
}

/// The mutable state of one subscription.
struct SubscriptionStateValue<Output> {
    var demand: Subscribers.Demand = .none
    var buffer: [Output] = []
    var keepsLatestOnly = false
    var isCancelled = false
    var isStarted = false
    /// Whether a thread is handing elements to the subscriber (one at a time keeps the order).
    var isDelivering = false
    /// The producer's end, once it ended: `.some(nil)` finished, `.some(error)` failed.
    var end: (any Error)??
    var receive: ((Output) -> Subscribers.Demand)?
    var complete: (((any Error)?) -> Void)?
    var task: Task<Void, Never>?
}

/// The state (the subscriber's closures among it) is only reached through `withLock`, in the one
/// lock box; the subscriber is called after the lock is released, by one thread at a time
/// (`isDelivering`).
final class SubscriptionState<Output>: Sendable {
    private let value = LockedBox(SubscriptionStateValue<Output>())

    func withLock<Result>(_ body: (inout SubscriptionStateValue<Output>) throws -> Result) rethrows -> Result {
        try value.withLock(body)
    }

    private enum Step {
        case element(Output, (Output) -> Subscribers.Demand)
        case completion((any Error)?, ((any Error)?) -> Void)
        case none
    }

    /// Hands queued elements to the subscriber while it wants them, then the completion once
    /// the queue is empty; only one thread does it at a time.
    func deliver() {
        let mayDeliver = withLock { state -> Bool in
            guard !state.isDelivering, !state.isCancelled else { return false }
            state.isDelivering = true
            return true
        }
        guard mayDeliver else { return }
        while true {
            let step = withLock { state -> Step in
                if !state.isCancelled, state.demand > 0, !state.buffer.isEmpty, let receive = state.receive {
                    state.demand -= 1
                    return .element(state.buffer.removeFirst(), receive)
                }
                if !state.isCancelled, state.buffer.isEmpty, let end = state.end, let complete = state.complete {
                    state.receive = nil
                    state.complete = nil
                    return .completion(end, complete)
                }
                state.isDelivering = false
                return .none
            }
            switch step {
            case .element(let element, let receive):
                let more = receive(element)
                withLock { $0.demand += more }
            case .completion(let error, let complete):
                complete(error)
                withLock { $0.isDelivering = false }
                return
            case .none:
                return
            }
        }
    }
}

/// One subscriber's subscription: a task iterating the sequence.
final class SequenceSubscription<Output: Sendable, Failure: Error>: Subscription {
    /// Internal, not private: tests look at the elements kept for the subscriber.
    let state = SubscriptionState<Output>()
    private let produce: @Sendable (Emitter<Output>) async -> Failure?

    init<S: Subscriber>(
        subscriber: S, keepsLatestOnly: Bool, produce: @escaping @Sendable (Emitter<Output>) async -> Failure?
    ) where S.Input == Output, S.Failure == Failure {
        self.produce = produce
        state.withLock { state in
            state.keepsLatestOnly = keepsLatestOnly
            state.receive = { subscriber.receive($0) }
            state.complete = { error in
                if let failure = error as? Failure {
                    subscriber.receive(completion: .failure(failure))
                } else {
                    subscriber.receive(completion: .finished)
                }
            }
        }
    }

    func request(_ demand: Subscribers.Demand) {
        let start = state.withLock { state -> Bool in
            guard !state.isCancelled else { return false }
            state.demand += demand
            let start = !state.isStarted && state.demand > 0
            if start { state.isStarted = true }
            return start
        }
        state.deliver()
        guard start else { return }
        let state = state
        let produce = produce
        let task = Task {
            let failure = await produce(Emitter(state: state))
            state.withLock { $0.end = .some(failure) }
            state.deliver()
        }
        state.withLock { state in
            if state.isCancelled { task.cancel() } else { state.task = task }
        }
    }

    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.isCancelled = true
            state.receive = nil
            state.complete = nil
            state.buffer.removeAll()
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }
}
