import Foundation

/// Which transactions of persistent history to read (Core Data's
/// `NSPersistentHistoryChangeRequest.fetchHistory(after:)` with a fetch request on
/// transactions).
///
/// Every condition that is set must hold; transactions come oldest first.
///
/// ```swift
/// // What other writers did since the token this process saved last time:
/// var request = HistoryFetchRequest(after: savedToken)
/// request.excludedAuthors = ["app"]
/// let transactions = try container.fetchHistory(request)
/// ```
public struct HistoryFetchRequest: Sendable, Hashable {
    /// Only transactions after this one (not including it), when set. A token of another store
    /// is refused.
    public var token: HistoryToken?
    /// Only transactions at or after this moment, when set.
    public var date: Date?
    /// Only transactions of these authors, when set.
    public var authors: Set<String>?
    /// No transactions of these authors (transactions without an author are kept).
    public var excludedAuthors: Set<String>
    /// Only transactions of contexts with these names, when set.
    public var contextNames: Set<String>?
    /// Whether each transaction comes with its ``HistoryTransaction/changes``; without them a
    /// fetch reads only the transactions table.
    public var includesChanges: Bool
    /// At most this many transactions (the oldest ones), when set.
    public var fetchLimit: Int?

    /// A request for the transactions after `token` (all of them when `nil`), with their
    /// changes.
    public init(
        after token: HistoryToken? = nil, authors: Set<String>? = nil, excludedAuthors: Set<String> = [],
        contextNames: Set<String>? = nil, includesChanges: Bool = true, fetchLimit: Int? = nil
    ) {
        self.token = token
        self.authors = authors
        self.excludedAuthors = excludedAuthors
        self.contextNames = contextNames
        self.includesChanges = includesChanges
        self.fetchLimit = fetchLimit
    }

    /// A request for the transactions at or after `date`, with their changes.
    public init(since date: Date, authors: Set<String>? = nil, excludedAuthors: Set<String> = []) {
        self.init(authors: authors, excludedAuthors: excludedAuthors)
        self.date = date
    }
}
