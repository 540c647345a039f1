import Foundation

/// Opens, reads and migrates the stores of one kind: what a ``StoreDescription`` holds.
///
/// Every store comes in this way: ``SQLiteStoreProvider`` opens SQLite files and stores in
/// memory, `StrataPostgres`'s `PostgresStoreProvider` PostgreSQL schemas, so that containers,
/// contexts, migrations and everything above them open any store exactly alike, and SQLite-only
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
///     storeDescriptions: [StoreDescription(provider: MyStoreProvider(endpoint: "…"))])
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

    /// The store's file, for a store kept in one file; `nil` (the default) for any other.
    /// ``StoreDescription/url`` reads it.
    var url: URL? { get }

    // MARK: Migrations

    /// Runs `body` with the store to itself: no container (in this process or another, on
    /// this machine or another) may have it open meanwhile, and none may open it.
    ///
    /// ``StagedMigrationManager`` runs a whole migration inside. The default throws
    /// ``StrataError/Code/unsupportedMigration``: the store cannot be migrated.
    ///
    /// - Throws: ``StrataError/Code/storeInUse`` while a container has the store open.
    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T

    /// Applies lightweight schema steps to the store atomically: all of them or, when one
    /// fails or the process dies, none. The store then records the last step's destination
    /// schema.
    ///
    /// - Parameters:
    ///   - steps: The steps, in order.
    ///   - progress: Called after each step with its number (from 0) and the rows written so far.
    /// - Returns: The rows the steps wrote.
    /// - Throws: ``StrataError/Code/unsupportedMigration`` for a change no step can infer,
    ///   ``StrataError/Code/constraintConflict`` for stored rows that break a new uniqueness
    ///   constraint, ``StrataError/Code/migrationFailed`` when the store refuses a statement.
    func migrateStoreSchema(_ steps: [StoreMigrationStep], progress: (Int, Int) -> Void) throws -> Int

    /// Copies the store to a new place for a migration whose stages run code: the stages work
    /// on the copy, which replaces the store in ``replaceStore(withMigratedCopy:)``.
    ///
    /// - Returns: A provider of the copy.
    func makeMigrationCopy() throws -> any PersistentStoreProvider

    /// Puts a migrated copy (from ``makeMigrationCopy()``) in the store's place in one atomic
    /// step: afterwards the store is the copy, or — when it fails — as it was.
    func replaceStore(withMigratedCopy copy: any PersistentStoreProvider) throws

    /// Removes a copy from ``makeMigrationCopy()``, if it is still there. Never throws: a copy
    /// left behind is removed by the next migration.
    func removeMigrationCopy()
}

extension PersistentStoreProvider {
    /// No schema: the store is always opened with the current one.
    public func recordedSchema() throws -> Schema? { nil }

    /// No file.
    public var url: URL? { nil }

    /// Throws ``StrataError/Code/unsupportedMigration``.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        throw unsupportedMigration()
    }

    /// Throws ``StrataError/Code/unsupportedMigration``.
    public func migrateStoreSchema(_ steps: [StoreMigrationStep], progress: (Int, Int) -> Void) throws -> Int {
        throw unsupportedMigration()
    }

    /// Throws ``StrataError/Code/unsupportedMigration``.
    public func makeMigrationCopy() throws -> any PersistentStoreProvider {
        throw unsupportedMigration()
    }

    /// Throws ``StrataError/Code/unsupportedMigration``.
    public func replaceStore(withMigratedCopy copy: any PersistentStoreProvider) throws {
        throw unsupportedMigration()
    }

    /// Does nothing: there is no copy.
    public func removeMigrationCopy() {}

    private func unsupportedMigration() -> StrataError {
        StrataError(.unsupportedMigration, "The store \(description) cannot be migrated: its provider does not implement migrations.")
    }
}
