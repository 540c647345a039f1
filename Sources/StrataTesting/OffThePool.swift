import Foundation
import Strata

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
