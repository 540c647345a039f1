import ArgumentParser
import Foundation
import Strata

/// `strata history`: lists a store's persistent history, and prunes it.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List or prune the persistent history of a store.",
        discussion: """
            Stores opened with persistent history tracking record one transaction per save or batch \
            request: its author, context, time and changed objects.

            Examples:
              strata history Movies.sqlite
              strata history Movies.sqlite --author importer --since 2026-11-01 --json
              strata history prune Movies.sqlite --before 2026-11-01
            """,
        subcommands: [HistoryListCommand.self, HistoryPruneCommand.self],
        defaultSubcommand: HistoryListCommand.self)
}

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

/// `strata history prune STORE --before …`: deletes old history.
struct HistoryPruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Delete the history before a date or a transaction number.")

    @Argument(help: "The store: an SQLite file or a postgres:// URL.")
    var store: String

    @Option(help: "Delete transactions before this date (ISO 8601).")
    var before: String?

    @Option(help: "Delete transactions before this transaction number (it stays).")
    var beforeTransaction: Int64?

    func validate() throws {
        guard before != nil || beforeTransaction != nil else {
            throw ValidationError("Say what to delete: --before DATE or --before-transaction NUMBER.")
        }
    }

    func run() throws {
        var output = StandardOutput()
        try reportingErrors {
            let date = try before.map(HistoryDates.parse)
            try Self.run(location: store, before: date, beforeTransaction: beforeTransaction, into: &output)
        }
    }

    static func run(location: String, before: Date?, beforeTransaction: Int64?, into output: inout some TextOutputStream) throws {
        let opened = try HistoryStores.open(location, isReadOnly: false)
        defer { opened.close() }
        let store = opened.store
        let deleted = try store.deleteHistory(
            HistoryDeleteRequest(
                token: beforeTransaction.map { HistoryToken(storeIdentifier: store.identifier, transactionNumber: $0) },
                date: before))
        print("Deleted \(deleted) transaction\(deleted == 1 ? "" : "s").", to: &output)
    }
}

/// Opening a store with the schema it records, for history commands.
enum HistoryStores {
    static func open(_ location: String, isReadOnly: Bool) throws -> OpenedStore {
        let opened = try OpenedStore.open(location: location, model: nil, forWriting: !isReadOnly)
        guard opened.store.isPersistentHistoryTrackingEnabled, opened.kind != .coreData else {
            opened.close()
            throw StrataError(
                .persistentHistoryUnavailable,
                "The store \(opened.location) does not record persistent history; open it with persistent history tracking to start recording.")
        }
        return opened
    }
}

/// Dates on the command line: ISO 8601, with or without a time.
enum HistoryDates {
    static func parse(_ text: String) throws -> Date {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [plain, full, day] {
            if let date = formatter.date(from: text) { return date }
        }
        throw StrataError(
            .typeMismatch, "'\(text)' is not a date; use ISO 8601, such as 2026-11-24 or 2026-11-24T10:00:00Z.")
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// The JSON form of transactions.
enum HistoryJSON {
    static func counts(_ transaction: HistoryTransaction) -> (inserted: Int, updated: Int, deleted: Int) {
        let changes = transaction.changes ?? []
        return (
            changes.count { $0.changeType == .insert }, changes.count { $0.changeType == .update },
            changes.count { $0.changeType == .delete }
        )
    }

    struct Transaction: Encodable {
        var transactionNumber: Int64
        var storeIdentifier: String
        var timestamp: String
        var author: String?
        var contextName: String?
        var inserted: Int
        var updated: Int
        var deleted: Int
        var changes: [Change]?
    }

    struct Change: Encodable {
        var changeID: Int64
        var type: String
        var entity: String
        var primaryKey: Int64?
        var updatedProperties: [String]?
        var tombstone: [String: String]?
    }

    static func encode(_ transactions: [HistoryTransaction], includingChanges: Bool) throws -> String {
        let values = transactions.map { transaction in
            let counts = counts(transaction)
            return Transaction(
                transactionNumber: transaction.transactionNumber, storeIdentifier: transaction.storeIdentifier,
                timestamp: HistoryDates.format(transaction.timestamp), author: transaction.author,
                contextName: transaction.contextName, inserted: counts.inserted, updated: counts.updated,
                deleted: counts.deleted,
                changes: includingChanges
                    ? (transaction.changes ?? []).map { change in
                        Change(
                            changeID: change.changeID, type: change.changeType.rawValue,
                            entity: change.changedObjectID.entityName, primaryKey: change.changedObjectID.primaryKey,
                            updatedProperties: change.updatedProperties?.sorted(),
                            tombstone: change.tombstone?.mapValues { "\($0)" })
                    } : nil)
        }
        return try JSONOutput.text(values)
    }
}
