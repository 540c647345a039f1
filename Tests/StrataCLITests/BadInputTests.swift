import Foundation
import GRDB
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// What the reading commands do with things that are not Strata stores: they fail with one line
/// on standard error and a non-zero status, never crash, and leave the file as it was.
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    /// Something named where a store should be.
    enum BadInput: String, CaseIterable, Sendable {
        case missingFile, directory, textFile, emptyFile, truncatedStore, foreignSQLiteDatabase, coreDataStoreWithoutModel

        /// The message must contain one of these (any message when there are none).
        var messageFragments: [String] {
            switch self {
            case .missingFile: ["There is no file"]
            case .directory: ["is a directory"]
            case .textFile: ["not an SQLite database"]
            case .emptyFile: []
            case .truncatedStore: ["truncated"]
            case .foreignSQLiteDatabase: ["neither a Strata store nor a Core Data store"]
            case .coreDataStoreWithoutModel: ["--model"]
            }
        }
    }

    /// A command that only reads a store.
    enum ReadCommand: String, CaseIterable, Sendable {
        case info, query, export, schema

        func arguments(_ store: String) -> [String] {
            switch self {
            case .info: ["info", store]
            case .query: ["query", store, "Movie"]
            case .export: ["export", store]
            case .schema: ["schema", store]
            }
        }
    }

    /// Makes `input` in `directory`; returns its path.
    private static func make(_ input: BadInput, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Store.sqlite")
        switch input {
        case .missingFile:
            break
        case .directory:
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        case .textFile:
            try Data("title,boxOffice\nHeat,187436818\n".utf8).write(to: url)
        case .emptyFile:
            try Data().write(to: url)
        case .truncatedStore:
            let real = directory.file("Real.sqlite")
            let container = try PersistentContainer(
                name: "BadInput", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(real)])
            let context = container.newBackgroundContext()
            for number in 0..<300 {
                let movie = Movie(context: context)
                movie.title = "Movie \(number) " + String(repeating: "x", count: 100)
            }
            try context.save()
            try container.close()
            let whole = try Data(contentsOf: real)
            try #require(whole.count >= 8192, "the store is too small to cut: \(whole.count) bytes")
            try whole.prefix(whole.count / 2).write(to: url)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: real.path + suffix) }
        case .foreignSQLiteDatabase:
            let database = try DatabaseQueue(path: url.path)
            try database.write { db in
                try db.execute(sql: "CREATE TABLE recipe (id INTEGER PRIMARY KEY, name TEXT)")
                try db.execute(sql: "INSERT INTO recipe (name) VALUES ('bread')")
            }
            try database.close()
        case .coreDataStoreWithoutModel:
            let database = try DatabaseQueue(path: url.path)
            try database.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE ZMOVIE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR);
                        CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                        CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                        INSERT INTO Z_PRIMARYKEY VALUES (1, 'Movie', 0, 1);
                        INSERT INTO ZMOVIE VALUES (1, 1, 1, 'Heat');
                        """)
            }
            try database.close()
        }
        return url
    }

    /// The bytes of `url` when it is a file, else `nil`.
    private static func bytes(of url: URL) -> Data? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return nil
        }
        return try? Data(contentsOf: url)
    }

    /// The names in `directory`, hidden ones included.
    private static func contents(of directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    /// Checks that `errorOutput` is one line and no crash report.
    private func expectNoCrash(_ errorOutput: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for marker in ["Fatal error", "Stack dump", "Backtrace", "Current stack trace", "Segmentation fault", "💣"] {
            #expect(!errorOutput.contains(marker), "\(errorOutput)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: BadInput.allCases, ReadCommand.allCases)
    func failsWithOneLineAndLeavesTheFileAlone(_ input: BadInput, _ command: ReadCommand) async throws {
        let directory = try TemporaryDirectory()
        let url = try Self.make(input, in: directory)
        let before = Self.bytes(of: url)
        let filesBefore = try Self.contents(of: directory.url)
        let result = try await offThePool { try runStrata(command.arguments(url.path)) }
        #expect(result.status == 1, "\(result.errorOutput)")
        #expect(result.output.isEmpty, "\(result.output.prefix(300))")
        let lines = result.errorOutput.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(lines.count == 1, "\(result.errorOutput)")
        #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)")
        #expect(result.errorOutput.contains(url.path), "the message does not name the file: \(result.errorOutput)")
        #expect(
            input.messageFragments.isEmpty || input.messageFragments.contains { result.errorOutput.contains($0) },
            "expected one of \(input.messageFragments): \(result.errorOutput)")
        expectNoCrash(result.errorOutput)
        // Nothing written: the file has the same bytes, and no file appeared beside it.
        #expect(Self.bytes(of: url) == before)
        #expect(try Self.contents(of: directory.url) == filesBefore)
        if input == .missingFile { #expect(!FileManager.default.fileExists(atPath: url.path)) }
    }

    /// An empty file exists and can be written: a read-only command must not call it missing or
    /// unwritable.
    @Test(arguments: ReadCommand.allCases) func anEmptyFileIsNotCalledMissingOrUnwritable(_ command: ReadCommand) async throws {
        let directory = try TemporaryDirectory()
        let url = try Self.make(.emptyFile, in: directory)
        let result = try await offThePool { try runStrata(command.arguments(url.path)) }
        #expect(result.status == 1, "\(result.errorOutput)")
        #expect(!result.errorOutput.contains("There is no store"), "\(result.errorOutput)")
        #expect(!result.errorOutput.contains("storeNotWritable"), "\(result.errorOutput)")
    }

    @Test(arguments: [
        ["--limit", "-1"], ["--limit=-1"], ["-n", "-1"], ["--offset=-1"], ["--limit", "many"], ["--format", "xml"],
    ])
    func badOptionsAreUsageErrors(_ options: [String]) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try PersistentContainer(
            name: "BadInput", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)]
        ).close()
        let before = try Data(contentsOf: url)
        let result = try await offThePool { try runStrata(["query", url.path, "Movie"] + options) }
        #expect(result.status == 64, "\(result.errorOutput)")
        #expect(result.output.isEmpty, "\(result.output)")
        #expect(!result.errorOutput.isEmpty)
        expectNoCrash(result.errorOutput)
        #expect(try Data(contentsOf: url) == before)
    }
}
