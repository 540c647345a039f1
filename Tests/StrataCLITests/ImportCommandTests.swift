import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata import` run as a process: round trips with `strata export`, type checks with the
/// line of the bad record, all or nothing, conflicts, and the other entities of a file.
@Suite(.timeLimit(.minutes(10))) struct ImportCommandTests {
    /// An empty store of the demo model.
    private static func makeStore(_ url: URL, movies: [(title: String, id: UUID)] = []) throws {
        let container = try PersistentContainer(
            name: "Import", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        for (title, id) in movies {
            let movie = Movie(context: context)
            movie.title = title
            movie.id = id
        }
        try context.save()
        try container.close()
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// The titles in a store, sorted.
    private func titles(_ store: URL) async throws -> [String] {
        let result = try await strata(["query", store.path, "Movie", "--select", "title", "--sort", "title"])
        #expect(result.status == 0, "\(result.errorOutput)")
        return try result.output.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["title"] as? String)
        }
    }

    @Test(arguments: ["ndjson", "json", "csv"])
    func anExportImportsBackWithTheSameValues(format: String) async throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("Source.sqlite")
        let container = try PersistentContainer(
            name: "Import", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(source)])
        let context = container.newBackgroundContext()
        let values: [(String, String?, String, [String])] = [
            ("Heat", "1995-12-15T10:30:00.25Z", "187436818.125", ["crime", "drama"]),
            ("Ronin, \"the\" remake\nsecond line", nil, "0.1", []),
            ("Été", "1969-07-20T20:17:40.123456Z", "-12.000000000000000000001", ["ünïcode"]),
        ]
        for (title, released, gross, genres) in values {
            let movie = Movie(context: context)
            movie.title = title
            movie.releaseDate = released.flatMap(ValueText.parseDate)
            movie.boxOffice = try #require(Decimal(string: gross))
            movie.genres = genres
        }
        try context.save()
        try container.close()

        let file = directory.file("movies.\(format)")
        let exported = try await strata(["export", source.path, "--entity", "Movie", "--format", format, "--output", file.path])
        #expect(exported.status == 0, "\(exported.errorOutput)")
        let target = directory.file("Target.sqlite")
        try Self.makeStore(target)
        let imported = try await strata(["import", target.path, file.path, "--entity", "Movie"])
        #expect(imported.status == 0, "\(imported.errorOutput)")
        #expect(imported.errorOutput.contains("Imported 3 records into Movie."))
        #expect(imported.errorOutput.contains("_id"))  // skipped, and said so

        // Every attribute reads back equal, through the framework (not the tool).
        func read(_ url: URL) throws -> [[String]] {
            let container = try PersistentContainer(
                name: "Import", entities: [Movie.self, Director.self, Critic.self],
                storeDescriptions: [.sqlite(url, isReadOnly: true)])
            defer { try? container.close() }
            let movies = try container.newBackgroundContext().fetch(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]))
            return movies.map { movie in
                [
                    movie.id.uuidString, movie.title, movie.releaseDate.map { "\($0.timeIntervalSince1970)" } ?? "nil",
                    "\(movie.boxOffice)", movie.genres.joined(separator: "|"),
                ]
            }
        }
        let original = try read(source)
        let copy = try read(target)
        #expect(copy == original)
    }

    @Test func aBadRecordStopsTheImportWithItsLineAndWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Movies.sqlite")
        try Self.makeStore(store, movies: [("Kept", UUID())])
        let cases: [(lines: [String], message: String)] = [
            ([#"{"id":"\#(UUID())","title":"A","genres":[]}"#, #"{"id":"\#(UUID())","title":"B","genres":[],"boxOffice":"lots"}"#], "movies.ndjson:2:"),
            ([#"{"id":"\#(UUID())","titel":"A","genres":[]}"#], "Did you mean 'title'?"),
            ([#"{"id":"not a uuid","title":"A","genres":[]}"#], "movies.ndjson:1:"),
            ([#"{"title":"No id","genres":[]}"#], "Movie.id is required"),
            // The Swift default of a Codable attribute (`= []`) is not in the schema.
            ([#"{"id":"\#(UUID())","title":"No genres"}"#], "Movie.genres is required and has no default value"),
            ([#"{"id":"\#(UUID())","title":"A","genres":[],"releaseDate":"yesterday"}"#], "movies.ndjson:1:"),
            ([#"{"id":"\#(UUID())","title":null,"genres":[]}"#], "is required, but the record has null"),
            ([#"{"id":"\#(UUID())","title":"A","genres":[]}"#, #"{"id":"\#(UUID())","title":"B","genres":[]"#], "movies.ndjson:2:"),
        ]
        for (lines, message) in cases {
            let file = directory.file("movies.ndjson")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let result = try await strata(["import", store.path, file.path, "--entity", "Movie"])
            #expect(result.status == 1, "\(lines)")
            let errorLines = result.errorOutput.split(separator: "\n")
            #expect(errorLines.count == 1, "\(result.errorOutput)")
            #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)")
            #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
            #expect(try await titles(store) == ["Kept"])
        }
    }

    @Test func conflictsFailKeepOrReplace() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Movies.sqlite")
        let shared = UUID()
        try Self.makeStore(store, movies: [("Stored", shared)])
        let file = directory.file("movies.ndjson")
        try """
            {"id":"\(shared)","title":"Imported","genres":[]}
            {"id":"\(UUID())","title":"New","genres":[]}

            """.write(to: file, atomically: true, encoding: .utf8)

        let failed = try await strata(["import", store.path, file.path, "--entity", "Movie"])
        #expect(failed.status == 1)
        #expect(failed.errorOutput.contains("constraint") || failed.errorOutput.contains("unique"), "\(failed.errorOutput)")
        #expect(try await titles(store) == ["Stored"])

        let kept = try await strata(["import", store.path, file.path, "--entity", "Movie", "--on-conflict", "keep"])
        #expect(kept.status == 0, "\(kept.errorOutput)")
        #expect(try await titles(store) == ["New", "Stored"])

        try """
            {"id":"\(shared)","title":"Replaced","genres":[]}

            """.write(to: file, atomically: true, encoding: .utf8)
        let replaced = try await strata(["import", store.path, file.path, "--entity", "Movie", "--upsert"])
        #expect(replaced.status == 0, "\(replaced.errorOutput)")
        #expect(try await titles(store) == ["New", "Replaced"])
    }

    @Test func recordsOfOtherEntitiesAreSkipped() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("Source.sqlite")
        let container = try PersistentContainer(
            name: "Import", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(source)])
        let context = container.newBackgroundContext()
        let director = Director(context: context)
        director.name = "Michael Mann"
        director.awards = 3
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.director = director
        let critic = Critic(context: context)
        critic.name = "Pauline"
        try context.save()
        try container.close()

        let everything = try await strata(["export", source.path])
        #expect(everything.status == 0, "\(everything.errorOutput)")
        let file = directory.file("all.ndjson")
        try everything.output.write(to: file, atomically: true, encoding: .utf8)
        let target = directory.file("Target.sqlite")
        try Self.makeStore(target)
        let directors = try await strata(["import", target.path, file.path, "--entity", "Director"])
        #expect(directors.status == 0, "\(directors.errorOutput)")
        #expect(directors.errorOutput.contains("Imported 1 record into Director."), "\(directors.errorOutput)")
        #expect(directors.errorOutput.contains("Skipped 2 records of other entities."), "\(directors.errorOutput)")
        let listed = try await strata(["query", target.path, "Person", "--select", "name"])
        #expect(listed.output == #"{"name":"Michael Mann"}"# + "\n")

        let abstract = try await strata(["import", target.path, file.path, "--entity", "Person"])
        #expect(abstract.status == 1)
        #expect(abstract.errorOutput.contains("abstract"), "\(abstract.errorOutput)")
    }

    @Test func standardInputAndDryRuns() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("Source.sqlite")
        try Self.makeStore(source, movies: [("One", UUID()), ("Two", UUID())])
        let target = directory.file("Target.sqlite")
        try Self.makeStore(target)
        let executable = try #require(StrataExecutable.locate())
        // strata export … | strata import … - : a pipe between two processes.
        let status = try await offThePool { () throws -> Int32 in
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = [
                "-c",
                "'\(executable.path)' export '\(source.path)' --entity Movie | '\(executable.path)' import '\(target.path)' - --entity Movie --format ndjson",
            ]
            shell.standardError = FileHandle.nullDevice
            try shell.run()
            shell.waitUntilExit()
            return shell.terminationStatus
        }
        #expect(status == 0)
        #expect(try await titles(target) == ["One", "Two"])

        let file = directory.file("more.ndjson")
        try #"{"id":"\#(UUID())","title":"Three","genres":[]}"#.write(to: file, atomically: true, encoding: .utf8)
        let dry = try await strata(["import", target.path, file.path, "--entity", "Movie", "--dry-run"])
        #expect(dry.status == 0, "\(dry.errorOutput)")
        #expect(dry.errorOutput.contains("1 record checked; nothing was written"), "\(dry.errorOutput)")
        #expect(try await titles(target) == ["One", "Two"])

        let unknownFormat = try await strata(["import", target.path, directory.file("movies.txt").path, "--entity", "Movie"])
        #expect(unknownFormat.status == 1)
        #expect(unknownFormat.errorOutput.contains("--format"), "\(unknownFormat.errorOutput)")
        let missing = try await strata(["import", target.path, directory.file("none.ndjson").path, "--entity", "Movie"])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.split(separator: "\n").count == 1, "\(missing.errorOutput)")
    }

    /// A store another program is writing: the import waits for SQLite's busy timeout, then
    /// fails with one line and writes nothing.
    @Test func aStoreAnotherProgramIsWritingFailsWithOneLine() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Movies.sqlite")
        try Self.makeStore(store, movies: [("Kept", UUID())])
        let file = directory.file("movies.ndjson")
        try #"{"id":"\#(UUID())","title":"New","genres":[]}"#.write(to: file, atomically: true, encoding: .utf8)
        // The sqlite3 shell holds the write lock, as another program's long write.
        guard ["/usr/bin/sqlite3", "/bin/sqlite3"].contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            // scripts/test.sh installs the sqlite3 shell; in CI its absence is a failure.
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("the sqlite3 shell is missing") }
            return
        }
        // The lock is held until this test lets go (not for a fixed time, which a loaded machine
        // could outlast before the import even starts), and the import starts once it is held.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["sqlite3", store.path]
        let commands = Pipe()
        let replies = Pipe()
        let complaints = Pipe()
        writer.standardInput = commands
        writer.standardOutput = replies
        writer.standardError = complaints
        // Writing to a writer that already ended must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        try writer.run()
        let complaintReader = PipeReader(complaints)
        defer {
            try? commands.fileHandleForWriting.write(contentsOf: Data("ROLLBACK;\n.quit\n".utf8))
            try? commands.fileHandleForWriting.close()
            writer.waitUntilExit()
        }
        try commands.fileHandleForWriting.write(contentsOf: Data("BEGIN IMMEDIATE;\n.print locked\n".utf8))
        let reply = try await offThePool { replies.fileHandleForReading.availableData }
        if reply.isEmpty {
            // The end of its output: sqlite3 ended without taking the lock.
            let report = try await offThePool { () -> String in
                writer.waitUntilExit()
                return "\(exitDescription(writer)); stderr: \(complaintReader.waitForEnd())"
            }
            Issue.record("sqlite3 ended before it took the lock: it \(report)")
            return
        }
        #expect(String(decoding: reply, as: UTF8.self).contains("locked"))
        let result = try await strata(["import", store.path, file.path, "--entity", "Movie"])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("locked"), "\(result.errorOutput)")
        #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)")
        // Readers are not held up by the writer.
        #expect(try await titles(store) == ["Kept"])
    }

    @Test func aCoreDataStoreIsNeverWritten() async throws {
        let directory = try TemporaryDirectory()
        // Enough of a Core Data store for the tool to recognize one.
        let store = directory.file("CoreData.sqlite")
        try await offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "sqlite3", store.path,
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR, Z_PLIST BLOB); CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);",
            ]
            try process.run()
            process.waitUntilExit()
        }
        guard FileManager.default.fileExists(atPath: store.path) else {
            // scripts/test.sh installs the sqlite3 shell; in CI its absence is a failure.
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("the sqlite3 shell is missing") }
            return
        }
        let before = try Data(contentsOf: store)
        let file = directory.file("movies.ndjson")
        try #"{"title":"A","genres":[]}"#.write(to: file, atomically: true, encoding: .utf8)
        let result = try await strata(["import", store.path, file.path, "--entity", "Movie"])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("Core Data store"), "\(result.errorOutput)")
        #expect(try Data(contentsOf: store) == before)
    }
}
