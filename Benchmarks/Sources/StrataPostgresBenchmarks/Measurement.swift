import BenchmarkSupport
import Foundation

// Timing, memory and checks, as the SQLite benchmarks measure them (StrataBenchmarks/main.swift).

struct Measurement {
    var seconds: Double
    var peakMegabytes: Double
}


func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func measure(_ body: () throws -> Void) rethrows -> Measurement {
    resetPeakMemory()
    let start = ContinuousClock.now
    try body()
    let elapsed = seconds(ContinuousClock.now - start)
    return Measurement(seconds: elapsed, peakMegabytes: peakMemory())
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// The value below which `fraction` of `values` lie (nearest rank).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}

/// Runs async work (postgres-nio, Fluent) to completion from synchronous code, which blocks
/// meanwhile. The benchmark's synchronous code runs on the main thread, never on Swift's
/// cooperative pool, so the work it waits for always has threads to run on.
func waitFor<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let completion = Completion<Value>()
    Task.detached {
        do {
            completion.finish(.success(try await body()))
        } catch {
            completion.finish(.failure(error))
        }
    }
    return try completion.wait()
}

/// A result handed from one thread to another.
///
/// `@unchecked Sendable`: `result` is read and written only while `condition` is locked.
final class Completion<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    func finish(_ result: Result<Value, any Error>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    func wait() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }
}
