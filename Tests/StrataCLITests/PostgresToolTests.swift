import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// The tool's commands on a PostgreSQL store, named by a `postgres://` URL: what they do on an
/// SQLite file, they do on a database (each test in a PostgreSQL schema of its own).
@Suite(.timeLimit(.minutes(10))) struct PostgresToolTests {
    /// A store of the demo model in a schema of its own: two directors, three movies.
    private static func makeStore(history: Bool = false) throws -> (url: String, schema: String) {
        let schema = "tool_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let url = try PostgresTestServer.url(schema: schema)
        let container = try PersistentContainer(
            name: "Tool", entities: [Movie.self, Director.self, Critic.self],
            storeDescriptions: [try .postgres(url: url, persistentHistoryTracking: history)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.transactionAuthor = "seeder"
        let mann = Director(context: context)
        mann.name = "Michael Mann"
        let frankenheimer = Director(context: context)
        frankenheimer.name = "John Frankenheimer"
        for (title, director) in [("Heat", mann), ("Collateral", mann), ("Ronin", frankenheimer)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
        }
        try context.save()
        return (url, String(schema))
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// Runs SQL on the test server with `psql`, in `schema`.
    private func psql(_ sql: String, schema: String) async throws {
        let server = try PostgresTestServer.url()
        try await offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", server + "?sslmode=disable", "-v", "ON_ERROR_STOP=1", "-qc", "SET search_path TO \(schema); \(sql)"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "psql failed: \(sql)")
        }
    }

    @Test func infoQueryExportAndSchema() async throws {
        let (url, schemaName) = try Self.makeStore()
        // Another program's table in the store's schema is not the store's size.
        try await psql(
            "CREATE TABLE unrelated AS SELECT i, md5(i::text) AS filler FROM generate_series(1, 50000) AS i", schema: schemaName)
        let info = try await strata(["info", url, "--json"])
        #expect(info.status == 0, "\(info.errorOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(info.output.utf8)) as? [String: Any])
        #expect(report["kind"] as? String == "Strata PostgreSQL store")
        let password = try #require(URLComponents(string: url)?.password)
        #expect(!info.output.contains(password), "no password in the listing")
        let counts = (report["entities"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
            $0[$1["entity"] as? String ?? ""] = ($1["objects"] as? NSNumber)?.intValue
        }
        #expect(counts["Movie"] == 3 && counts["Director"] == 2)
        // Tables and their indexes take at least a page each on the server.
        let size = (report["storageSize"] as? NSNumber)?.intValue ?? 0
        #expect(size >= 8192 * 4 && size < 2_000_000, "\(info.output)")
        let text = try await strata(["info", url])
        #expect(text.output.contains(" on the server (tables and indexes)"), "\(text.output)")

        let query = try await strata([
            "query", url, "Movie", "--where", #"director.name BEGINSWITH[c] "michael""#, "--sort", "-title", "--select", "title",
        ])
        #expect(query.status == 0, "\(query.errorOutput)")
        #expect(query.output == #"{"title":"Heat"}"# + "\n" + #"{"title":"Collateral"}"# + "\n")
        let count = try await strata(["query", url, "Movie", "--count"])
        #expect(count.output == #"{"count":3}"# + "\n")
        let grouped = try await strata(["query", url, "Movie", "--group-by", "director.name", "--csv"])
        #expect(grouped.output == "director.name,count\r\nJohn Frankenheimer,1\r\nMichael Mann,2\r\n", "\(grouped.output)")
        let bad = try await strata(["query", url, "Movie", "--where", "titel == 1"])
        #expect(bad.status == 1)
        #expect(bad.errorOutput.contains("Did you mean 'title'?"), "\(bad.errorOutput)")

        let export = try await strata(["export", url, "--entity", "Movie"])
        #expect(export.status == 0, "\(export.errorOutput)")
        #expect(export.output.split(separator: "\n").count == 3)

        let schema = try await strata(["schema", url, "--format", "mermaid"])
        #expect(schema.status == 0, "\(schema.errorOutput)")
        #expect(schema.output.contains("Movie") && schema.output.contains("Director"))
    }

    @Test func importWritesAndCheckRepairs() async throws {
        let (url, schema) = try Self.makeStore()
        let directory = try TemporaryDirectory()
        let file = directory.file("movies.ndjson")
        try """
            {"id":"\(UUID())","title":"Thief","genres":["crime"]}
            {"id":"\(UUID())","title":"Manhunter","genres":[]}

            """.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await strata(["import", url, file.path, "--entity", "Movie"])
        #expect(imported.status == 0, "\(imported.errorOutput)")
        let count = try await strata(["query", url, "Movie", "--count"])
        #expect(count.output == #"{"count":5}"# + "\n")

        let clean = try await strata(["check", url])
        #expect(clean.status == 0, "\(clean.output)\(clean.errorOutput)")
        try await psql(#"UPDATE "Movie" SET "director" = 987654 WHERE "title" = 'Heat'"#, schema: schema)
        let damaged = try await strata(["check", url, "--json"])
        #expect(damaged.status == 2, "\(damaged.errorOutput)")
        #expect(damaged.output.contains("danglingToOne"), "\(damaged.output)")
        let repaired = try await strata(["check", url, "--repair", "--yes"])
        #expect(repaired.status == 0, "\(repaired.output)\(repaired.errorOutput)")
        let heat = try await strata(["query", url, "Movie", "--where", #"title == "Heat""#, "--select", "title,director.name"])
        #expect(heat.output == #"{"title":"Heat","director.name":null}"# + "\n", "\(heat.output)")
    }

    @Test func watchHearsAnotherServersCommit() async throws {
        let (url, _) = try Self.makeStore()
        let watch = try InteractiveStrata(["watch", url, "Movie", "--count", "--updates", "2"])
        // Wait for the first result before writing, so that the write is a change it hears.
        try #require(
            try await watch.waitForOutput { _ in !watch.outputLines.isEmpty }, "no first result: \(watch.errorText)")
        #expect(watch.outputText == #"[{"count":3}]"# + "\n")

        let container = try PersistentContainer(
            name: "Tool", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [try .postgres(url: url)])
        let context = container.newBackgroundContext()
        Movie(context: context).title = "Thief"
        try context.save()
        try container.close()

        let status = try await watch.waitForExit()
        #expect(status == 0, "\(watch.errorText)")
        #expect(watch.outputText == #"[{"count":3}]"# + "\n" + #"[{"count":4}]"# + "\n")
    }

    @Test func historyAndVersionsTakeURLs() async throws {
        let (url, _) = try Self.makeStore(history: true)
        let history = try await strata(["history", url, "--json"])
        #expect(history.status == 0, "\(history.errorOutput)")
        #expect(history.output.contains(#""author" : "seeder""#), "\(history.output)")
        let info = try await strata(["info", url])
        #expect(info.output.contains("by seeder"), "\(info.output)")

        let missing = try await strata(["info", try PostgresTestServer.url(schema: "nothing_here_\(UInt32.random(in: 0...UInt32.max))")])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.contains("no Strata store"), "\(missing.errorOutput)")
        #expect(missing.errorOutput.split(separator: "\n").count == 1)
    }
}
