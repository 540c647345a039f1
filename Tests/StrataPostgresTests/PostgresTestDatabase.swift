import Foundation
import Logging
import PostgresNIO
import Strata
import Testing

@testable import StrataPostgres

/// The PostgreSQL server the tests use: the one `scripts/test.sh` started (its URL in
/// `STRATA_POSTGRES_URL`), or else one this process starts with `scripts/postgres.sh start`.
/// When neither works, every PostgreSQL test fails: they are never skipped.
enum PostgresTestServer {
    static let url: Result<String, StrataError> = {
        if let url = ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"], !url.isEmpty { return .success(url) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appendingPathComponent("scripts/postgres.sh")
        process.arguments = ["start"]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return .failure(StrataError(.connectionFailed, "Could not run scripts/postgres.sh: \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let url = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !url.isEmpty else {
            return .failure(
                StrataError(.connectionFailed, "scripts/postgres.sh start failed (status \(process.terminationStatus)); see its messages."))
        }
        return .success(url)
    }()

    /// The test server's configuration, with `schemaName`.
    static func configuration(schemaName: String = "public") throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: url.get())
        configuration.schemaName = schemaName
        configuration.tlsMode = .disable
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
            configuration: configuration, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            sessionSetup: ["SET search_path TO \(quoted(schemaName))"])
        defer { pool.close() }
        return try pool.withConnection { try $0.query(sql) }
    }

    deinit {
        _ = try? execute("DROP SCHEMA IF EXISTS \(quoted(schemaName)) CASCADE")
    }
}
