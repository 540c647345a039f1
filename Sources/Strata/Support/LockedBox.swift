import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is safe here: the only access to `value` is through `withLock`, which
/// holds `lock` for the whole closure, so no two threads ever touch `value` at once.
package final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
