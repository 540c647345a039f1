import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCLI

/// Runs the `strata` executable with `arguments` on a thread of its own, not on one of Swift's
/// cooperative threads (a child that takes long on a loaded machine would stall every other
/// test of the process); returns its exit status, standard output and standard error.
func runStrata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
    try await offThePool { try runStrata(arguments) }
}

/// Runs the `strata` executable with `arguments`, blocking the calling thread; returns its exit
/// status, standard output and standard error.
///
/// Both streams are read at once, so a child that fills one pipe while this process waits on
/// the other cannot stall them both. A child that dies of a signal (a crash under a sanitizer,
/// say) has its status set to the signal's number, and a line naming the signal is added to its
/// standard error, so that every failure message that shows standard error shows it.
func runStrata(_ arguments: [String]) throws -> (status: Int32, output: String, errorOutput: String) {
    let executable = try #require(
        StrataExecutable.locate(), "no `strata` next to the tests in \(StrataExecutable.candidateFolders())")
    let child = Process()
    child.executableURL = executable
    child.arguments = arguments
    let outputPipe = Pipe()
    let errorPipe = Pipe()
    child.standardOutput = outputPipe
    child.standardError = errorPipe
    try child.run()
    let errorReader = PipeReader(errorPipe)
    let output = outputPipe.fileHandleForReading.readDataToEndOfFile()
    let errorOutput = errorReader.waitForEnd()
    child.waitUntilExit()
    return (child.terminationStatus, String(decoding: output, as: UTF8.self), errorOutput + signalNote(child))
}

/// A line saying which signal ended `process`, or nothing when it exited.
func signalNote(_ process: Process) -> String {
    process.terminationReason == .uncaughtSignal ? "\n[the child died of signal \(process.terminationStatus)]\n" : ""
}

/// How a child process ended, for failure messages: "exited with status 1", "died of signal 11".
func exitDescription(_ process: Process) -> String {
    if process.isRunning { return "is still running" }
    return process.terminationReason == .uncaughtSignal
        ? "died of signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
}

/// Reads a pipe to its end on a thread of its own.
final class PipeReader: Sendable {
    private let state = LockedBox((data: Data(), ended: false))
    private let ended = DispatchSemaphore(value: 0)

    /// Starts reading `pipe`, whose writing end the child holds.
    init(_ pipe: Pipe) {
        let reading = pipe.fileHandleForReading
        let state = state
        let ended = ended
        Thread.detachNewThread {
            let data = reading.readDataToEndOfFile()
            state.withLock { $0 = (data, true) }
            ended.signal()
        }
    }

    /// Waits until the pipe's writers have all closed it; returns what was read, as text.
    func waitForEnd() -> String {
        ended.wait()
        ended.signal()  // later calls return at once
        return state.withLock { String(decoding: $0.data, as: UTF8.self) }
    }
}

/// Runs `strata` on a pseudo-terminal as ``runStrataInTerminal(_:)-(_)`` does, on a thread of
/// its own instead of one of Swift's cooperative threads.
func runStrataInTerminal(_ arguments: [String]) async throws -> (status: Int32, terminal: String) {
    try await offThePool { try runStrataInTerminal(arguments) }
}

/// Runs the `strata` executable with `arguments` on a pseudo-terminal (util-linux `script`), as
/// a person at a terminal would; returns its exit status and everything it wrote to the
/// terminal (standard output and standard error together, carriage returns included).
func runStrataInTerminal(_ arguments: [String]) throws -> (status: Int32, terminal: String) {
    let executable = try #require(
        StrataExecutable.locate(), "no `strata` next to the tests in \(StrataExecutable.candidateFolders())")
    func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let command = ([executable.path] + arguments).map(quoted).joined(separator: " ")
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    // -q: no start and end banners; -e: exit with the command's status; -c: the command.
    child.arguments = ["-qec", command, "/dev/null"]
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm"
    child.environment = environment
    let outputPipe = Pipe()
    child.standardOutput = outputPipe
    child.standardError = FileHandle.nullDevice
    child.standardInput = FileHandle.nullDevice
    try child.run()
    let output = outputPipe.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    return (child.terminationStatus, String(decoding: output, as: UTF8.self))
}
