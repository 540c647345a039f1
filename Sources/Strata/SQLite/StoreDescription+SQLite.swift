import Foundation

extension StoreDescription {
    /// Opens (or creates) the store the description names, holding the entities of `schema`.
    ///
    /// Containers call this for each of their descriptions; it is the one place that turns a
    /// description's ``Kind`` into a store, so a store from another module comes in through
    /// ``Kind/custom(_:)`` and touches nothing in the object layer.
    ///
    /// ```swift
    /// let store = try StoreDescription.sqlite(url).makeStore(schema: schema)
    /// ```
    ///
    /// - Parameter schema: The entities the store holds (the description's configuration).
    /// - Returns: The open store.
    /// - Throws: ``StrataError`` when the store cannot be opened (see
    ///   ``SQLiteStore/init(url:schema:isReadOnly:persistentHistoryTracking:)``).
    public func makeStore(schema: Schema) throws -> any PersistentStore {
        switch kind {
        case .sqlite(let url):
            try SQLiteStore(
                url: url, schema: schema, isReadOnly: isReadOnly,
                persistentHistoryTracking: isPersistentHistoryTrackingEnabled,
                instrumentation: StoreInstrumentation(description: self, kind: "sqlite", name: url.lastPathComponent))
        case .inMemory:
            if let initialContentsURL {
                try SQLiteStore(
                    inMemoryCopyOf: initialContentsURL, schema: schema, isReadOnly: isReadOnly,
                    instrumentation: StoreInstrumentation(description: self, kind: "memory", name: "in-memory"))
            } else {
                try SQLiteStore(
                    inMemoryWith: schema, persistentHistoryTracking: isPersistentHistoryTrackingEnabled,
                    instrumentation: StoreInstrumentation(description: self, kind: "memory", name: "in-memory"))
            }
        case .custom(let provider):
            try provider.makeStore(schema: schema, description: self)
        }
    }
}
