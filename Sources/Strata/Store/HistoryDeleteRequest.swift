import Foundation

/// Which transactions of persistent history to delete (Core Data's
/// `NSPersistentHistoryChangeRequest.deleteHistory(before:)`): those before a token, before a
/// date, or — with both — before both.
public struct HistoryDeleteRequest: Sendable, Hashable {
    /// Only transactions before this one (not including it), when set.
    public var token: HistoryToken?
    /// Only transactions that committed before this moment, when set.
    public var date: Date?

    /// A request for the transactions before `token` and before `date` (each when set; with
    /// neither, every transaction).
    public init(token: HistoryToken?, date: Date?) {
        self.token = token
        self.date = date
    }

    /// A request for the transactions before `token`.
    public init(before token: HistoryToken) { self.init(token: token, date: nil) }

    /// A request for the transactions that committed before `date`.
    public init(before date: Date) { self.init(token: nil, date: date) }
}
