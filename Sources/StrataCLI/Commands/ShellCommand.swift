import ArgumentParser
import Foundation
import Strata

/// `strata shell STORE`: an interactive prompt for queries, with line editing and history.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Query a store at an interactive prompt, with line editing and history.",
        discussion: """
            Each line is an entity, a predicate, and the long options of `strata query`:

              strata> Movie title BEGINSWITH[c] "the" --sort -releaseDate --limit 5
              strata> Movie --count
              strata> Movie director.name == "Michael Mann" --select title,releaseDate
              strata> Movie --group-by director.name --sum boxOffice

            and these commands: .entities, .schema [ENTITY], .info, .format table|json|ndjson|csv, \
            .help, .quit. Arrow keys edit and recall lines; the history is kept in \
            ~/.strata_history. Lines can also come from a pipe, one query per line.

            Examples:
              strata shell Movies.sqlite
              echo 'Movie --count' | strata shell Movies.sqlite
            """)

    @OptionGroup var storeOptions: StoreOptions

    func run() throws {
        let failed = try reportingErrors {
            let store = try OpenedStore.open(storeOptions)
            defer { store.close() }
            var session = ShellSession(store: store)
            return session.run()
        }
        if failed { throw ExitCode(ExitStatus.failure) }
    }
}

/// One shell session on an open store.
struct ShellSession {
    let store: OpenedStore
    var format: OutputFormat
    private let output = OutputChannel.standardOutput
    private let errors = OutputChannel.standardError

    init(store: OpenedStore) {
        self.store = store
        format = OutputChannel.standardOutput.isTerminal ? .table : .ndjson
    }

    /// Reads and runs lines until the end of input or `.quit`; returns whether any line failed
    /// while reading from something other than a terminal (so scripts see failures).
    mutating func run() -> Bool {
        let home = ProcessInfo.processInfo.environment["HOME"].map { URL(fileURLWithPath: $0) }
        let editor = LineEditor(historyFile: home?.appendingPathComponent(".strata_history"))
        let interactive = isatty(STDIN_FILENO) == 1
        if interactive {
            errors.writeMessage(
                "strata shell on \(store.location) (\(store.kind.rawValue)). Type .help for help, .quit to leave.")
        }
        var anyFailed = false
        while let line = editor.readLine(prompt: interactive ? output.styled("strata> ", .bold) : "") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if [".quit", ".exit", "quit", "exit"].contains(trimmed) { break }
            do {
                try execute(trimmed)
            } catch {
                anyFailed = true
                errors.writeError(Self.message(for: error))
            }
            try? output.flush()
        }
        return anyFailed && !interactive
    }

    /// Runs one line.
    mutating func execute(_ line: String) throws {
        if line.hasPrefix(".") || line == "help" {
            try command(line)
            return
        }
        let arguments = try Self.arguments(of: line)
        let query = try ShellQuery.parse(arguments)
        let resolved = try StoreQuery(entityName: query.entity, options: query.query, store: store)
        var writer = OutputFormat.resolve(query.format ?? format, json: false, csv: false, for: output).makeWriter(on: output)
        try resolved.run(on: store, into: &writer)
    }

    private mutating func command(_ line: String) throws {
        let words = line.split(separator: " ").map(String.init)
        switch words.first ?? "" {
        case ".help", "help":
            try output.writeLine(
                """
                ENTITY [PREDICATE] [--OPTION …]   fetch objects (options of `strata query`: --sort, --limit, --select, --count, --sum, --group-by …)
                .entities                        the entities and how many objects each has
                .schema [ENTITY]                 the schema, or one entity
                .info                            what the store is (as `strata info`)
                .format table|json|ndjson|csv    how results print
                .quit                            leave (or Ctrl-D)
                """)
        case ".entities":
            var writer = format.makeWriter(on: output)
            try writer.begin(columns: ["entity", "objects"])
            for entity in store.schema.entities.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
                let count = try store.store.count(StoreFetchRequest(entityName: entity.name, includesSubentities: false))
                try writer.write([.string(entity.name), .integer(Int64(count))])
            }
            try writer.finish()
        case ".schema":
            if words.count > 1 {
                try output.writeLine(try store.entity(named: words[1]).description)
            } else {
                try output.writeLine(store.schema.description)
            }
        case ".info":
            try InfoCommand.print(try InfoCommand.report(store), on: output)
        case ".format":
            guard words.count == 2, let chosen = OutputFormat(rawValue: words[1]) else {
                throw CommandFailure("Write .format table, .format json, .format ndjson or .format csv.")
            }
            format = chosen
        default:
            let known = [".entities", ".schema", ".info", ".format", ".help", ".quit"]
            throw CommandFailure("Unknown command \(words.first ?? line).\(didYouMean(words.first ?? line, in: known)) Type .help for help.")
        }
    }

    /// The words of a line: the entity, the predicate as typed (everything before the first
    /// ` --`, quotes and all), and the options split as a shell would.
    static func arguments(of line: String) throws -> [String] {
        var inQuote: Character?
        var split: String.Index?
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if let quote = inQuote {
                if character == quote { inQuote = nil }
            } else if character == "\"" || character == "'" {
                inQuote = character
            } else if character == " ", line[index...].hasPrefix(" --") {
                split = index
                break
            }
            index = line.index(after: index)
        }
        let head = String(line[..<(split ?? line.endIndex)]).trimmingCharacters(in: .whitespaces)
        let tail = split.map { String(line[$0...]) } ?? ""
        guard let entityEnd = head.firstIndex(of: " ") else {
            return [head] + (try words(of: tail))
        }
        let entity = String(head[..<entityEnd])
        let predicate = head[entityEnd...].trimmingCharacters(in: .whitespaces)
        return [entity, "--where", predicate] + (try words(of: tail))
    }

    /// `text` split into words as a POSIX shell would: blanks separate; single quotes keep
    /// everything; double quotes keep everything but `\"` and `\\`.
    static func words(of text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var hasWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t":
                if hasWord { words.append(current) }
                current = ""
                hasWord = false
            case "'":
                hasWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" {
                        closed = true
                        break
                    }
                    current.append(next)
                }
                guard closed else { throw CommandFailure("A quote (') is not closed.") }
            case "\"":
                hasWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\", let escaped = iterator.next() {
                        if escaped != "\"" && escaped != "\\" { current.append("\\") }
                        current.append(escaped)
                        continue
                    }
                    current.append(next)
                }
                guard closed else { throw CommandFailure("A quote (\") is not closed.") }
            default:
                hasWord = true
                current.append(character)
            }
        }
        if hasWord { words.append(current) }
        return words
    }

    /// One line's message for an error, as the tool prints errors.
    static func message(for error: any Error) -> String {
        switch error {
        case let failure as CommandFailure: failure.message
        case let error as StrataError: oneLine(error)
        default: ShellQuery.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }
}

/// The arguments of one shell line.
struct ShellQuery: ParsableArguments {
    @Argument var entity: String
    @OptionGroup var query: QueryOptions
    @Option var format: OutputFormat?
}
