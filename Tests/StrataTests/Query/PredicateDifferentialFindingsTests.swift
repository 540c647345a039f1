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
}
