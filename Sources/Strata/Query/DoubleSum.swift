import Foundation

/// The sum and average of doubles, one definition for `@sum` and `@avg` in memory and in SQL
/// (the `strata_double_sum` and `strata_double_avg` aggregates).
///
/// Adding doubles one after the other rounds at every step, so the result depends on the order
/// of the values: `1e308 + 1e308 - 1e308` is infinity, `-1e308 + 1e308 + 1e308` is `1e308`.
/// SQLite adds a relationship's members in row order, memory in the relationship's order, which
/// unsaved changes make different. This sum is exact instead — every finite double is an
/// integer multiple of 2^-1074, and a fixed-point accumulator wide enough for all of them holds
/// the sum without rounding — and is rounded once, to nearest, at the end: the same for any
/// order, and the double closest to the true sum.
///
/// An infinity makes the sum that infinity; infinities of both signs, or NaN, make it NaN,
/// which ``sum`` and ``average`` report as `nil` (SQLite returns NaN as `NULL`).
struct DoubleSum {
    /// Two's complement fixed point, least significant word first; bit 0 is worth 2^-1074.
    /// Finite doubles reach bit 2097; 34 words leave room for 2^63 values and the sign.
    private var words = [UInt64](repeating: 0, count: 34)
    private var hasPositiveInfinity = false
    private var hasNegativeInfinity = false
    private var hasNaN = false
    /// How many values were added.
    private(set) var count = 0

    init() {}

    mutating func add(_ value: Double) {
        count += 1
        guard value.isFinite else {
            if value.isNaN {
                hasNaN = true
            } else if value < 0 {
                hasNegativeInfinity = true
            } else {
                hasPositiveInfinity = true
            }
            return
        }
        let bits = value.bitPattern
        let biasedExponent = Int((bits >> 52) & 0x7FF)
        var significand = bits & (1 << 52 - 1)
        if significand == 0 && biasedExponent == 0 { return }
        // value = significand × 2^(shift - 1074): subnormals have shift 0, normal numbers an
        // implicit leading bit.
        var shift = 0
        if biasedExponent > 0 {
            significand |= 1 << 52
            shift = biasedExponent - 1
        }
        let index = shift / 64
        let offset = shift % 64
        let low = significand << offset
        let high = offset == 0 ? 0 : significand >> (64 - offset)
        if value < 0 {
            subtract(low, high, at: index)
        } else {
            add(low, high, at: index)
        }
    }

    private mutating func add(_ low: UInt64, _ high: UInt64, at index: Int) {
        var carry = false
        (words[index], carry) = words[index].addingReportingOverflow(low)
        var next: UInt64
        var overflow: Bool
        (next, overflow) = words[index + 1].addingReportingOverflow(high)
        if carry {
            let (sum, again) = next.addingReportingOverflow(1)
            next = sum
            overflow = overflow || again
        }
        words[index + 1] = next
        var position = index + 2
        while overflow && position < words.count {
            (words[position], overflow) = words[position].addingReportingOverflow(1)
            position += 1
        }
    }

    private mutating func subtract(_ low: UInt64, _ high: UInt64, at index: Int) {
        var borrow = false
        (words[index], borrow) = words[index].subtractingReportingOverflow(low)
        var next: UInt64
        var overflow: Bool
        (next, overflow) = words[index + 1].subtractingReportingOverflow(high)
        if borrow {
            let (difference, again) = next.subtractingReportingOverflow(1)
            next = difference
            overflow = overflow || again
        }
        words[index + 1] = next
        var position = index + 2
        while overflow && position < words.count {
            (words[position], overflow) = words[position].subtractingReportingOverflow(1)
            position += 1
        }
    }

    /// The exact sum rounded to the nearest double (ties to even); 0 for no values.
    var value: Double {
        if hasNaN || (hasPositiveInfinity && hasNegativeInfinity) { return .nan }
        if hasPositiveInfinity { return .infinity }
        if hasNegativeInfinity { return -.infinity }
        var magnitude = words
        let isNegative = (magnitude[magnitude.count - 1] >> 63) == 1
        if isNegative {
            // Two's complement: invert and add one.
            var carry = true
            for index in magnitude.indices {
                magnitude[index] = ~magnitude[index]
                if carry { (magnitude[index], carry) = magnitude[index].addingReportingOverflow(1) }
            }
        }
        guard let top = magnitude.lastIndex(where: { $0 != 0 }) else { return 0 }
        let highestBit = top * 64 + (63 - magnitude[top].leadingZeroBitCount)
        let sign: FloatingPointSign = isNegative ? .minus : .plus
        if highestBit < 53 {
            // Fewer than 54 significant bits above 2^-1074: exact.
            return Double(sign: sign, exponent: -1074, significand: Double(magnitude[0]))
        }
        let lowestKept = highestBit - 52
        var significand = Self.bits(of: magnitude, from: lowestKept, count: 53)
        let roundBit = Self.bits(of: magnitude, from: lowestKept - 1, count: 1) == 1
        let sticky = Self.anyBit(of: magnitude, below: lowestKept - 1)
        var exponent = lowestKept - 1074
        if roundBit && (sticky || significand & 1 == 1) {
            significand += 1
            if significand == 1 << 53 {
                significand = 1 << 52
                exponent += 1
            }
        }
        // Exact up to the scaling, which gives infinity beyond the largest finite double.
        return Double(sign: sign, exponent: exponent, significand: Double(significand))
    }

    /// The sum for `@sum`: 0 for no values, `nil` for NaN.
    var sum: AttributeValue {
        let total = value
        return total.isNaN ? .null : .double(total)
    }

    /// The average for `@avg` (the rounded sum divided by the count): `nil` for no values or NaN.
    var average: AttributeValue {
        let mean = value / Double(count)
        return count == 0 || mean.isNaN ? .null : .double(mean)
    }

    /// `count` (≤ 64) bits starting at bit `start`, as an integer.
    private static func bits(of words: [UInt64], from start: Int, count: Int) -> UInt64 {
        let index = start / 64
        let offset = start % 64
        var result = words[index] >> offset
        if offset > 0, index + 1 < words.count { result |= words[index + 1] << (64 - offset) }
        return count == 64 ? result : result & (1 << count - 1)
    }

    /// Whether any bit below `end` is set.
    private static func anyBit(of words: [UInt64], below end: Int) -> Bool {
        guard end > 0 else { return false }
        let index = end / 64
        for word in words[..<index] where word != 0 { return true }
        let offset = end % 64
        return offset > 0 && words[index] & (1 << offset - 1) != 0
    }
}
