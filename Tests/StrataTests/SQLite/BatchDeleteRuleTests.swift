import Foundation
import StrataTesting
import Testing

@testable import Strata

/// An owner whose parts deny its deletion, and whose holders cascade to those same parts.
@Entity final class RuleOwner: ManagedObject {
    var name: String = ""
    @Relationship(deleteRule: .deny, inverse: \RulePart.owner) var parts: Set<RulePart> = []
    @Relationship(deleteRule: .cascade, inverse: \RuleHolder.owner) var holders: Set<RuleHolder> = []
}

@Entity final class RuleHolder: ManagedObject {
    var owner: RuleOwner?
    @Relationship(deleteRule: .cascade, inverse: \RulePart.holder) var parts: Set<RulePart> = []
}

@Entity final class RulePart: ManagedObject {
    var owner: RuleOwner?
    var holder: RuleHolder?
}

/// Batch deletes judge deny rules on everything the request deletes, cascades included, as a
/// context's save does.
@Suite struct BatchDeleteRuleTests {
    @Test(arguments: StoreKind.allCases)
    func aDenyRuleIsJudgedAfterEveryCascade(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let container = try kind.makeContainer([RuleOwner.self], in: directory)
        let context = container.newBackgroundContext()
        let owner = RuleOwner(context: context)
        owner.name = "reached"
        let holder = RuleHolder(context: context)
        holder.owner = owner
        let part = RulePart(context: context)
        part.owner = owner
        part.holder = holder  // the owner's cascade reaches the part through the holder
        let lonely = RuleOwner(context: context)
        lonely.name = "not reached"
        RulePart(context: context).owner = lonely  // nothing cascades to this part
        try context.save()

        // The part that denies is deleted by a cascade of the same request: allowed.
        let reached = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<RuleOwner>(predicate: \.name == "reached")))
        #expect(reached.count == 1)
        let fresh = container.newBackgroundContext()
        #expect(try fresh.count(for: RuleHolder.self) == 0)
        #expect(try fresh.count(for: RulePart.self) == 1)

        // A part nothing cascades to still denies, and nothing is deleted.
        let error = #expect(throws: StrataError.self) {
            try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<RuleOwner>()))
        }
        #expect(error?.code == .deleteDenied)
        #expect(try fresh.count(for: RuleOwner.self) == 1)
    }
}
