import ArgumentParser
import Foundation
import Strata

/// `strata export STORE`: every object of one entity or of all, as NDJSON, JSON or CSV,
/// streamed.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a store's objects as NDJSON, JSON or CSV.",
        discussion: """
            Streams the objects in primary-key order from one read transaction (a consistent \
            view, even while an app writes), holding a thousand rows at a time, so that a \
            store of any size exports in little memory. Each object has its id (_id), its \
            entity (_entity, when several entities or subentities are exported), its attributes, \
            and the ids its to-one relationships hold. Values use one encoding each (dates in ISO \
            8601, UTC, with every digit of the second that tells the stored Date apart from any \
            other; binary data in Base64; decimals exactly) that `strata import` reads back to \
            the same values. In --where, CAST("2000-01-01", "NSDate") is a date in ISO 8601 \
            (CAST(-86400, "NSDate"): seconds since 2001).

            Without --entity every entity is exported: NDJSON then holds one line per object of \
            any entity, JSON one array per entity; CSV needs one --entity. A file named with \
            --output appears only once complete. A progress bar shows on a terminal.

            Examples:
              strata export Movies.sqlite --entity Movie > movies.ndjson
              strata export Movies.sqlite --entity Movie --format csv --output movies.csv
              strata export Movies.sqlite --format json --output everything.json
              strata export Movies.sqlite --entity Movie \\
                  --where 'releaseDate > CAST("2000-01-01", "NSDate")'
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Option(
        name: [.customLong("entity"), .customShort("e")],
        help: ArgumentHelp("An entity to export, with its subentities (repeat for several; default: every entity).", valueName: "entity"))
    var entities: [String] = []

    @Option(name: [.customLong("where"), .customShort("w")], help: ArgumentHelp("Only objects matching this predicate (needs one --entity).", valueName: "predicate"))
    var predicate: String?

    @Option(help: "The format: ndjson (default), json or csv.")
    var format: ExportFormat = .ndjson

    @Option(name: [.customLong("output"), .customShort("o")], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(name: .customLong("no-progress"), help: "Show no progress bar.")
    var hidesProgress = false

    /// The formats of `strata export`.
    enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
        case ndjson, json, csv

        /// The output format that writes it.
        var outputFormat: OutputFormat {
            switch self {
            case .ndjson: .ndjson
            case .json: .json
            case .csv: .csv
            }
        }
    }

    func validate() throws {
        if predicate != nil && entities.count != 1 { throw ValidationError("--where needs exactly one --entity.") }
    }

    func run() throws {
        try reportingErrors {
            let store = try OpenedStore.open(storeOptions)
            defer { store.close() }
            let chosen: [Entity]
            if entities.isEmpty {
                chosen = store.schema.entities.filter { $0.superentity == nil }.sorted { $0.name < $1.name }
            } else {
                chosen = try entities.map { try store.entity(named: $0) }
            }
            if format == .csv && chosen.count != 1 {
                throw CommandFailure(
                    "CSV holds one entity; name it with --entity (the store has \(chosen.map(\.name).joined(separator: ", "))).")
            }
            var plans: [FetchPlan] = []
            for entity in chosen {
                var request = StoreFetchRequest(entityName: entity.name)
                if let predicate {
                    do {
                        request.predicate = try QueryPredicate(format: predicate)
                        plans.append(try FetchPlan(request, in: store.schema))
                    } catch let error as StrataError {
                        throw StoreQuery.predicateFailure(error, in: predicate)
                    }
                } else {
                    plans.append(try FetchPlan(request, in: store.schema))
                }
            }
            let channel = try output.map { try OutputChannel.creatingFile(atPath: $0) } ?? .standardOutput
            let progress = ProgressBar(isEnabled: !hidesProgress, writesPhaseLines: false)
            do {
                let count = try Self.export(
                    plans, from: store, format: format, to: channel, progress: progress)
                progress.finish()
                try channel.close()
                if let output {
                    OutputChannel.standardError.writeMessage(
                        "Exported \(ProgressBar.grouped(count)) object\(count == 1 ? "" : "s") to \(output).")
                }
            } catch {
                progress.finish()
                channel.discard()
                throw error
            }
        }
    }

    /// Writes the objects `plans` match to `channel`; returns how many it wrote.
    static func export(
        _ plans: [FetchPlan], from store: OpenedStore, format: ExportFormat, to channel: OutputChannel,
        progress: ProgressBar
    ) throws -> Int {
        let several = plans.count > 1
        var total = 0
        if format == .json && several { try channel.write("{") }
        for (index, plan) in plans.enumerated() {
            let expected = try store.store.count(plan)
            var columns = RowColumns(entity: plan.entity, schema: store.schema, includingEntityName: several)
            var writer = format.outputFormat.makeWriter(on: channel)
            if format == .json && several {
                var key: [UInt8] = Array((index == 0 ? "\n" : ",\n").utf8)
                ValueText.appendJSONString(plan.entity.name, to: &key)
                key.append(contentsOf: ": ".utf8)
                try channel.write(bytes: key)
            }
            try writer.begin(columns: columns.names)
            var written = 0
            progress.update(phase: plan.entity.name, completed: 0, total: expected)
            try store.store.fetch(plan) { rows in
                for row in rows { try writer.write(columns.values(of: row)) }
                written += rows.count
                progress.update(phase: plan.entity.name, completed: written, total: Swift.max(expected, written))
            }
            try writer.finish()
            total += written
        }
        if format == .json && several { try channel.write(plans.isEmpty ? "}\n" : "\n}\n") }
        try channel.flush()
        return total
    }
}
