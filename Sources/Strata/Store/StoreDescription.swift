import Foundation
import Logging

/// Where and how a container keeps one of its stores.
///
/// ```swift
/// let container = try PersistentContainer(
///     name: "Movies", schema: schema,
///     storeDescriptions: [.sqlite(URL(fileURLWithPath: "/var/lib/movies/Movies.sqlite"))])
/// ```
public struct StoreDescription: Sendable, Hashable {
    /// What opens the store: ``SQLiteStoreProvider`` for an SQLite file or a store in memory
    /// (``sqlite(_:configuration:remoteChangePollingInterval:isReadOnly:persistentHistoryTracking:)``,
    /// ``inMemory``), `StrataPostgres`'s `PostgresStoreProvider` for PostgreSQL, or a provider of
    /// your own. Containers, contexts, migrations and everything above them reach the store only
    /// through it.
    public var provider: any PersistentStoreProvider {
        get { providerReference.provider }
        set { providerReference = ProviderReference(provider: newValue) }
    }
    private var providerReference: ProviderReference

    /// The store's file, for a store kept in one file (an SQLite file); `nil` for a store in
    /// memory or on a server. Core Data's `NSPersistentStoreDescription.url`.
    ///
    /// ```swift
    /// let folder = container.storeDescriptions[0].url?.deletingLastPathComponent()
    /// ```
    public var url: URL? { provider.url }

    /// The configuration whose entities the store holds; `nil` for every entity.
    public var configuration: String?
    /// How often to look for changes that other processes (or other containers) committed to
    /// an SQLite file store; `nil`, the default, does not look.
    ///
    /// When the store notices such a change (SQLite's `PRAGMA data_version` moved), its commit
    /// observers receive a ``StoreCommit`` whose ``StoreCommit/isRemote`` is `true`: live queries
    /// run again, contexts that merge automatically refresh their objects, and their fetched
    /// results controllers fetch again. Which objects changed is not known, so the reaction is
    /// as wide as the store. Each look is one tiny query on the store's writer connection.
    public var remoteChangePollingInterval: Duration?

    /// Whether the store is opened for reading only (Core Data's `isReadOnly`, the
    /// `NSReadOnlyPersistentStoreOption`).
    ///
    /// A read-only open writes nothing to the store file: not a header field, not a page. Saves
    /// fail with ``StrataError/Code/storeNotWritable`` and nothing is written; fetches, counts
    /// and aggregates work as usual, and see what other processes commit. The store must exist.
    /// Use it to look into another app's or process's store, or into a copy that must stay
    /// byte-identical. An in-memory store honours it when it starts from a file's contents
    /// (``SQLiteStoreProvider/initialContentsURL``); an empty one ignores it.
    public var isReadOnly: Bool

    /// Whether the store records persistent history (Core Data's
    /// `NSPersistentHistoryTrackingKey`): who saved what, transaction by transaction, for
    /// readers in other contexts, containers and processes (``PersistentContainer/fetchHistory(_:)``,
    /// ``PersistentHistoryTracker``). Off by default: a store without it writes nothing extra.
    ///
    /// With it, every save and batch request writes one transaction entry and one change entry
    /// per object, in the same database transaction as the data, and a store that polls for
    /// remote changes names the objects other processes changed instead of reporting the whole
    /// store as changed. Once a store file has recorded history it keeps recording, whoever
    /// opens it, so that no reader ever misses a transaction.
    public var isPersistentHistoryTrackingEnabled: Bool

    /// Whether a Core Data store converted in place is kept beside the converted store, as
    /// `<file>.coredata` (its external-data folder too); `false`, the default, removes it once
    /// the conversion is complete.
    ///
    /// A container, stack or migration that opens an SQLite file Core Data wrote converts it
    /// into a Strata store in place, in one atomic step (see "Versions and Migrations"): until
    /// the step is done the Core Data file is untouched, and after it the converted store is
    /// complete. A read-only description never converts: it opens an in-memory copy.
    ///
    /// ```swift
    /// var description = StoreDescription.sqlite(coreDataURL)
    /// description.keepsConvertedCoreDataStore = true    // Movies.sqlite.coredata stays
    /// ```
    public var keepsConvertedCoreDataStore = false

    /// Where the store logs (swift-log): connection events, conflicts, slow statements and,
    /// when ``tracesStatements`` is on, every statement. `nil`, the default, logs nothing, and
    /// nothing is ever printed to standard output.
    ///
    /// ```swift
    /// var description = StoreDescription.sqlite(url)
    /// description.logger = Logger(label: "app.strata")
    /// description.slowStatementThreshold = .milliseconds(100)
    /// ```
    ///
    /// Messages carry the metadata `strata.store` (`sqlite:Movies.sqlite`,
    /// `postgres:public`), and statement messages `strata.sql` and
    /// `strata.durationMilliseconds`. SQL is logged as the store sends it, with `?` or `$1`
    /// where values go: bound values are never logged. Two descriptions that differ only in
    /// their loggers are equal.
    public var logger: Logger? {
        get { loggerReference.logger }
        set { loggerReference = LoggerReference(logger: newValue) }
    }
    private var loggerReference = LoggerReference(logger: nil)

    /// Statements that run at least this long are logged at `warning` level, with their SQL
    /// and duration, when ``logger`` is set. Half a second by default; `nil` logs none.
    public var slowStatementThreshold: Duration? = .milliseconds(500)

    /// Whether every statement the store runs is logged at `trace` level (the logger's level
    /// must let `trace` through), with its SQL and duration but never its bound values. Off by
    /// default: it is for development and for chasing a problem.
    public var tracesStatements = false

    /// Creates a description of the store `provider` opens.
    ///
    /// For example:
    ///
    /// ```swift
    /// let description = StoreDescription(
    ///     provider: MyStoreProvider(endpoint: "https://store.example.com"), isReadOnly: true)
    /// ```
    public init(
        provider: any PersistentStoreProvider, configuration: String? = nil, remoteChangePollingInterval: Duration? = nil,
        isReadOnly: Bool = false, isPersistentHistoryTrackingEnabled: Bool = false
    ) {
        self.providerReference = ProviderReference(provider: provider)
        self.configuration = configuration
        self.remoteChangePollingInterval = remoteChangePollingInterval
        self.isReadOnly = isReadOnly
        self.isPersistentHistoryTrackingEnabled = isPersistentHistoryTrackingEnabled
    }

    /// Opens (or creates) the store the description names, holding the entities of `schema`:
    /// what its ``provider`` opens.
    ///
    /// Containers call this for each of their descriptions.
    ///
    /// For example:
    ///
    /// ```swift
    /// let store = try StoreDescription.sqlite(url).makeStore(schema: schema)
    /// ```
    ///
    /// - Parameter schema: The entities the store holds (the description's configuration).
    /// - Returns: The open store.
    /// - Throws: ``StrataError`` when the store cannot be opened.
    public func makeStore(schema: Schema) throws -> any PersistentStore {
        try provider.makeStore(schema: schema, description: self)
    }

    /// The schema the store was written with, read without writing to it; `nil` when there is
    /// no store yet (or the store is in memory): what its ``provider`` reads.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let recorded = try description.recordedSchema(), recorded.versionHash != schema.versionHash {
    ///     print(schema.difference(from: recorded))
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` when the store is not a readable Strata store.
    public func recordedSchema() throws -> Schema? {
        try provider.recordedSchema()
    }

    /// A copy of the store for a migration whose stages run code (see
    /// ``PersistentStoreProvider/makeMigrationCopy()``), described like this one but without
    /// history tracking or polling: the stages' saves are the migration's, not the app's.
    package func makeMigrationCopy() throws -> StoreDescription {
        scratch(try provider.makeMigrationCopy())
    }

    /// This description with `provider` in its place, for a store a migration or a conversion
    /// works on before it takes the store's place: without history tracking or polling (what
    /// is saved there is the migration's work, not the app's).
    package func scratch(_ provider: any PersistentStoreProvider) -> StoreDescription {
        var scratch = self
        scratch.provider = provider
        scratch.isPersistentHistoryTrackingEnabled = false
        scratch.remoteChangePollingInterval = nil
        return scratch
    }

    /// The provider, when it can read, import and convert stores Core Data wrote.
    package var coreDataProvider: (any CoreDataStoreProvider)? { provider as? any CoreDataStoreProvider }

    /// Whether the description names a store Core Data wrote (an SQLite file with Core Data's
    /// tables). Reads without writing; `false` for anything else, a missing file among them.
    package var isCoreDataStore: Bool { coreDataProvider?.isCoreDataStore ?? false }
}

/// A provider in a description: compared and hashed as the provider says.
private struct ProviderReference: Sendable, Hashable {
    let provider: any PersistentStoreProvider
    static func == (lhs: Self, rhs: Self) -> Bool { AnyHashable(lhs.provider) == AnyHashable(rhs.provider) }
    func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(provider)) }
}

/// A logger in a description: descriptions compare and hash without it.
private struct LoggerReference: Sendable, Hashable {
    let logger: Logger?
    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
