import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `strata shell` as a script feeds it (lines on a pipe) and as a person types at it (line
/// editing and history on a pseudo-terminal).
@Suite(.timeLimit(.minutes(10))) struct ShellCommandTests {
    /// Four movies, two directors and a critic: `Movie --count` is 4, `Person --count` 3.
    private static func makeStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Shell.sqlite")
        let container = try PersistentContainer(
            name: "Shell", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let mann = Director(context: context)
        mann.name = "Michael Mann"
        let kurosawa = Director(context: context)
        kurosawa.name = "Akira Kurosawa"
        Critic(context: context).name = "Pauline K."
        for (title, director) in [("Heat", mann), ("Collateral", mann), ("Ronin", nil), ("hidden fortress", kurosawa)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
        }
        try context.save()
        try container.close()
        return url
    }

    /// Runs `strata shell STORE` with `input` on its standard input (a pipe) and `HOME` in
    /// `home`; returns its exit status and what it wrote.
    private func shell(
        _ store: URL, input: String, home: URL
    ) async throws -> (status: Int32?, output: String, errorOutput: String) {
        let child = try InteractiveStrata(["shell", store.path], environment: ["HOME": home.path])
        try child.write(input)
        child.closeInput()
        let status = try await child.waitForExit()
        return (status, child.outputText, child.errorText)
    }

    // MARK: Lines from a pipe

    @Test func runsPipedLinesInOrder() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let input = """
            Movie --count
            Movie title BEGINSWITH[c] "h" --select title
            .entities
            .format csv
            Movie --select title --sort title

            """
        let result = try await shell(store, input: input, home: directory.url)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
        // Not a terminal: NDJSON until `.format csv`, and no prompt or banner.
        let lines = result.output.components(separatedBy: "\n")
        try #require(lines.count >= 7, "\(result.output.debugDescription)")
        #expect(lines[0] == #"{"count":4}"#)
        #expect(Set(lines[1...2]) == [#"{"title":"Heat"}"#, #"{"title":"hidden fortress"}"#], "\(result.output)")
        #expect(
            Array(lines[3...6]) == [
                #"{"entity":"Critic","objects":1}"#, #"{"entity":"Director","objects":2}"#,
                #"{"entity":"Movie","objects":4}"#, #"{"entity":"Review","objects":0}"#,
            ], "\(result.output)")
        #expect(
            lines.dropFirst(7).joined(separator: "\n") == "title\r\nCollateral\r\nHeat\r\nRonin\r\nhidden fortress\r\n",
            "\(result.output.debugDescription)")
        #expect(!result.output.contains("strata>"))
        #expect(!result.output.contains("\u{1B}"))
    }

    @Test func aBadLineIsReportedAndTheShellGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await shell(store, input: "Movi --count\nMovie --count\n", home: directory.url)
        // A failed line makes a script's shell fail, after running every line.
        #expect(result.status == 1)
        #expect(result.output == "{\"count\":4}\n", "\(result.output)")
        let messages = result.errorOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(messages.count == 2 && messages.last == "", "one line: \(result.errorOutput.debugDescription)")
        #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("Movi"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("Did you mean 'Movie'"), "\(result.errorOutput)")

        let unknownCommand = try await shell(store, input: ".tables\n.format xml\nMovie --count\n", home: directory.url)
        #expect(unknownCommand.status == 1)
        #expect(unknownCommand.output == "{\"count\":4}\n", "\(unknownCommand.output)")
        let lines = unknownCommand.errorOutput.split(separator: "\n")
        #expect(lines.count == 2, "\(unknownCommand.errorOutput)")
        #expect(lines.allSatisfy { $0.hasPrefix("strata: error: ") }, "\(unknownCommand.errorOutput)")
    }

    @Test func quitEndsTheSessionEarly() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await shell(
            store, input: "Movie --count\n.quit\nMovi --count\nMovie --select title\n", home: directory.url)
        // The lines after .quit never run: no output, no error, success.
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "{\"count\":4}\n", "\(result.output)")
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
    }

    // MARK: A person at a terminal

    @Test func editsAndRecallsLinesAtATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let home = directory.file("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let terminal = try InteractiveStrata(["shell", store.path], inTerminal: true, environment: ["HOME": home.path])

        /// The counts the shell has printed so far: the lines that are only a number.
        func counts(_ text: String) -> [Int] {
            text.components(separatedBy: CharacterSet(charactersIn: "\r\n"))
                .compactMap { Int(stripEscapes($0).trimmingCharacters(in: .whitespaces)) }
        }
        /// Whether the shell has printed `count` results and is waiting at its prompt again.
        func waitForPrompt(afterResults count: Int) async throws -> Bool {
            try await terminal.waitForOutput { text in
                counts(text).count >= count && stripEscapes(text).hasSuffix("strata> ")
            }
        }

        // The editor puts the terminal in raw mode before it shows the prompt: type only then.
        try #require(try await waitForPrompt(afterResults: 0), "no prompt: \(terminal.outputText.debugDescription)")
        try terminal.write("Movie --count\r")
        try #require(try await waitForPrompt(afterResults: 1), "\(terminal.outputText.debugDescription)")
        // ↑ recalls the line; more text goes at its end.
        try terminal.write("\u{1B}[A")
        try terminal.write(" --excluding-subentities\r")
        try #require(try await waitForPrompt(afterResults: 2), "\(terminal.outputText.debugDescription)")
        // ↑ ↑ recalls the first line; Ctrl-A, five Ctrl-F and five Backspaces erase "Movie".
        try terminal.write("\u{1B}[A\u{1B}[A")
        try terminal.write("\u{01}" + String(repeating: "\u{06}", count: 5) + String(repeating: "\u{7F}", count: 5))
        try terminal.write("Person\r")
        try #require(try await waitForPrompt(afterResults: 3), "\(terminal.outputText.debugDescription)")
        // Ctrl-D on an empty line leaves.
        try terminal.write("\u{04}")
        let status = try await terminal.waitForExit()
        terminal.closeInput()

        #expect(status == 0, "\(terminal.outputText.debugDescription)")
        // Movie, Movie without subentities (it has none), and Person with its subentities.
        #expect(counts(terminal.outputText) == [4, 4, 3], "\(terminal.outputText.debugDescription)")
        #expect(
            terminal.outputText.contains("strata shell on \(store.path)"), "\(terminal.outputText.debugDescription)")
        let history = try String(contentsOf: home.appendingPathComponent(".strata_history"), encoding: .utf8)
        #expect(
            history == "Movie --count\nMovie --count --excluding-subentities\nPerson --count\n",
            "\(history.debugDescription)")
    }
}

/// A `strata` child process that a test talks to over time: it writes to the child's standard
/// input whenever it likes and reads what the child writes as it comes. On pipes, or on a
/// pseudo-terminal through util-linux `script` (which then merges standard output and standard
/// error into ``outputText``, carriage returns included).
///
/// Shared by the tests of `strata shell`, `strata watch` and `strata check`.
final class InteractiveStrata {
    let process: Process
    private let input = Pipe()
    private let output = LockedBox((data: Data(), ended: false))
    private let errors = LockedBox((data: Data(), ended: false))

    /// Starts `strata` with `arguments`; `environment` changes the test's environment (a `nil`
    /// value removes a variable).
    init(_ arguments: [String], inTerminal: Bool = false, environment changes: [String: String?] = [:]) throws {
        let executable = try #require(
            StrataExecutable.locate(), "no `strata` next to the tests in \(StrataExecutable.candidateFolders())")
        // A write to a child that already ended must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        process = Process()
        var environment = ProcessInfo.processInfo.environment
        if inTerminal {
            func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            // -q: no banners; -e: the command's exit status; -c: the command.
            process.arguments = [
                "-qec", ([executable.path] + arguments).map(quoted).joined(separator: " "), "/dev/null",
            ]
            environment["TERM"] = "xterm"
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        for (name, value) in changes { environment[name] = value }
        process.environment = environment
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardInput = input
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        try process.run()
        try? input.fileHandleForReading.close()
        try? outputPipe.fileHandleForWriting.close()
        try? errorPipe.fileHandleForWriting.close()
        for (pipe, box) in [(outputPipe, output), (errorPipe, errors)] {
            let reading = pipe.fileHandleForReading
            // Blocking reads on a thread of their own, until the child's end of the pipe closes.
            Thread.detachNewThread {
                while true {
                    let data = reading.availableData
                    if data.isEmpty { break }
                    box.withLock { $0.data.append(data) }
                }
                box.withLock { $0.ended = true }
            }
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Everything the child has written to standard output (or the terminal) so far.
    var outputText: String { output.withLock { String(decoding: $0.data, as: UTF8.self) } }

    /// Everything the child has written to standard error so far (nothing on a terminal).
    var errorText: String { errors.withLock { String(decoding: $0.data, as: UTF8.self) } }

    /// The complete lines of standard output so far.
    var outputLines: [String] {
        outputText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Writes `text` to the child's standard input (through the terminal, as typed keys).
    func write(_ text: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Ends the child's standard input.
    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Sends SIGINT, as Ctrl-C at a terminal does.
    func interrupt() {
        kill(process.processIdentifier, SIGINT)
    }

    /// Waits until `condition` holds for ``outputText``; `false` if it does not within
    /// `timeout` (patience for a loaded machine, not a measurement) or the output ends first.
    /// When the child ends first, it returns at once and records how the child ended and its
    /// standard error.
    func waitForOutput(timeout: Duration = .seconds(300), until condition: (String) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(outputText) { return true }
            if output.withLock({ $0.ended }) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        if condition(outputText) { return true }
        if output.withLock({ $0.ended }) {
            // Its output ended: it exited, or is about to.
            _ = try await waitForExit(recordingSignals: false)
            Issue.record(
                "`strata \(process.arguments?.joined(separator: " ") ?? "")` \(exitDescription(process)) before its output showed what the test waits for; stderr: \(errorText)"
            )
        }
        return false
    }

    /// Waits for the child to exit and its output to be read to the end; returns its exit
    /// status, or `nil` (after killing it) when it does not end within `timeout` or dies of a
    /// signal.
    func waitForExit(timeout: Duration = .seconds(300), recordingSignals: Bool = true) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning || !output.withLock({ $0.ended }) || !errors.withLock({ $0.ended }) {
            guard ContinuousClock.now < deadline else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                Issue.record(
                    "`strata \(process.arguments?.joined(separator: " ") ?? "")` did not end within \(timeout)")
                return nil
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard process.terminationReason == .exit else {
            if recordingSignals {
                Issue.record("`strata` died of signal \(process.terminationStatus); stderr: \(errorText)")
            }
            return nil
        }
        return process.terminationStatus
    }
}

/// `text` without ANSI escape sequences (CSI … letter, and private modes such as `?25l`).
private func stripEscapes(_ text: String) -> String {
    text.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
}
