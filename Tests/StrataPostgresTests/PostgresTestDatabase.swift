import Foundation
import Logging
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

extension PostgresTestServer {
    /// The test server's configuration, with `schemaName` and the tests' ``connectTimeout``.
    static func configuration(schemaName: String = "public") throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: url())
        configuration.schemaName = schemaName
        configuration.tlsMode = .disable
        configuration.pool.connectTimeout = connectTimeout
        return configuration
    }
}

/// A PostgreSQL schema of its own for one test, dropped with everything in it when the value is
/// released: the PostgreSQL counterpart of `TemporaryDirectory`.
final class PostgresTestDatabase: Sendable {
    let schemaName: String
    let configuration: PostgresConfiguration

    init() throws {
        schemaName = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
        configuration = try PostgresTestServer.configuration(schemaName: schemaName)
    }

    /// A description of the store in this schema.
    func description(persistentHistoryTracking: Bool = false, configuration storeConfiguration: String? = nil) -> StoreDescription {
        .postgres(configuration, configuration: storeConfiguration, persistentHistoryTracking: persistentHistoryTracking)
    }

    /// Runs SQL in the test's schema, as another program would.
    @discardableResult
    func execute(_ sql: String) throws -> PostgresQueryResult {
        let pool = try PostgresConnectionPool(
            configuration: configuration, instrumentation: .silent(kind: "postgres", name: "test"),
            sessionSetup: ["SET search_path TO \(quoted(schemaName))"])
        defer { pool.close() }
        return try pool.withConnection { try $0.query(sql) }
    }

    deinit {
        _ = try? execute("DROP SCHEMA IF EXISTS \(quoted(schemaName)) CASCADE")
    }
}
