import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata watch` as a script reads it (a line of JSON per result) and as a person sees it (a
/// table redrawn in place), following commits of this process and of other processes.
@Suite(.timeLimit(.minutes(10))) struct WatchCommandTests {
    /// Patience for a commit to show, on a loaded machine (the tool polls ten times a second).
    static let deadline = Duration.seconds(300)

    /// Three movies.
    private static func makeStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Watched.sqlite")
        let container = try openContainer(url)
        let context = container.newBackgroundContext()
        for title in ["Heat", "Collateral", "Ronin"] { Movie(context: context).title = title }
        try context.save()
        try container.close()
        return url
    }

    private static func openContainer(_ url: URL) throws -> PersistentContainer {
        try PersistentContainer(
            name: "Watch", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
    }

    /// Saves a movie through a container of this process.
    private static func saveMovie(titled title: String, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        Movie(context: context).title = title
        try context.save()
    }

    /// The titles in one line of `watch` output: a JSON array of objects.
    private func titles(inLine line: String) throws -> [String] {
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        let objects = try #require(parsed as? [[String: Any]], "not a JSON array of objects: \(line)")
        return try objects.map { try #require($0["title"] as? String, "\(line)") }
    }

    /// Waits for a line of `watch` output whose titles are `expected`.
    private func waitForTitles(_ expected: [String], from watch: InteractiveStrata) async throws -> Bool {
        try await watch.waitForOutput(timeout: Self.deadline) { _ in
            watch.outputLines.contains { (try? titles(inLine: $0)) == expected }
        }
    }

    @Test func followsCommitsOfThisProcessAndOfAnother() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let watch = try InteractiveStrata(["watch", store.path, "Movie", "--select", "title", "--sort", "title"])
        try #require(
            try await watch.waitForOutput(timeout: Self.deadline) { _ in !watch.outputLines.isEmpty },
            "no first result: \(watch.errorText)")
        #expect(try titles(inLine: watch.outputLines[0]) == ["Collateral", "Heat", "Ronin"])

        // This process commits.
        let container = try Self.openContainer(store)
        try Self.saveMovie(titled: "Thief", in: container)
        try container.close()
        #expect(
            try await waitForTitles(["Collateral", "Heat", "Ronin", "Thief"], from: watch),
            "no result with Thief within \(Self.deadline): \(watch.outputText)")

        // Another process commits: `strata import`.
        let records = directory.file("movies.ndjson")
        let lines = ["Manhunter", "Ali"].map { #"{"id":"\#(UUID().uuidString)","title":"\#($0)","genres":[]}"# }
        try (lines.joined(separator: "\n") + "\n").write(to: records, atomically: true, encoding: .utf8)
        let imported = try await offThePool {
            try runStrata(["import", store.path, records.path, "--entity", "Movie"])
        }
        #expect(imported.status == 0, "\(imported.errorOutput)")
        #expect(
            try await waitForTitles(["Ali", "Collateral", "Heat", "Manhunter", "Ronin", "Thief"], from: watch),
            "no result with the imported movies within \(Self.deadline): \(watch.outputText)")

        // Ctrl-C ends it, successfully.
        watch.interrupt()
        let status = try await watch.waitForExit()
        #expect(status == 0, "\(watch.errorText)")
        #expect(watch.errorText.isEmpty, "\(watch.errorText)")
        // Every line is a whole result.
        for line in watch.outputLines { #expect((try? titles(inLine: line)) != nil, "\(line)") }
        #expect(watch.outputText.hasSuffix("\n"))
    }

    @Test func oneUpdateOfACountPrintsOneLineAndEnds() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let watch = try InteractiveStrata(["watch", store.path, "Movie", "--updates", "1", "--count"])
        let status = try await watch.waitForExit()
        #expect(status == 0, "\(watch.errorText)")
        #expect(watch.outputText == "[{\"count\":3}]\n", "\(watch.outputText.debugDescription)")
        #expect(watch.errorText.isEmpty, "\(watch.errorText)")
    }

    @Test func twoUpdatesEndAfterTheFirstCommit() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        // Opened before the watch starts, so that only the save below is a commit it sees.
        let container = try Self.openContainer(store)
        defer { try? container.close() }
        let watch = try InteractiveStrata([
            "watch", store.path, "Movie", "--select", "title", "--sort", "title", "--updates", "2",
        ])
        try #require(
            try await watch.waitForOutput(timeout: Self.deadline) { _ in !watch.outputLines.isEmpty },
            "no first result: \(watch.errorText)")
        // Still running: it waits for a commit.
        #expect(watch.process.isRunning)
        try Self.saveMovie(titled: "Thief", in: container)
        let status = try await watch.waitForExit()
        #expect(status == 0, "\(watch.errorText)")
        let lines = watch.outputLines
        try #require(lines.count == 2, "\(watch.outputText)")
        #expect(try titles(inLine: lines[0]) == ["Collateral", "Heat", "Ronin"])
        #expect(try titles(inLine: lines[1]) == ["Collateral", "Heat", "Ronin", "Thief"])
    }

    @Test func redrawsATableOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await offThePool {
            try runStrataInTerminal([
                "watch", store.path, "Movie", "--select", "title", "--sort", "title", "--updates", "1",
            ])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        let terminal = result.terminal
        // The cursor is hidden while the table is drawn, the screen cleared, and the cursor shown
        // again at the end.
        let hide = try #require(terminal.range(of: "\u{1B}[?25l"), "\(terminal.debugDescription)")
        let clear = try #require(terminal.range(of: "\u{1B}[2J"), "\(terminal.debugDescription)")
        let show = try #require(terminal.range(of: "\u{1B}[?25h", options: .backwards), "\(terminal.debugDescription)")
        #expect(hide.lowerBound < clear.lowerBound && clear.lowerBound < show.lowerBound)
        #expect(terminal.hasSuffix("\u{1B}[?25h"), "\(terminal.debugDescription)")
        // A table, not JSON: a header, a rule, the rows and their count.
        let lines = terminal.components(separatedBy: "\r\n").map(stripEscapes)
        #expect(lines.first?.hasPrefix("strata watch Movie — \(store.path)") == true, "\(terminal.debugDescription)")
        let header = try #require(lines.firstIndex(of: "title"), "no header: \(terminal.debugDescription)")
        #expect(lines.dropFirst(header + 1).first?.hasPrefix("───") == true)
        #expect(Array(lines.dropFirst(header + 2).prefix(3)) == ["Collateral", "Heat", "Ronin"], "\(lines)")
        #expect(lines.contains("3 rows"), "\(lines)")
        #expect(!terminal.contains("{\""))
    }

    @Test func jsonOnATerminalPrintsLines() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await offThePool {
            try runStrataInTerminal(["watch", store.path, "Movie", "--count", "--updates", "1", "--json"])
        }
        #expect(result.status == 0, "\(result.terminal.debugDescription)")
        #expect(result.terminal == "[{\"count\":3}]\r\n", "\(result.terminal.debugDescription)")
    }

    @Test func anUnknownEntityFailsWithOneLine() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let watch = try InteractiveStrata(["watch", store.path, "Movi"])
        let status = try await watch.waitForExit()
        #expect(status == 1)
        #expect(watch.outputText.isEmpty, "\(watch.outputText)")
        #expect(watch.errorText.hasPrefix("strata: error: "), "\(watch.errorText)")
        #expect(watch.errorText.split(separator: "\n").count == 1, "\(watch.errorText)")
        #expect(watch.errorText.contains("Did you mean 'Movie'"), "\(watch.errorText)")
    }

    @Test func badArgumentsAreUsageErrors() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let zero = try InteractiveStrata(["watch", store.path, "Movie", "--updates", "0"])
        #expect(try await zero.waitForExit() == 64)
        #expect(zero.outputText.isEmpty)
        #expect(zero.errorText.contains("--updates"), "\(zero.errorText)")
        let missing = try InteractiveStrata(["watch", directory.file("Missing.sqlite").path, "Movie"])
        #expect(try await missing.waitForExit() == 1)
        #expect(missing.errorText.hasPrefix("strata: error: "), "\(missing.errorText)")
        #expect(missing.errorText.split(separator: "\n").count == 1, "\(missing.errorText)")
    }
}

/// `text` without ANSI escape sequences (CSI … letter, and private modes such as `?25l`).
private func stripEscapes(_ text: String) -> String {
    text.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
}
