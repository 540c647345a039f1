import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The migration conformance suite, run against the SQLite file store (an in-memory store
/// lives only as long as its container, so there is nothing to migrate).
@Suite struct MigrationConformanceTests {
    @Test(arguments: MigrationConformanceSuite.Check.allCases)
    func conforms(check: MigrationConformanceSuite.Check) throws {
        let directory = try TemporaryDirectory()
        let suite = MigrationConformanceSuite {
            .sqlite(directory.url.appendingPathComponent("Migration-\(UUID().uuidString).sqlite"))
        }
        try suite.run(check)
    }
}
