import Foundation

/// One transaction of a store's persistent history: a save or a batch request, who made it and
/// what it changed (Core Data's `NSPersistentHistoryTransaction`).
///
/// ```swift
/// for transaction in try container.fetchHistory(HistoryFetchRequest(after: lastToken)) {
///     print(transaction.author ?? "someone", transaction.timestamp, transaction.changes?.count ?? 0)
///     lastToken = transaction.token
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable, Identifiable {
    /// The transaction's position in its store's history.
    public var token: HistoryToken
    /// When the transaction committed.
    public var timestamp: Date
    /// The saving context's ``ObjectContext/transactionAuthor``, or the batch request's author.
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// The changes, in the order they were recorded; `nil` when the transactions were fetched
    /// without them (``HistoryFetchRequest/includesChanges``).
    public var changes: [HistoryChange]?

    /// Creates a transaction.
    public init(
        token: HistoryToken, timestamp: Date, author: String?, contextName: String?, changes: [HistoryChange]?
    ) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.changes = changes
    }

    /// The store that recorded the transaction.
    public var storeIdentifier: String { token.storeIdentifier }
    /// The transaction's number in its store (Core Data's `transactionNumber`).
    public var transactionNumber: Int64 { token.transactionNumber }
    /// The token, which identifies the transaction.
    public var id: HistoryToken { token }
}
