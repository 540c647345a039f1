import Foundation

/// Opens stores of a kind that lives outside Strata's core module: what
/// ``StoreDescription/Kind/custom(_:)`` holds.
///
/// `StrataPostgres` provides PostgreSQL this way, so that containers, contexts and everything
/// above them open a PostgreSQL store exactly as they open an SQLite file, and SQLite-only
/// programs never build a PostgreSQL driver. Implement it to plug in a store of your own: make a
/// ``PersistentStore`` that passes `StrataTesting`'s `StoreConformanceSuite`, and a provider
/// that opens it.
///
/// ```swift
/// struct MyStoreProvider: PersistentStoreProvider {
///     var endpoint: String
///     var description: String { "my-store at \(endpoint)" }
///     func makeStore(schema: Schema, description: StoreDescription) throws -> any PersistentStore {
///         try MyStore(endpoint: endpoint, schema: schema, readOnly: description.isReadOnly)
///     }
/// }
/// let container = try PersistentContainer(
///     name: "Movies", schema: schema,
///     storeDescriptions: [StoreDescription(kind: .custom(MyStoreProvider(endpoint: "…")))])
/// ```
///
/// Two descriptions whose providers are equal name the same store. A provider's
/// `description` appears in messages and logs, so it must never contain a password or other
/// secret.
public protocol PersistentStoreProvider: Sendable, Hashable, CustomStringConvertible {
    /// Opens (or creates) the store, holding the entities of `schema`.
    ///
    /// - Parameters:
    ///   - schema: The entities the store holds (the description's configuration).
    ///   - description: The whole description: read-only, history tracking, polling interval.
    /// - Returns: The open store.
    /// - Throws: ``StrataError`` when the store cannot be opened.
    func makeStore(schema: Schema, description: StoreDescription) throws -> any PersistentStore

    /// The schema the store was written with, read without writing to it; `nil` when there is
    /// no store yet. Staged migrations read it to find the store's version.
    ///
    /// The default returns `nil`: the store is then always opened with the current schema.
    func recordedSchema() throws -> Schema?
}

extension PersistentStoreProvider {
    public func recordedSchema() throws -> Schema? { nil }
}
