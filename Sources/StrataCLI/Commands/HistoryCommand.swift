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
