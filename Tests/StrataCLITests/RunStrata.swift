import Foundation
import Testing

@testable import StrataCLI

/// Runs the `strata` executable with `arguments`; returns its exit status, standard output and
/// standard error.
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
    let output = outputPipe.fileHandleForReading.readDataToEndOfFile()
    let errorOutput = errorPipe.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    return (child.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errorOutput, as: UTF8.self))
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
