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

/// One object's change in a ``HistoryTransaction`` (Core Data's `NSPersistentHistoryChange`).
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum ChangeType: String, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert
        /// Some of the object's properties changed (``HistoryChange/updatedProperties``).
        case update
        /// The object was deleted (``HistoryChange/tombstone`` keeps what was asked to be kept).
        case delete
    }

    /// The change's number, increasing across the store's history.
    public var changeID: Int64
    /// The object that changed.
    public var changedObjectID: ObjectID
    /// What happened to it.
    public var changeType: ChangeType
    /// For an update, the names of the attributes and relationships that changed; `nil` for
    /// inserts and deletes.
    public var updatedProperties: Set<String>?
    /// For a delete, the last values of the attributes marked
    /// ``AttributeDescription/preservesValueOnDeletion`` (`.preserveValueOnDeletion`), by
    /// attribute name; `nil` otherwise.
    public var tombstone: [String: AttributeValue]?

    /// Creates a change.
    public init(
        changeID: Int64, changedObjectID: ObjectID, changeType: ChangeType, updatedProperties: Set<String>? = nil,
        tombstone: [String: AttributeValue]? = nil
    ) {
        self.changeID = changeID
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}
