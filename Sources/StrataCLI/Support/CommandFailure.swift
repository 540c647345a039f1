import ArgumentParser
import Foundation
import Strata

/// The exit statuses of `strata` commands, as `strata --help` documents them.
enum ExitStatus {
    /// The command did what it was asked.
    static let success: Int32 = 0
    /// The command failed: a missing or damaged store, bad input, a store error.
    static let failure: Int32 = 1
    /// The command ran and found problems: `strata check` on a damaged store, `strata versions`
    /// when no version wrote the store.
    static let problemsFound: Int32 = 2
    /// The command line itself was wrong (ArgumentParser's own status for usage errors).
    static let usage: Int32 = 64
}

/// A failure the tool reports itself, with the message a person reads and the status scripts
/// read.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong and, when there is one, how to fix it: one line.
    var message: String
    /// The exit status.
    var status: Int32 = ExitStatus.failure

    init(_ message: String, status: Int32 = ExitStatus.failure) {
        self.message = message
        self.status = status
    }

    var description: String { message }
}

/// Runs a command's work, turning any error into one line on standard error ("strata: error:
/// …") and a non-zero exit status, never a stack trace.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw exit(reporting: error)
    }
}

/// The asynchronous form of ``reportingErrors(_:)``.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw exit(reporting: error)
    }
}

/// Writes `error` to standard error as one line and returns the exit to throw.
func exit(reporting error: any Error) -> any Error {
    switch error {
    case let exit as ExitCode:
        return exit
    case let failure as CommandFailure:
        OutputChannel.standardError.writeError(failure.message)
        return ExitCode(failure.status)
    case let error as StrataError:
        OutputChannel.standardError.writeError(oneLine(error))
        return ExitCode(ExitStatus.failure)
    case is CancellationError:
        return ExitCode(ExitStatus.failure)
    default:
        // ArgumentParser's own errors (validation, usage) keep their handling.
        if error is ValidationError || String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            return error
        }
        OutputChannel.standardError.writeError(String(describing: error).split(separator: "\n").joined(separator: "; "))
        return ExitCode(ExitStatus.failure)
    }
}

/// A Strata error as one line: its message, its code for scripts, and what caused it.
func oneLine(_ error: StrataError) -> String {
    var text = error.message
    for detail in error.details.prefix(3) { text += " " + detail.message }
    if error.details.count > 3 { text += " (and \(error.details.count - 3) more)" }
    if let underlying = error.underlyingError, !(underlying is StrataError) {
        let cause = String(describing: underlying).split(separator: "\n").first.map(String.init) ?? ""
        if !cause.isEmpty, !text.contains(cause) { text += " (\(cause))" }
    }
    return text.replacingOccurrences(of: "\n", with: " ") + " [\(error.code.rawValue)]"
}
