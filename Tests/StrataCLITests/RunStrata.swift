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
