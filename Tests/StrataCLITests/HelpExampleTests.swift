import ArgumentParser
import Foundation
import GRDB
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// Every example that `strata --help` and each command's `--help` shows runs, as a person would
/// paste it into a shell, against real stores: an example that does not work fails the suite.
///
/// The examples are read from the help output (the indented lines under "Examples:" or
/// "EXAMPLES"), never copied into the test. Each runs with `bash -o pipefail` in a folder of its
/// own that holds the files the examples name: `Movies.sqlite` (a `strata demo` store, with
/// history), `Old.sqlite` and `New.sqlite`, `movies.ndjson|csv|json` of new movies,
/// `people.csv`, the model bundles `Movies.xcdatamodeld` and `Students.xcdatamodeld` (with a
/// store of `Students 2`), and a Core Data store `Library.sqlite` with its model. Each
/// `postgres://` URL becomes a schema of its own on the test server, holding a store of the
/// demo model when the URL names a `movies` database, of `Students 2` for `school`, and nothing
/// otherwise. `strata watch` runs until stopped: it passes when it shows results and reports no
/// error before it is stopped.
@Suite(.timeLimit(.minutes(10))) struct HelpExampleTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("StrataTests/Fixtures")

    /// A help page: the command line that shows it, and its text.
    struct HelpPage {
        var command: [String]
        var text: String
    }

    /// The command paths of every command `strata --help` lists (hidden ones are not shown),
    /// with their subcommands.
    static func commandPaths(of command: any ParsableCommand.Type = StrataCommand.self, path: [String] = []) -> [[String]] {
        var paths = [path]
        for subcommand in command.configuration.subcommands where subcommand.configuration.shouldDisplay {
            let name = subcommand.configuration.commandName ?? String(describing: subcommand).lowercased()
            paths += commandPaths(of: subcommand, path: path + [name])
        }
        return paths
    }

    /// The examples of a help page, and the lines of examples that the help wrapped.
    ///
    /// An examples block starts with a line "Examples:" or "EXAMPLES …" and ends at a blank
    /// line; each indented line in it is an example, continued on the next line when it ends
    /// with `\`, `|` or `&&`, as in a shell. A line in the block that is not indented is the
    /// rest of an example the help wrapped at 80 columns, which a person could not paste.
    static func examples(in text: String) -> (examples: [String], wrapped: [String]) {
        var examples: [String] = []
        var wrapped: [String] = []
        var inBlock = false
        var continues = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Examples:") || trimmed.hasPrefix("EXAMPLES") {
                inBlock = true
            } else if trimmed.isEmpty {
                inBlock = false
                continues = false
            } else if inBlock {
                if !line.hasPrefix(" ") {
                    wrapped.append(String(line))
                } else if continues, let last = examples.indices.last {
                    examples[last] += "\n" + trimmed
                } else {
                    examples.append(trimmed)
                }
                continues = trimmed.hasSuffix("\\") || trimmed.hasSuffix("|") || trimmed.hasSuffix("&&")
            }
        }
        return (examples, wrapped)
    }

    @Test func extractionFindsExamplesAndOnlyExamples() {
        let text = """
            OVERVIEW: x

            Some prose about strata
            that wraps.

              Examples:
                strata info Movies.sqlite
                echo 'Movie --count' | strata shell Movies.sqlite
                strata export Old.sqlite |
                    strata import New.sqlite - \\
                    --entity Movie
                strata query Movies.sqlite Movie --where 'title BEGINSWITH[c] "the"' --sort
            -releaseDate

            OPTIONS:
              --help
            """
        let found = Self.examples(in: text)
        #expect(
            found.examples == [
                "strata info Movies.sqlite", "echo 'Movie --count' | strata shell Movies.sqlite",
                "strata export Old.sqlite |\nstrata import New.sqlite - \\\n--entity Movie",
                #"strata query Movies.sqlite Movie --where 'title BEGINSWITH[c] "the"' --sort"#,
            ])
        #expect(found.wrapped == ["-releaseDate"])
    }

    @Test func everyExampleInTheHelpRuns() async throws {
        var pages: [HelpPage] = []
        for path in Self.commandPaths() {
            let help = try await runStrata(path + ["--help"])
            #expect(help.status == 0, "strata \(path.joined(separator: " ")) --help: \(help.errorOutput)")
            pages.append(HelpPage(command: ["strata"] + path + ["--help"], text: help.output))
        }
        var examples: [(page: String, example: String)] = []
        for page in pages {
            let name = page.command.joined(separator: " ")
            let (found, wrapped) = Self.examples(in: page.text)
            // Every command shows at least one example, except subcommands of commands that show
            // them (`history list`, `history prune`).
            if page.command.count <= 3 {
                #expect(!found.isEmpty, "\(name) shows no example")
            }
            #expect(wrapped.isEmpty, "\(name): examples wrap at 80 columns, before \(wrapped); split them with \\")
            // A line that reads as a command outside an examples block would escape the test.
            for line in page.text.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("strata ") {
                let command = line.trimmingCharacters(in: .whitespaces)
                #expect(
                    found.contains { $0.split(separator: "\n").contains { $0 == command } },
                    "\(name): '\(line)' looks like an example but is not in an examples block")
            }
            examples += found.map { (name, $0) }
        }
        #expect(examples.count >= 45, "only \(examples.count) examples found")
        #expect(pages.count >= 15, "only \(pages.count) help pages found")

        let workspace = try TemporaryDirectory()
        let fixtures = try await offThePool { try Self.makeFixtures(in: workspace.file("fixtures")) }
        let bin = try Self.makeBin(in: workspace.file("bin"))
        for (index, (page, example)) in examples.enumerated() {
            let folder = workspace.file("example-\(index)")
            try FileManager.default.copyItem(at: fixtures, to: folder)
            let command = try Self.substitutingPostgresURLs(in: example)
            let result = try await offThePool {
                try Self.run(command, in: folder, bin: bin, runsUntilStopped: example.hasPrefix("strata watch "))
            }
            #expect(
                result.succeeded,
                "\(page): `\(example)` failed (status \(result.status)):\n\(result.errorOutput.prefix(2_000))\(result.output.prefix(500))")
        }
    }

    // MARK: Running an example

    struct Outcome {
        var succeeded: Bool
        var status: Int32
        var output: String
        var errorOutput: String
    }

    /// Runs `command` with bash in `folder`, with `bin` first on the path and nothing on
    /// standard input.
    static func run(_ command: String, in folder: URL, bin: URL, runsUntilStopped: Bool) throws -> Outcome {
        let outputFile = folder.appendingPathComponent(".example-output")
        let errorFile = folder.appendingPathComponent(".example-errors")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-o", "pipefail", "-c", command]
        process.currentDirectoryURL = folder
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        // `strata demo` without --store writes to the per-user data folder: this one.
        environment["HOME"] = folder.path
        environment["XDG_DATA_HOME"] = folder.appendingPathComponent(".local/share").path
        environment["NO_COLOR"] = "1"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let start = Date()
        var stopped = false
        while process.isRunning {
            let elapsed = Date().timeIntervalSince(start)
            let shown = (try? Data(contentsOf: outputFile).count) ?? 0
            // A watch shows results and waits for commits: once it has shown them for a
            // moment, it works. Anything else gets two minutes on a loaded machine.
            if (runsUntilStopped && shown > 0 && elapsed > 3) || elapsed > 120 {
                // The child leads a process group of its own (Foundation's Process puts it in
                // one): the group is bash and the pipeline it started.
                _ = kill(-process.processIdentifier, SIGTERM)
                stopped = true
                process.waitUntilExit()
                break
            }
            usleep(50_000)
        }
        process.waitUntilExit()
        let shown = String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self)
        let errorText = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
        let succeeded =
            stopped
            ? runsUntilStopped && !shown.isEmpty && !errorText.contains("error")
            : process.terminationStatus == 0
        return Outcome(succeeded: succeeded, status: process.terminationStatus, output: shown, errorOutput: errorText)
    }

    /// `command` with each quoted `postgres://` URL replaced by the test server's URL and a
    /// schema of its own, prepared as the URL's database suggests.
    static func substitutingPostgresURLs(in command: String) throws -> String {
        var result = command
        var searchFrom = result.startIndex
        while let start = result.range(of: "'postgres://", range: searchFrom..<result.endIndex)
            ?? result.range(of: "'postgresql://", range: searchFrom..<result.endIndex)
        {
            guard let end = result[start.upperBound...].firstIndex(of: "'") else { break }
            let url = String(result[result.index(after: start.lowerBound)..<end])
            let path = URLComponents(string: url)?.path ?? ""
            let schema = "example_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
            let local = try PostgresTestServer.url(schema: schema)
            switch path {
            case "/movies": try makeMovieStore(.postgres(url: local, persistentHistoryTracking: true))
            case "/school": try makeStudentStore(.postgres(url: local))
            default: break
            }
            let replacement = "'\(local)'"
            let offset = result.distance(from: result.startIndex, to: start.lowerBound) + replacement.count
            result.replaceSubrange(start.lowerBound...end, with: replacement)
            searchFrom = result.index(result.startIndex, offsetBy: offset)
        }
        return result
    }

    // MARK: Fixtures

    /// A folder with `strata`, and a stand-in for Graphviz's `dot` where it is not installed
    /// (it checks that it was given a Graphviz graph).
    static func makeBin(in folder: URL) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let strata = try #require(StrataExecutable.locate())
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("strata"), withDestinationURL: strata)
        let installed = ProcessInfo.processInfo.environment["PATH", default: ""].split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/dot") }
        if !installed {
            let dot = folder.appendingPathComponent("dot")
            try """
                #!/bin/sh
                # Stands in for Graphviz's dot in HelpExampleTests: accepts a graph, writes a stub.
                grep -q '^digraph ' || { echo "dot: not a graph" >&2; exit 1; }
                printf 'PNG'

                """.write(to: dot, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dot.path)
        }
        return folder
    }

    /// The files the examples name, in `folder`.
    static func makeFixtures(in folder: URL) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

        // The demo's store, with history recorded from here on, and a transaction by `importer`.
        let demo = try runStrata(["demo", "--store", file("Movies.sqlite").path])
        try #require(demo.status == 0, "strata demo: \(demo.errorOutput)")
        try withMovieContainer(.sqlite(file("Movies.sqlite"), persistentHistoryTracking: true)) { context in
            Critic(context: context).name = "Pauline Kael"
        }
        try FileManager.default.copyItem(at: file("Movies.sqlite"), to: file("Old.sqlite"))
        try withMovieContainer(.sqlite(file("New.sqlite")))

        // Movies the demo's store does not have, in each format export writes.
        let scratch = folder.appendingPathComponent(".scratch", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try makeMovieStore(.sqlite(scratch.appendingPathComponent("More.sqlite")), movies: ["Thief", "Manhunter"])
        for format in ["ndjson", "csv", "json"] {
            let exported = try runStrata([
                "export", scratch.appendingPathComponent("More.sqlite").path, "--entity", "Movie", "--format", format,
                "--output", file("movies.\(format)").path,
            ])
            try #require(exported.status == 0, "\(exported.errorOutput)")
        }
        try FileManager.default.removeItem(at: scratch)
        try "Name,Born on\nKathryn Bigelow,11/27/1951\n".write(to: file("people.csv"), atomically: true, encoding: .utf8)

        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("Movies.xcdatamodeld"), to: file("Movies.xcdatamodeld"))
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("Students.xcdatamodeld"), to: file("Students.xcdatamodeld"))
        try makeStudentStore(.sqlite(file("Students.sqlite")))
        try makeCoreDataLibrary(store: file("Library.sqlite"), model: file("Library.xcdatamodeld"))
        return folder
    }

    /// A store of the demo model: Michael Mann and `movies`, saved by `importer`.
    static func makeMovieStore(_ description: StoreDescription, movies: [String] = ["Heat", "Collateral", "Ronin"]) throws {
        try withMovieContainer(description) { context in
            let director = Director(context: context)
            director.name = "Michael Mann"
            for title in movies {
                let movie = Movie(context: context)
                movie.title = title
                movie.director = director
            }
        }
    }

    /// Opens a container of the demo model on `description`, and saves what `body` does there
    /// as `importer` (nothing, when it does nothing).
    static func withMovieContainer(_ description: StoreDescription, _ body: (ObjectContext) throws -> Void = { _ in }) throws {
        let container = try PersistentContainer(
            name: "Examples", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [description])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        context.transactionAuthor = "importer"
        try body(context)
        try context.save()
    }

    /// A store written with `Students 2` of the student model, with one student.
    static func makeStudentStore(_ description: StoreDescription) throws {
        let bundle = try XcodeModelBundle.load(contentsOf: fixtures.appendingPathComponent("Students.xcdatamodeld"))
        let schema = try #require(bundle.version(named: "Students 2")).schema
        let container = try PersistentContainer(name: "Students", schema: schema, storeDescriptions: [description])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let student = ManagedObject(entity: try #require(schema.entity(named: "Student")))
        context.insert(student)
        try student.setValue("Ada", forKey: "name")
        try context.save()
    }

    /// A small store laid out as Core Data writes one, and its model.
    static func makeCoreDataLibrary(store: URL, model: URL) throws {
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPUBLISHED TIMESTAMP, ZTITLE VARCHAR );
                    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                    INSERT INTO Z_PRIMARYKEY VALUES (1, 'Book', 0, 2);
                    INSERT INTO ZBOOK VALUES (1, 1, 1, -1000000000.0, 'Dune'), (2, 1, 1, 700000100.5, 'Piranesi');
                    INSERT INTO Z_METADATA VALUES (1, '9C1B8E4A-0000-4000-8000-00000000B00C', X'');
                    """)
        }
        try queue.close()
        let version = model.appendingPathComponent("Library.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Book" representedClassName="Book" syncable="YES">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="published" attributeType="Date" usesScalarValueType="NO"/>
                </entity>
            </model>
            """.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    }
}
