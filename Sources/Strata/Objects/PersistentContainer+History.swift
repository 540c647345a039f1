import Foundation

/// Persistent history through the container: reading, deleting and the current token, over
/// every store that records history (``StoreDescription/isPersistentHistoryTrackingEnabled``).
extension PersistentContainer {
    /// The container's stores that record persistent history.
    public var historyTrackingStores: [any PersistentStore] { stores.filter(\.isPersistentHistoryTrackingEnabled) }

    /// The transactions a request selects (Core Data's `NSPersistentHistoryChangeRequest`
    /// executed on a context).
    ///
    /// With a token, the token's store answers; without one, every store that records history
    /// does, and the transactions come in timestamp order.
    ///
    /// For example:
    ///
    /// ```swift
    /// var request = HistoryFetchRequest(after: lastToken)
    /// request.excludedAuthors = ["app"]           // what the others did
    /// for transaction in try container.fetchHistory(request) {
    ///     container.viewContext.mergeChanges(from: transaction)
    ///     lastToken = transaction.token
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/persistentHistoryUnavailable``
    ///   when no store records history or the token's store is not one of the container's.
    public func fetchHistory(_ request: HistoryFetchRequest = HistoryFetchRequest()) throws -> [HistoryTransaction] {
        try checkOpen()
        if let token = request.token { return try historyStore(for: token).fetchHistory(request) }
        let stores = try historyStores()
        guard stores.count > 1 else { return try stores[0].fetchHistory(request) }
        var all = try stores.flatMap { try $0.fetchHistory(request) }
        all.sort { ($0.timestamp, $0.token) < ($1.timestamp, $1.token) }
        if let limit = request.fetchLimit { all = Array(all.prefix(limit)) }
        return all
    }

    /// Deletes the history before a token (not including the token's transaction) in the
    /// token's store (Core Data's `deleteHistory(before:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// // Once every reader has merged up to `token`:
    /// let deleted = try container.deleteHistory(before: token)
    /// ```
    ///
    /// - Returns: The number of transactions deleted.
    /// - Throws: As ``fetchHistory(_:)``.
    @discardableResult
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try checkOpen()
        return try historyStore(for: token).deleteHistory(HistoryDeleteRequest(before: token))
    }

    /// Deletes the history that committed before `date`, in every store that records history.
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.deleteHistory(before: Date.now.addingTimeInterval(-7 * 24 * 3600))
    /// ```
    ///
    /// - Returns: The number of transactions deleted.
    /// - Throws: As ``fetchHistory(_:)``.
    @discardableResult
    public func deleteHistory(before date: Date) throws -> Int {
        try checkOpen()
        return try historyStores().reduce(0) { $0 + (try $1.deleteHistory(HistoryDeleteRequest(before: date))) }
    }

    /// The token of the last transaction of the container's first store that records history,
    /// or `nil` before its first transaction (Core Data's
    /// `currentPersistentHistoryToken(fromStores:)`). Ask a store itself
    /// (``PersistentStore/currentHistoryToken()``) when several record history.
    ///
    /// For example:
    ///
    /// ```swift
    /// let token = try container.currentHistoryToken()   // keep it: next time, fetch what came after
    /// let later = try container.fetchHistory(HistoryFetchRequest(after: token))
    /// ```
    ///
    /// - Throws: As ``fetchHistory(_:)``.
    public func currentHistoryToken() throws -> HistoryToken? {
        try checkOpen()
        return try historyStores()[0].currentHistoryToken()
    }

    /// The stores that record history, or an error that says none does.
    func historyStores() throws -> [any PersistentStore] {
        let stores = historyTrackingStores
        guard !stores.isEmpty else {
            throw StrataError(
                .persistentHistoryUnavailable,
                "No store of the container \(name) records persistent history. Open one with isPersistentHistoryTrackingEnabled (StoreDescription.sqlite(url, persistentHistoryTracking: true)).")
        }
        return stores
    }

    /// The store a token points into, when it records history.
    func historyStore(for token: HistoryToken) throws -> any PersistentStore {
        guard let store = store(withIdentifier: token.storeIdentifier), store.isPersistentHistoryTrackingEnabled else {
            throw StrataError(
                .persistentHistoryUnavailable,
                "The history token \(token) belongs to no store of the container \(name) that records history.")
        }
        return store
    }
}

extension HistoryTransaction {
    /// The transaction as a change summary of object IDs, named
    /// ``ContextNotification/Name/didSave`` (Core Data's `objectIDNotification()`): what
    /// ``ObjectContext/mergeChanges(from:)-(ContextChanges)`` and
    /// ``FetchedResultsController``s follow. Empty when fetched without changes.
    ///
    /// For example:
    ///
    /// ```swift
    /// for transaction in try container.fetchHistory(HistoryFetchRequest(after: token)) {
    ///     let changes = transaction.objectIDNotification()   // Sendable: hand it to any context
    ///     await MainActor.run { container.viewContext.mergeChanges(from: changes) }
    /// }
    /// ```
    public func objectIDNotification() -> ContextChanges {
        // The commit the transaction recorded, as a store reports another connection's.
        ContextChanges(StoreCommit(self))
    }
}

extension ObjectContext {
    /// Merges another writer's transaction from persistent history into this context: objects
    /// it updated that this context holds are refreshed, objects it deleted leave, and
    /// observers hear of it as of any merged save
    /// (``mergeChanges(from:)-(ContextChanges)``).
    ///
    /// For example:
    ///
    /// ```swift
    /// for transaction in try container.fetchHistory(HistoryFetchRequest(after: token)) {
    ///     context.mergeChanges(from: transaction)
    /// }
    /// ```
    public func mergeChanges(from transaction: HistoryTransaction) {
        mergeChanges(from: transaction.objectIDNotification())
    }
}
