import Foundation
import Strata
import StrataTesting
import Testing

/// The store conformance suite, run against every kind of store Strata ships.
@Suite struct StoreConformanceTests {
    @Test(arguments: StoreKind.allCases, StoreConformanceSuite.Check.allCases)
    func conforms(kind: StoreKind, check: StoreConformanceSuite.Check) throws {
        let directory = try TemporaryDirectory()
        let suite = StoreConformanceSuite { types, options in
            try kind.makeContainer(
                types, in: directory, name: "Conformance-\(UUID().uuidString)",
                persistentHistoryTracking: options.persistentHistoryTracking)
        }
        try suite.run(check)
    }
}
