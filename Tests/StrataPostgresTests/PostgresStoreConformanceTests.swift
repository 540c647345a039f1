import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// The store conformance suite, run against PostgreSQL: the same checks as for SQLite.
@Suite struct PostgresStoreConformanceTests {
    @Test(arguments: StoreConformanceSuite.Check.allCases)
    func conforms(check: StoreConformanceSuite.Check) async throws {
        // Each container the suite asks for gets a store of its own, as SQLite's get a file each.
        try await offThePool {
            let databases = Databases()
            let suite = StoreConformanceSuite { types, options in
                let database = try databases.make()
                return try PersistentContainer(
                    name: "Conformance", entities: types,
                    storeDescriptions: [database.description(persistentHistoryTracking: options.persistentHistoryTracking)])
            }
            try suite.run(check)
        }
    }
}

/// The schemas a test made, dropped when the test ends.
final class Databases: Sendable {
    private let made = LockedBox<[PostgresTestDatabase]>([])

    func make() throws -> PostgresTestDatabase {
        let database = try PostgresTestDatabase()
        made.withLock { $0.append(database) }
        return database
    }
}
