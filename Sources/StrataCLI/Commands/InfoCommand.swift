import ArgumentParser
import Foundation
import Strata
import StrataPostgres

/// `strata info STORE`: what a store is and what it holds, at a glance.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show what a store is and what it holds.",
        discussion: """
            Prints the store's kind, size (its file, or its tables on a PostgreSQL server), \
            identifier, schema version hash, the version of \
            --model that wrote it, whether it records persistent history (and how much), its last \
            transaction, and how many objects each entity has. Reads without writing.

            Examples:
              strata info Movies.sqlite
              strata info Movies.sqlite --model Movies.xcdatamodeld --json
              strata info 'postgres://app@db.internal/movies?schema=catalog'
              strata info Library.sqlite --model Library.xcdatamodeld   # a Core Data store
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Print JSON instead of a listing.")
    var json = false

    /// What `info` reports.
    struct Report: Encodable {
        struct History: Encodable {
            var transactions: Int64
            var firstTransaction: Int64?
            var lastTransaction: Int64?
            var lastTimestamp: String?
            var lastAuthor: String?
            var lastContextName: String?
        }

        struct EntityCount: Encodable {
            var entity: String
            var objects: Int
        }

        var store: String
        var kind: String
        var fileSize: Int?
        var writeAheadLogSize: Int?
        /// What a PostgreSQL store's tables, indexes and TOAST data take on the server.
        var storageSize: Int?
        var identifier: String
        var versionHash: String
        var modelVersion: String?
        var persistentHistory: History?
        var entities: [EntityCount]
    }

    func run() throws {
        try reportingErrors {
            let store = try OpenedStore.open(storeOptions)
            defer { store.close() }
            let report = try Self.report(store)
            let output = OutputChannel.standardOutput
            if json {
                try output.writeLine(try JSONOutput.text(report))
            } else {
                try Self.print(report, on: output)
            }
            try output.flush()
        }
    }

    static func report(_ opened: OpenedStore) throws -> Report {
        let store = opened.store
        var history: Report.History?
        if store.isPersistentHistoryTrackingEnabled, opened.kind != .coreData {
            var first = try store.fetchHistory(HistoryFetchRequest(includesChanges: false, fetchLimit: 1)).first
            let lastToken = try store.currentHistoryToken()
            var last: HistoryTransaction?
            if let lastToken {
                let before = HistoryToken(
                    storeIdentifier: lastToken.storeIdentifier, transactionNumber: lastToken.transactionNumber - 1)
                last = try store.fetchHistory(HistoryFetchRequest(after: before, includesChanges: false, fetchLimit: 1)).first
            }
            if first == nil { first = last }
            history = Report.History(
                transactions: first.flatMap { first in last.map { $0.transactionNumber - first.transactionNumber + 1 } } ?? 0,
                firstTransaction: first?.transactionNumber, lastTransaction: last?.transactionNumber,
                lastTimestamp: last.map { ValueText.iso8601($0.timestamp) }, lastAuthor: last?.author,
                lastContextName: last?.contextName)
        }
        var counts: [Report.EntityCount] = []
        for entity in opened.schema.entities.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
            let count = try store.count(StoreFetchRequest(entityName: entity.name, includesSubentities: false))
            counts.append(Report.EntityCount(entity: entity.name, objects: count))
        }
        let fileURL = opened.fileURL
        return Report(
            store: opened.location, kind: opened.kind.rawValue,
            fileSize: fileURL.flatMap { fileSize($0.path) },
            writeAheadLogSize: opened.kind == .sqlite ? fileURL.flatMap { fileSize($0.path + "-wal") } : nil,
            storageSize: try? (store as? PostgresStore)?.storageSize(),
            identifier: opened.identifier, versionHash: opened.schema.versionHash,
            modelVersion: opened.modelVersionName, persistentHistory: history, entities: counts)
    }

    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    static func print(_ report: Report, on output: OutputChannel) throws {
        var lines: [(String, String)] = [
            ("Store", report.store),
            ("Kind", report.kind),
        ]
        if let size = report.fileSize {
            var text = byteCount(size)
            if let log = report.writeAheadLogSize, log > 0 { text += " (+ \(byteCount(log)) write-ahead log)" }
            lines.append(("Size", text))
        } else if let size = report.storageSize {
            lines.append(("Size", byteCount(size) + " on the server (tables and indexes)"))
        }
        lines.append(("Identifier", report.identifier))
        lines.append(("Version hash", report.versionHash))
        lines.append(("Model version", report.modelVersion ?? "(name the model with --model to find its version)"))
        if let history = report.persistentHistory {
            var text = "on, \(history.transactions) transaction\(history.transactions == 1 ? "" : "s")"
            if let first = history.firstTransaction, let last = history.lastTransaction { text += " (#\(first)–#\(last))" }
            lines.append(("History", text))
            if let last = history.lastTransaction, let time = history.lastTimestamp {
                var text = "#\(last) at \(time)"
                if let author = history.lastAuthor { text += " by \(author)" }
                if let context = history.lastContextName { text += " (\(context))" }
                lines.append(("Last transaction", text))
            }
        } else {
            lines.append(("History", "off"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        for (label, value) in lines {
            try output.writeLine(
                output.styled(label, .bold) + String(repeating: " ", count: width - label.count + 2) + value)
        }
        try output.writeLine()
        let total = report.entities.reduce(0) { $0 + $1.objects }
        try output.writeLine(output.styled("Entities", .bold) + " (\(report.entities.count), \(total) object\(total == 1 ? "" : "s"))")
        let nameWidth = report.entities.map(\.entity.count).max() ?? 0
        let countWidth = report.entities.map { String($0.objects).count }.max() ?? 0
        for entity in report.entities {
            let count = String(entity.objects)
            try output.writeLine(
                "  " + entity.entity + String(repeating: " ", count: nameWidth - entity.entity.count + 2)
                    + String(repeating: " ", count: countWidth - count.count) + count)
        }
    }

    /// `count` bytes in the largest unit that keeps a number of at least one.
    static func byteCount(_ count: Int) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }
}
