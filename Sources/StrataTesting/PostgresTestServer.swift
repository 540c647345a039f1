import Foundation
import Strata

/// The PostgreSQL server tests run against: the one in `STRATA_POSTGRES_URL` (which Strata's
/// `scripts/test.sh` starts and exports), or else — in Strata's own checkout — one this process
/// starts once with `scripts/postgres.sh start`.
///
/// ```swift
/// let url = try PostgresTestServer.url()   // postgres://strata:…@127.0.0.1:PORT/strata
/// ```
///
/// When neither is available, ``url()`` throws, so that PostgreSQL tests fail rather than pass
/// without a server: they are never skipped.
public enum PostgresTestServer {
    private static let found: Result<String, StrataError> = {
        if let url = ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"], !url.isEmpty { return .success(url) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/postgres.sh")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            return .failure(
                StrataError(.storeError, "No PostgreSQL server for the tests: set STRATA_POSTGRES_URL to a postgres:// URL."))
        }
        let process = Process()
        process.executableURL = script
        process.arguments = ["start"]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return .failure(StrataError(.storeError, "Could not run \(script.path): \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let url = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !url.isEmpty else {
            return .failure(
                StrataError(
                    .storeError, "scripts/postgres.sh start failed (status \(process.terminationStatus)); see its messages."))
        }
        return .success(url)
    }()

    /// The server's URL.
    ///
    /// - Throws: ``StrataError`` when there is no server and none could be started.
    public static func url() throws -> String { try found.get() }

    /// How long a test's connection may take to open: minutes, not the 10-second default. On a
    /// machine busy with other suites (or under ThreadSanitizer) the client's SCRAM handshake,
    /// computed on a shared event loop, can queue behind dozens of others; the limit is there
    /// only to detect a server that never answers.
    public static let connectTimeout: Duration = .seconds(300)

    /// The server's URL for a store in `schema`, over plain TCP, with ``connectTimeout``:
    /// the URL to hand the `strata` tool or `StoreDescription.postgres(url:)`.
    ///
    /// - Throws: ``StrataError`` when there is no server and none could be started.
    public static func url(schema: String) throws -> String {
        try url() + "?sslmode=disable&schema=\(schema)&connect_timeout=\(connectTimeout.components.seconds)"
    }
}
