import ArgumentParser
import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `strata watch STORE ENTITY`: a live query in the terminal, shown again after every commit
/// from any process (or, on PostgreSQL, any server).
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show a query live: its results again after every commit, from any process.",
        discussion: """
            Runs the query, then again after every commit to the store: this process's, another \
            process's (SQLite stores are polled ten times a second) or another server's \
            (PostgreSQL stores announce commits). On a terminal the table is redrawn in place; \
            otherwise each result is one line of JSON (an array of objects, or the aggregates), \
            for scripts. Stop with Ctrl-C, or after --updates results.

            Examples:
              strata watch Movies.sqlite Movie --where 'title BEGINSWITH[c] "the"' \\
                  --sort -releaseDate
              strata watch Movies.sqlite Movie --count
              strata watch 'postgres://app@db.internal/movies' Movie \\
                  --group-by director.name --count
              strata watch Movies.sqlite Movie --updates 2 --json  # now and after a commit
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: ArgumentHelp("The entity to fetch.", valueName: "entity"))
    var entity: String

    @OptionGroup var query: QueryOptions

    @Option(help: "Stop after showing this many results (the first counts).")
    var updates: Int?

    @Flag(help: "Print each result as a line of JSON, even on a terminal.")
    var json = false

    func validate() throws {
        if let updates, updates < 1 { throw ValidationError("--updates must be 1 or more.") }
    }

    func run() async throws {
        try await reportingErrors {
            let store = try OpenedStore.open(storeOptions, observingOtherProcesses: true)
            defer { store.close() }
            let query = try StoreQuery(entityName: entity, options: query, store: store)
            let output = OutputChannel.standardOutput
            let redraws = output.isTerminal && !json
            let (commits, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let observation = store.container.addCommitObserver { _ in continuation.yield() }
            defer { observation.cancel() }
            let stop = StopSignals { continuation.finish() }
            defer { stop.cancel() }
            if redraws { try output.write("\u{1B}[?25l") }
            defer {
                if redraws {
                    try? output.write("\u{1B}[?25h")
                    try? output.flush()
                }
            }
            var shown = 0
            var last: ResultCollector?
            var iterator = commits.makeAsyncIterator()
            repeat {
                var result = ResultCollector()
                try query.run(on: store, into: &result)
                // A commit that leaves the result as it was (another query's data, or a store
                // merely opened for writing) shows nothing new.
                if result != last {
                    try show(result, of: store, on: output, redrawing: redraws)
                    last = result
                    shown += 1
                }
                if let updates, shown >= updates { break }
                guard await iterator.next() != nil else { break }
                // Commits that arrive together make one redraw.
                try? await Task.sleep(for: .milliseconds(30))
            } while !Task.isCancelled
        }
    }

    private func show(_ result: ResultCollector, of store: OpenedStore, on output: OutputChannel, redrawing: Bool) throws {
        if redrawing {
            var writer = TableWriter(channel: output)
            try output.write("\u{1B}[H\u{1B}[2J")
            let time = ValueText.iso8601(Date()).replacingOccurrences(of: "T", with: " ")
            try output.writeLine(
                output.styled("strata watch \(entity) — \(store.location)", .bold) + output.styled("  \(time)  (Ctrl-C to stop)", .dim))
            try output.writeLine()
            try result.replay(into: &writer)
            let count = result.rows.count
            try output.writeLine(output.styled("\(count) row\(count == 1 ? "" : "s")", .dim))
        } else {
            var writer = JSONLineWriter(channel: output)
            try result.replay(into: &writer)
        }
        try output.flush()
    }
}

/// A query's result, held to be compared with the previous one before it is shown.
struct ResultCollector: RecordWriter, Equatable {
    private(set) var columns: [String] = []
    private(set) var rows: [[AttributeValue?]] = []

    mutating func begin(columns: [String]) throws { self.columns = columns }
    mutating func write(_ values: [AttributeValue?]) throws { rows.append(values) }
    mutating func finish() throws {}

    /// Hands the result to another writer.
    func replay(into writer: inout some RecordWriter) throws {
        try writer.begin(columns: columns)
        for row in rows { try writer.write(row) }
        try writer.finish()
    }
}

/// One JSON array per result, on one line.
struct JSONLineWriter: RecordWriter {
    let channel: OutputChannel
    private var inner: JSONRecordWriter
    private var bytes: [UInt8] = []
    private var isFirst = true

    init(channel: OutputChannel) {
        self.channel = channel
        inner = JSONRecordWriter(channel: channel, asArray: false)
    }

    mutating func begin(columns: [String]) throws {
        try inner.begin(columns: columns)
        bytes = Array("[".utf8)
        isFirst = true
    }

    mutating func write(_ values: [AttributeValue?]) throws {
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
        isFirst = false
        inner.appendObject(values, to: &bytes)
    }

    mutating func finish() throws {
        bytes.append(contentsOf: "]\n".utf8)
        try channel.write(bytes: bytes)
        try channel.flush()
    }
}

/// Calls `action` once on SIGINT or SIGTERM, instead of the default of dying mid-write (which
/// could leave a terminal without its cursor).
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(_ action: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
