import ArgumentParser
import Foundation
import Strata

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
