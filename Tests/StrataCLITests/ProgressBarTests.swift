import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// The progress bar of `strata export` and `strata import`: drawn in place on a terminal,
/// absent when standard error is not one, and absent with --no-progress.
@Suite(.timeLimit(.minutes(10))) struct ProgressBarTests {
    /// Enough rows that the bar is drawn several times and measures a rate.
    static let movieCount = 20_000

    /// A demo-model store with no objects.
    private static func makeEmptyStore(in directory: TemporaryDirectory) throws -> (URL, PersistentContainer) {
        let url = directory.file("Movies.sqlite")
        let container = try PersistentContainer(
            name: "Progress", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        return (url, container)
    }

    /// A store of ``movieCount`` movies, inserted with one batch insert.
    private static func makeStore(in directory: TemporaryDirectory) throws -> URL {
        let (url, container) = try makeEmptyStore(in: directory)
        var next = 0
        let request = BatchInsertRequest(entity: Movie.self) { movie in
            guard next < movieCount else { return true }
            movie.id = UUID()
            movie.title = "Movie \(next)"
            next += 1
            return false
        }
        _ = try container.newBackgroundContext().execute(request)
        try container.close()
        return url
    }

    /// An empty store and an NDJSON file of ``movieCount`` movies to import into it.
    private static func makeImport(in directory: TemporaryDirectory) throws -> (store: URL, records: URL) {
        let (url, container) = try makeEmptyStore(in: directory)
        try container.close()
        let records = directory.file("movies.ndjson")
        var text = ""
        for number in 0..<movieCount {
            text += #"{"id":"\#(UUID().uuidString)","title":"Movie \#(number)","genres":[]}"# + "\n"
        }
        try text.write(to: records, atomically: true, encoding: .utf8)
        return (url, records)
    }

    /// The lines of `terminal` as drawn: each carriage return starts the line again.
    private func redraws(_ terminal: String) -> [String] {
        terminal.replacingOccurrences(of: "\r\n", with: "\n").components(
            separatedBy: CharacterSet(charactersIn: "\r\n"))
    }

    // MARK: Export

    @Test func exportShowsABarOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let output = directory.file("movies.ndjson")
        let result = try await offThePool {
            try runStrataInTerminal(["export", store.path, "--entity", "Movie", "--output", output.path])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        let terminal = result.terminal
        // Redrawn in place: carriage returns without line feeds, each draw erasing the line's end.
        let draws = redraws(terminal).filter { $0.contains("%") }
        #expect(draws.count >= 2, "\(terminal.debugDescription)")
        #expect(terminal.contains("\u{1B}[K"))
        #expect(draws.allSatisfy { $0.contains("Movie") }, "\(draws)")
        #expect(draws.last?.contains("100%") == true, "\(draws)")
        #expect(draws.last?.contains("Movie 20,000/20,000") == true, "\(draws)")
        #expect(draws.contains { $0.contains("/s") }, "no rate: \(draws)")
        #expect(terminal.hasSuffix("Exported 20,000 objects to \(output.path).\r\n"), "\(terminal.debugDescription)")
        #expect(try String(contentsOf: output, encoding: .utf8).split(separator: "\n").count == Self.movieCount)
    }

    @Test func exportShowsNoProgressWhenStandardErrorIsAPipe() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let output = directory.file("movies.ndjson")
        let result = try await offThePool {
            try runStrata(["export", store.path, "--entity", "Movie", "--output", output.path])
        }
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.isEmpty)
        #expect(
            result.errorOutput == "Exported 20,000 objects to \(output.path).\n",
            "\(result.errorOutput.debugDescription)")
        #expect(try String(contentsOf: output, encoding: .utf8).split(separator: "\n").count == Self.movieCount)
    }

    @Test func noProgressHidesTheBarOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let output = directory.file("movies.ndjson")
        let result = try await offThePool {
            try runStrataInTerminal([
                "export", store.path, "--entity", "Movie", "--output", output.path, "--no-progress",
            ])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        #expect(
            result.terminal == "Exported 20,000 objects to \(output.path).\r\n", "\(result.terminal.debugDescription)")
    }

    // MARK: Import

    @Test func importShowsABarOfRecordsOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let (store, records) = try Self.makeImport(in: directory)
        let result = try await offThePool {
            try runStrataInTerminal(["import", store.path, records.path, "--entity", "Movie"])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        let terminal = result.terminal
        let draws = redraws(terminal).filter { $0.contains("%") }
        #expect(draws.count >= 2, "\(terminal.debugDescription)")
        #expect(draws.allSatisfy { $0.contains("Movie") && $0.contains("records") }, "\(draws)")
        #expect(draws.last?.contains("100%") == true, "\(draws)")
        #expect(draws.last?.contains("20,000 records") == true, "\(draws)")
        #expect(terminal.hasSuffix("Imported 20,000 records into Movie.\r\n"), "\(terminal.debugDescription)")
        let count = try await offThePool { try runStrata(["query", store.path, "Movie", "--count"]) }
        #expect(count.output == "{\"count\":20000}\n", "\(count.errorOutput)")
    }

    @Test func importShowsNoProgressWhenStandardErrorIsAPipe() async throws {
        let directory = try TemporaryDirectory()
        let (store, records) = try Self.makeImport(in: directory)
        let result = try await offThePool { try runStrata(["import", store.path, records.path, "--entity", "Movie"]) }
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.isEmpty)
        #expect(result.errorOutput == "Imported 20,000 records into Movie.\n", "\(result.errorOutput.debugDescription)")
    }

    @Test func importWithNoProgressHidesTheBarOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let (store, records) = try Self.makeImport(in: directory)
        let result = try await offThePool {
            try runStrataInTerminal(["import", store.path, records.path, "--entity", "Movie", "--no-progress"])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        #expect(result.terminal == "Imported 20,000 records into Movie.\r\n", "\(result.terminal.debugDescription)")
    }
}
