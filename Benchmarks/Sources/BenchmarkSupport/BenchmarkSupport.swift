import Foundation

// What both benchmark programs (SQLite and PostgreSQL) share: checks, the expected values of
// the workloads' data, and the peak-memory measurement.

/// A benchmark that could not run, or whose result was wrong.
package struct BenchmarkError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Throws unless `actual` is `expected`, naming the check.
package func expect<Value: Equatable>(_ actual: Value, _ expected: Value, _ what: String) throws {
    guard actual == expected else { throw BenchmarkError("\(what): got \(actual), expected \(expected)") }
}

/// The sum of every attribute of `count` rows as W1 writes them: the values 0..<10·count.
package func expectedIntsTotal(count: Int) -> Int64 {
    let values = Int64(count) * 10
    return values * (values - 1) / 2
}

/// The values of item number `row`, for every contender.
package enum ItemValues {
    package static func bucket(_ row: Int) -> Int64 { Int64(row % 100) }
    package static func price(_ row: Int) -> Int64 { Int64(row % 1_000) }
    package static func quantity(_ row: Int) -> Int64 { Int64(row % 7) }
    package static func serial(_ row: Int) -> Int64 { Int64(row) }

    /// The sum of `price` over the first `count` rows, or over those of one bucket; cheap, since
    /// the checks that call it run inside the timed work.
    package static func priceSum(count: Int, bucket: Int64? = nil) -> Int64 {
        var sum: Int64 = 0
        for row in stride(from: Int(bucket ?? 0), to: count, by: bucket == nil ? 1 : 100) { sum += price(row) }
        return sum
    }
}

/// W4's bucket.
package let fetchedBucket: Int64 = 42

/// Resets the kernel's peak-RSS counter for this process (Linux), so each run reports its own peak.
/// Freed heap memory goes back to the system first, so that the peak reflects the run rather than
/// what earlier workloads and setups left in malloc's free lists.
package func resetPeakMemory() {
    _ = mallocTrim?(0)
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// glibc's `malloc_trim`, which Swift's Glibc module does not import (it lives in malloc.h).
private let mallocTrim: (@convention(c) (Int) -> Int32)? = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim").map {
    unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
}

/// The peak resident memory since the last reset, in MB (VmHWM), or 0 where unknown.
package func peakMemory() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes / 1024
}
