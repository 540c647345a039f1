import Foundation

/// A value guarded by a lock, with a condition to wait on until the value is as needed.
///
/// Every read and write of the value goes through a `withLock` method. Waiting releases the lock
/// between two calls of the caller's closure, never during one, so no `inout` access to the
/// value spans a wait.
///
/// `@unchecked Sendable` is safe here: the only access to `value` is through the `withLock`
/// methods, which hold `condition`'s lock for the whole of each closure call, so no two threads
/// ever touch `value` at once.
package final class LockedBox<Value>: @unchecked Sendable {
    // Internal (not private) only so that `withLock(_:)` can be inlined into other modules: a
    // store decoding rows on one thread for another takes the lock once a row.
    @usableFromInline let condition = NSCondition()
    @usableFromInline var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the lock held.
    ///
    /// - Parameter body: Reads or changes the value; no other thread touches it meanwhile.
    /// - Returns: What `body` returns.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Waits until the value is ready or `deadline` passed, then runs `body` on it with the lock
    /// held.
    ///
    /// `isReady` is checked with the lock held, first without waiting, then each time the box is
    /// woken (``signal()``, ``broadcast()``, or spuriously); the lock is released only while
    /// waiting. So a change made and signalled inside another `withLock` is never missed, and
    /// `body` runs in the same locked stretch as the last check of `isReady`.
    ///
    /// - Parameters:
    ///   - isReady: Whether the value is what the caller waits for.
    ///   - deadline: When to stop waiting; `nil` waits as long as it takes.
    ///   - body: Reads or changes the value. Its second argument, `timedOut`, is `true` when
    ///     `deadline` passed with `isReady` still `false`.
    /// - Returns: What `body` returns.
    package func withLock<Result>(
        waitingUntil isReady: (Value) -> Bool, deadline: Date? = nil,
        _ body: (inout Value, _ timedOut: Bool) throws -> Result
    ) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !isReady(value) {
            guard let deadline else {
                condition.wait()
                continue
            }
            if !condition.wait(until: deadline) && !isReady(value) {
                return try body(&value, true)
            }
        }
        return try body(&value, false)
    }

    /// Runs `body` on the value with the lock held, and again after each wait it asks for, until
    /// it returns a result.
    ///
    /// For waits that change the value around each wait (counting waiters, say), or that must not
    /// check the value again after a timeout. Each call of `body` sees how the wait before it
    /// ended; the lock is released only while waiting, and held from the start to the final
    /// result otherwise.
    ///
    /// - Parameter body: Reads or changes the value, then returns ``LockStep/wait(until:)`` to
    ///   release the lock until the box is woken (``signal()``, ``broadcast()``, or spuriously)
    ///   or the deadline passed, or ``LockStep/done(_:)`` to finish. Its second argument tells
    ///   how the previous wait ended (``LockWake/notWaited`` on the first call).
    /// - Returns: The result of the ``LockStep/done(_:)`` step.
    package func withLock<Result>(
        waitingAsNeeded body: (inout Value, _ wake: LockWake) throws -> LockStep<Result>
    ) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        var wake = LockWake.notWaited
        while true {
            switch try body(&value, wake) {
            case .done(let result):
                return result
            case .wait(let deadline?):
                wake = condition.wait(until: deadline) ? .woken : .timedOut
            case .wait(nil):
                condition.wait()
                wake = .woken
            }
        }
    }

    /// Wakes one thread waiting in a `withLock` method, if any.
    ///
    /// Call it inside a `withLock` body, after the change the waiter waits for, so that the
    /// change and the wake-up happen in one locked stretch.
    package func signal() { condition.signal() }

    /// Wakes every thread waiting in a `withLock` method.
    ///
    /// Call it inside a `withLock` body, after the change the waiters wait for, so that the
    /// change and the wake-ups happen in one locked stretch.
    package func broadcast() { condition.broadcast() }
}

/// What a ``LockedBox/withLock(waitingAsNeeded:)`` body asks for next.
package enum LockStep<Result> {
    /// Release the lock until the box is woken or `deadline` (if any) passed, then call the body
    /// again.
    case wait(until: Date? = nil)
    /// Stop and return `result`, the lock still held until then.
    case done(Result)
}

/// How the wait before a call of a ``LockedBox/withLock(waitingAsNeeded:)`` body ended.
package enum LockWake: Sendable {
    /// The body was not waiting: this is its first call.
    case notWaited
    /// The box was woken (by ``LockedBox/signal()``, ``LockedBox/broadcast()``, or spuriously)
    /// before the deadline.
    case woken
    /// The deadline passed.
    case timedOut
}
