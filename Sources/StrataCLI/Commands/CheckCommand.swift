import ArgumentParser
import Foundation
import Strata

/// `strata check STORE`: finds damage in a store's data, and repairs what has one safe repair
/// when asked.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store for damage; repair what is safe to repair.",
        discussion: """
            Runs SQLite's integrity check, then compares the data with the schema the store \
            records: missing tables and columns, to-one relationships that hold the key of an \
            object that does not exist, join rows that name objects that do not exist, values \
            that break a uniqueness constraint, and required attributes without a value.

            Exits with 0 when the store is consistent, 2 when problems were found (1 when the \
            check itself could not run). With --repair, join rows that name missing objects \
            are deleted and optional to-one relationships that hold missing keys are emptied, \
            in one transaction, after you confirm (or with --yes); nothing else is changed.

            Examples:
              strata check Movies.sqlite
              strata check Movies.sqlite --json
              strata check Movies.sqlite --repair
              strata check 'postgres://app@db.internal/movies' --repair --yes
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Repair what has one safe repair, after confirmation.")
    var repair = false

    @Flag(name: [.customLong("yes"), .customShort("y")], help: "Repair without asking (for scripts).")
    var confirmed = false

    @Flag(help: "Print the problems as JSON.")
    var json = false

    struct Problem: Encodable {
        var kind: String
        var entity: String?
        var property: String?
        var count: Int
        var message: String
        var repairable: Bool
    }

    struct Report: Encodable {
        var store: String
        var problems: [Problem]
        var repaired: [Problem]?
    }

    func validate() throws {
        if confirmed && !repair { throw ValidationError("--yes confirms a repair; add --repair.") }
    }

    func run() throws {
        let status: Int32 = try reportingErrors {
            // The check reads; only a confirmed repair opens the store for writing.
            let problems: [StoreConsistencyProblem]
            let location: String
            do {
                let store = try OpenedStore.open(storeOptions)
                defer { store.close() }
                if repair && store.kind == .coreData {
                    throw CommandFailure(
                        "\(store.location) is a Core Data store, which strata only reads; import it into a Strata store with `strata import-coredata` to repair it.")
                }
                location = store.location
                problems = try store.store.checkConsistency()
            } catch let error as StrataError where error.code == .corruptStore {
                // A file too damaged to open is the finding, not a failure of the check.
                let location = storeOptions.isPostgres ? storeOptions.store : URL(fileURLWithPath: storeOptions.store).path
                try write(
                    Report(
                        store: location,
                        problems: [Problem(kind: "integrity", count: 1, message: oneLine(error), repairable: false)]))
                return ExitStatus.problemsFound
            }
            guard repair, problems.contains(where: \.isRepairable) else {
                try write(Report(store: location, problems: problems.map(Self.problem)))
                if repair && !problems.isEmpty {
                    OutputChannel.standardError.writeMessage("None of these problems has a safe repair; nothing was changed.")
                }
                return problems.isEmpty ? ExitStatus.success : ExitStatus.problemsFound
            }
            if !json { try write(Report(store: location, problems: problems.map(Self.problem))) }
            let repairable = problems.filter(\.isRepairable)
            guard try confirm(repairable, in: location) else {
                OutputChannel.standardError.writeMessage("Nothing was changed.")
                return ExitStatus.problemsFound
            }
            let store: OpenedStore
            do {
                store = try OpenedStore.open(storeOptions, forWriting: true)
            } catch let error as StrataError where error.code == .constraintConflict {
                // Opening for writing restores missing indexes, which duplicates prevent.
                throw CommandFailure(
                    "The store cannot be opened for writing while values break a uniqueness constraint, so nothing was repaired; resolve the duplicates first. (\(oneLine(error)))",
                    status: ExitStatus.problemsFound)
            }
            defer { store.close() }
            let repaired = try store.store.repairConsistency()
            let remaining = try store.store.checkConsistency()
            if json {
                try write(
                    Report(
                        store: store.location, problems: remaining.map(Self.problem),
                        repaired: repaired.map(Self.problem)))
            } else {
                let rows = repaired.reduce(0) { $0 + $1.count }
                try OutputChannel.standardOutput.writeLine(
                    "Repaired \(repaired.count) problem\(repaired.count == 1 ? "" : "s") (\(rows) row\(rows == 1 ? "" : "s") changed); \(remaining.count) remain\(remaining.count == 1 ? "s" : "").")
                try OutputChannel.standardOutput.flush()
            }
            return remaining.isEmpty ? ExitStatus.success : ExitStatus.problemsFound
        }
        if status != ExitStatus.success { throw ExitCode(status) }
    }

    static func problem(_ problem: StoreConsistencyProblem) -> Problem {
        Problem(
            kind: problem.kind.rawValue, entity: problem.entityName, property: problem.propertyName, count: problem.count,
            message: problem.message, repairable: problem.isRepairable)
    }

    private func write(_ report: Report) throws {
        let output = OutputChannel.standardOutput
        if json {
            try output.writeLine(try JSONOutput.text(report))
        } else if report.problems.isEmpty {
            try output.writeLine("\(output.styled("✓", .green)) \(report.store): no problems found.")
        } else {
            let count = report.problems.count
            try output.writeLine("\(report.store): \(count) problem\(count == 1 ? "" : "s") found.")
            for problem in report.problems {
                let mark = problem.repairable ? output.styled("repairable", .yellow) : output.styled("needs a person", .red)
                try output.writeLine("  \(output.styled("✗", .red)) [\(problem.kind)] \(problem.message) (\(mark))")
            }
        }
        try output.flush()
    }

    /// Asks at the terminal whether to repair; `true` with --yes. Without a terminal to ask
    /// at, refuses rather than write unasked.
    private func confirm(_ problems: [StoreConsistencyProblem], in location: String) throws -> Bool {
        if confirmed { return true }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("--repair changes the store; confirm at a terminal, or add --yes.")
        }
        let rows = problems.reduce(0) { $0 + $1.count }
        try OutputChannel.standardError.write(
            "Repair \(problems.count) problem\(problems.count == 1 ? "" : "s") (\(rows) row\(rows == 1 ? "" : "s")) in \(location)? [y/N] ")
        try OutputChannel.standardError.flush()
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
