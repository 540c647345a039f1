import Foundation
import StrataTesting
import Testing

@testable import Strata

/// What the differential fuzzer found, each reduced to the smallest predicate that shows it:
/// SQL against the saved store and memory against unsaved twins must give these objects.
///
/// The keys come from ``DifferentialModel``'s fixed rows; the comment on each case says which
/// rows decide it.
@Suite struct PredicateDifferentialFindingsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var root: DifferentialModel.Root
        var format: String
        var expected: [Int]
        var testDescription: String { "\(root.rawValue): \(format)" }
    }

    static func expectAgreement(_ check: PredicateDifferentialCheck, _ finding: Case) {
        let outcome = check.check(GeneratedPredicate(finding.root, format: finding.format))
        #expect(outcome.sql == .objects(finding.expected), "\(outcome)")
        #expect(outcome.memory == .objects(finding.expected), "\(outcome)")
    }

    /// `@min`, `@max` and `@avg` in memory counted members whose value is nil (an `AttributeValue`
    /// `nil` literal made `.null` where an absent value was meant); SQL ignores `NULL`s.
    @Test(arguments: [
        // Item 1's parts have sizes 1, 2 and nil; item 3's only nil; item 11 has no parts.
        Case(root: .item, format: "parts.@min.size == 1", expected: [1, 6]),
        Case(root: .item, format: "parts.@min.size == nil", expected: [3, 11]),
        Case(root: .item, format: "parts.@max.made == nil", expected: [3, 10, 11]),
        // Items 3 and 10: every part's score is nil.
        Case(root: .item, format: "parts.@avg.score >= -0.5", expected: [1, 2, 5, 6, 7, 8, 9, 12, 13, 14, 15]),
        // Owner 1's items have prices nil, 1.5, nil and 3: the average is 2.25, not 1.125.
        Case(root: .owner, format: "items.@avg.price >= 1.5", expected: [1, 3, 4]),
    ])
    func aggregatesIgnoreNilMembers(_ finding: Case) throws {
        Self.expectAgreement(try PredicateDifferentialCheck(), finding)
    }

    /// Integer `@sum` beyond `Int64`'s range made SQLite's `SUM` fail ("integer overflow"), also
    /// when the sum only passed beyond it on the way; memory gave a rounded double. Integer
    /// `@avg` added doubles in row order in SQL. Both now share ``IntegerSum``.
    @Test(arguments: [
        // Owner 1: 0 + 1 + Int64.max + 3; owner 3: (Int64.max - 1) + (2^53 + 1) + Int64.max.
        Case(root: .owner, format: "items.@sum.quantity > 9223372036854775807", expected: [1, 3]),
        // Owner 2: -1 + Int64.min + 7 leaves the range after two items (in row order) and comes back.
        Case(root: .owner, format: "items.@sum.quantity == -9223372036854775802", expected: [2]),
        // Item 10's part sizes: Int64.max + 1 + Int64.min = 0 (items 3 and 11: no sizes, 0); item
        // 2's: Int64.max × 2 + Int64.min = Int64.max - 1.
        Case(root: .item, format: "parts.@sum.size == 0", expected: [3, 4, 8, 10, 11, 15]),
        Case(root: .item, format: "parts.@sum.size == 9223372036854775807", expected: []),
        Case(root: .item, format: "parts.@sum.size == 9223372036854775806", expected: [2]),
        // Item 6's part sizes: (2^53 + 1) + 1 + 2 = 2^53 + 4, whose third is exactly 3002399751580332.
        Case(root: .item, format: "parts.@avg.size == 3002399751580332", expected: [6]),
    ])
    func integerSumsAreExact(_ finding: Case) throws {
        Self.expectAgreement(try PredicateDifferentialCheck(), finding)
    }

    /// A double `@sum` or `@avg` of `+infinity` and `-infinity` is NaN, which SQLite returns as
    /// `NULL`; memory kept NaN, which is neither nil nor comparable.
    @Test(arguments: [
        // Item 4's parts score +infinity and -infinity; owner 3's items weigh +infinity, -infinity
        // and 1e-300.
        Case(root: .item, format: "parts.@sum.score == nil", expected: [4]),
        Case(root: .item, format: "parts.@avg.score == nil", expected: [3, 4, 10, 11]),
        Case(root: .owner, format: "items.@sum.weight != nil", expected: [1, 2, 4, 5]),
    ])
    func aNaNSumIsNil(_ finding: Case) throws {
        Self.expectAgreement(try PredicateDifferentialCheck(), finding)
    }

    /// Double `@sum` and `@avg` depended on the order of the members: SQLite adds them in row
    /// order, memory in the relationship's order (the twins' is reversed), rounding after each.
    /// Both now add exactly and round once (``DoubleSum``).
    @Test(arguments: [
        // Item 2's parts score 1e308, 1e308 and -1e308: in row order the sum overflowed to infinity.
        Case(root: .item, format: "parts.@sum.score == 1e308", expected: [2]),
        Case(root: .item, format: "parts.@avg.score >= 1e308", expected: []),
        // Item 1's parts score 0.1, 0.2 and 0.3: 0.6000000000000001 in row order, 0.6 reversed.
        Case(root: .item, format: "parts.@sum.score == 0.6", expected: [1]),
        Case(root: .item, format: "parts.@avg.score == 0.19999999999999998", expected: [1]),
    ])
    func doubleSumsDoNotDependOnOrder(_ finding: Case) throws {
        Self.expectAgreement(try PredicateDifferentialCheck(), finding)
    }

    @Test func doubleSumsAreExactAndRoundedOnce() {
        func sum(_ values: [Double]) -> Double {
            var sum = DoubleSum()
            for value in values { sum.add(value) }
            return sum.value
        }
        #expect(sum([0.1, 0.2, 0.3]) == 0.6)
        #expect(sum([1e308, 1e308, -1e308]) == 1e308)
        #expect(sum([1e308, 1e308]) == .infinity)
        #expect(sum([1, 0x1p-60, -1]) == 0x1p-60)
        #expect(sum([.leastNonzeroMagnitude, .leastNonzeroMagnitude]) == 2 * .leastNonzeroMagnitude)
        #expect(sum([-2.5, 1]) == -1.5)
        #expect(sum([]) == 0)
        #expect(sum([.infinity, 1]) == .infinity)
        #expect(sum([.infinity, -.infinity]).isNaN)
        // Ties round to even: 2^53 + 1 is halfway between 2^53 and 2^53 + 2.
        #expect(sum([0x1p53, 1]) == 0x1p53)
        #expect(sum([0x1p53, 3]) == 0x1p53 + 4)
        var empty = DoubleSum()
        #expect(empty.average == .null)
        empty.add(.nan)
        #expect(empty.sum == .null)
    }
}
