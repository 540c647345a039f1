import Foundation

/// The sum and average of 64-bit integers, one definition for `@sum` and `@avg` in memory and in
/// SQL (the `strata_integer_sum` and `strata_integer_avg` aggregates).
///
/// The sum is exact whatever the order of the values: it is kept as a wrapped `Int64` and the
/// number of times it wrapped, so a sum that leaves `Int64`'s range on the way and comes back
/// (`Int64.max + 1 - 2`) is still the exact integer. A sum beyond `Int64`'s range is the nearest
/// `Double` (SQLite's own `SUM` fails with "integer overflow" instead, and its `AVG` adds the
/// values as doubles in row order, so neither can agree with memory).
struct IntegerSum {
    /// The sum modulo 2^64, as a signed integer.
    private var wrapped: Int64 = 0
    /// How many times 2^64 the true sum differs from `wrapped`.
    private var wraps = 0
    /// How many values were added.
    private(set) var count = 0

    init() {}

    mutating func add(_ value: Int64) {
        let (sum, overflow) = wrapped.addingReportingOverflow(value)
        if overflow { wraps += value < 0 ? -1 : 1 }
        wrapped = sum
        count += 1
    }

    /// The exact sum as a `Double` (rounded once when it is beyond 2^53).
    private var doubleValue: Double {
        wraps == 0 ? Double(wrapped) : Double(wraps) * 0x1p64 + Double(wrapped)
    }

    /// The sum: an integer when it fits in `Int64`, else the nearest `Double`; 0 for no values.
    var sum: AttributeValue {
        wraps == 0 ? .integer(wrapped) : .double(doubleValue)
    }

    /// The average as a `Double`, or `nil` for no values.
    var average: AttributeValue {
        count == 0 ? .null : .double(doubleValue / Double(count))
    }
}
