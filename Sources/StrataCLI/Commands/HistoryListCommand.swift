import ArgumentParser
import Foundation
import Strata

/// `strata history [list] STORE`: the transactions, oldest first.
struct HistoryListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the transactions of a store's history, oldest first.")

    @Argument(help: "The store: an SQLite file or a postgres:// URL.")
    var store: String

    @Option(name: .customLong("author"), help: "Only transactions of this author (repeat for several).")
    var authors: [String] = []

    @Option(help: "Only transactions at or after this date (ISO 8601: 2026-11-24 or 2026-11-24T10:00:00Z).")
    var since: String?

    @Option(help: "Only transactions after this transaction number.")
    var after: Int64?

    @Option(help: "At most this many transactions.")
    var limit: Int?

    @Flag(help: "List each transaction's changes too.")
    var changes = false

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        var output = StandardOutput()
        try reportingErrors {
            let date = try since.map(HistoryDates.parse)
            try Self.run(
                location: store, authors: authors, since: date, after: after, limit: limit, changes: changes, json: json,
                into: &output)
        }
    }

    static func run(
        location: String, authors: [String], since: Date?, after: Int64?, limit: Int?, changes: Bool, json: Bool,
        into output: inout some TextOutputStream
    ) throws {
        let opened = try HistoryStores.open(location, isReadOnly: true)
        defer { opened.close() }
        let store = opened.store
        var request = HistoryFetchRequest(
            after: after.map { HistoryToken(storeIdentifier: store.identifier, transactionNumber: $0) },
            authors: authors.isEmpty ? nil : Set(authors), fetchLimit: limit)
        request.date = since
        let transactions = try store.fetchHistory(request)
        if json {
            print(try HistoryJSON.encode(transactions, includingChanges: changes), to: &output)
            return
        }
        guard !transactions.isEmpty else {
            FileHandle.standardError.write(Data("No transactions.\n".utf8))
            return
        }
        let rows = transactions.map { transaction -> [String] in
            let counts = HistoryJSON.counts(transaction)
            return [
                "\(transaction.transactionNumber)", HistoryDates.format(transaction.timestamp),
                transaction.author ?? "-", transaction.contextName ?? "-",
                "\(counts.inserted)", "\(counts.updated)", "\(counts.deleted)",
            ]
        }
        let header = ["#", "time", "author", "context", "inserted", "updated", "deleted"]
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                // Numbers right-aligned, text left-aligned.
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return [0, 4, 5, 6].contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        print(line(header), to: &output)
        for (transaction, row) in zip(transactions, rows) {
            print(line(row), to: &output)
            guard changes else { continue }
            for change in transaction.changes ?? [] {
                var text = "    \(change.changeType.rawValue) \(change.changedObjectID.entityName) \(change.changedObjectID.primaryKey ?? 0)"
                if let properties = change.updatedProperties { text += " (\(properties.sorted().joined(separator: ", ")))" }
                if let tombstone = change.tombstone, !tombstone.isEmpty {
                    text += " kept: " + tombstone.keys.sorted().map { "\($0)=\(tombstone[$0].map { "\($0)" } ?? "")" }
                        .joined(separator: ", ")
                }
                print(text, to: &output)
            }
        }
    }
}
