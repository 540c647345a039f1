import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The seeded, short version of the differential fuzzer (`scripts/fuzz.sh SECONDS differential`):
/// generated format strings run against ``DifferentialModel``'s saved store in SQL and against its
/// unsaved twins in memory must give the same objects or the same typed error.
///
/// Every predicate comes from its own seed, printed with any disagreement, so one failure
/// replays alone: `PredicateDifferentialCheck().check(GeneratedPredicate(seed: <seed>))`.
@Suite struct PredicateDifferentialFuzzTests {
    static let baseSeeds: [UInt64] = [0xD1FF_0000_0000_0001, 0xD1FF_0000_0000_0002, 0xD1FF_0000_0000_0003]
    static let predicatesPerSeed = 1_500

    static func seed(base: UInt64, index: Int) -> UInt64 {
        var mixer = SplitMix64(seed: base ^ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        return mixer.next()
    }

    @Test(arguments: baseSeeds)
    func sqlAndMemoryAgree(baseSeed: UInt64) throws {
        let check = try PredicateDifferentialCheck()
        var disagreements = 0
        var parsed = 0
        var selective = 0
        var errors = 0
        for index in 0..<Self.predicatesPerSeed {
            let seed = Self.seed(base: baseSeed, index: index)
            let outcome = check.check(GeneratedPredicate(seed: seed))
            if outcome.parsed { parsed += 1 }
            switch outcome.sql {
            case .objects(let keys) where !keys.isEmpty: selective += 1
            case .error: errors += 1
            default: break
            }
            if !outcome.agrees {
                disagreements += 1
                if disagreements <= 5 {
                    Issue.record(
                        "SQL and memory disagree (seed 0x\(String(seed, radix: 16, uppercase: true))):\n\(outcome)")
                }
            }
        }
        #expect(disagreements == 0)
        // Most predicates must parse, resolve and select something, or the run proves little.
        #expect(parsed > Self.predicatesPerSeed * 9 / 10)
        #expect(errors < Self.predicatesPerSeed / 4)
        #expect(selective > Self.predicatesPerSeed / 3)
    }

    @Test func generationIsDeterministicAndEndsWhenTheBytesRunOut() throws {
        #expect(GeneratedPredicate(seed: 7).description == GeneratedPredicate(seed: 7).description)
        #expect(GeneratedPredicate(bytes: [1, 2, 3]).description == GeneratedPredicate(bytes: [1, 2, 3]).description)
        let check = try PredicateDifferentialCheck()
        for bytes: [UInt8] in [[], [0], [255, 255, 255, 255], Array(repeating: 6, count: 4_096)] {
            let outcome = check.check(GeneratedPredicate(bytes: bytes))
            #expect(outcome.parsed, "\(outcome)")
            #expect(outcome.agrees, "\(outcome)")
        }
    }

    @Test func aKnownPredicateSelectsTheSameKeysBothWays() throws {
        let check = try PredicateDifferentialCheck()
        let outcome = check.check(.item, "name ==[cd] %@ AND parts.@count >= 1", "ecole")
        #expect(outcome.sql == .objects([4, 5, 6]))
        #expect(outcome.memory == .objects([4, 5, 6]))
        let unknown = check.check(.owner, "nmae == 'x'")
        #expect(unknown.sql == .error(.unknownKey))
        #expect(unknown.agrees)
    }
}
