import Foundation

/// A position in a store's persistent history: the transaction a reader has seen last
/// (Core Data's `NSPersistentHistoryToken`).
///
/// Tokens are values: keep the last one you processed (they are `Codable`) and ask for the
/// transactions after it on the next launch. Tokens of one store grow with every transaction;
/// they are never reused, even after history is deleted.
///
/// ```swift
/// let token = try container.currentHistoryToken()
/// let data = try JSONEncoder().encode(token)          // persist between launches
/// let later = try container.fetchHistory(HistoryFetchRequest(after: token))
/// ```
public struct HistoryToken: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The store whose history the token points into.
    public var storeIdentifier: String
    /// The transaction's number, increasing with each transaction of the store.
    public var transactionNumber: Int64

    /// A token for transaction `transactionNumber` of the store `storeIdentifier`.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by transaction; tokens of different stores by store
    /// identifier (an arbitrary but fixed order).
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier
            ? lhs.transactionNumber < rhs.transactionNumber : lhs.storeIdentifier < rhs.storeIdentifier
    }

    /// `<store>#<number>`.
    public var description: String { "\(storeIdentifier)#\(transactionNumber)" }
}

extension StrataError {
    /// The error of a history read that starts at `token`, after which history was pruned.
    ///
    /// - Parameter oldestKept: The oldest transaction after the token the store still has, if any.
    public static func historyTokenExpired(_ token: HistoryToken, oldestKept: Int64?, fileURL: URL? = nil) -> StrataError {
        StrataError(
            .historyTokenExpired,
            "History after \(token) was pruned\(oldestKept.map { " (the oldest transaction kept is #\($0))" } ?? ""): changes made since the token can no longer be read. Refetch what you show from the store, then go on from the current history token.",
            fileURL: fileURL)
    }
}
