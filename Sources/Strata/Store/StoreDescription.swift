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
    /// The kind of store.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// An SQLite file at a URL.
        case sqlite(URL)
        /// A private SQLite database in memory, gone when the container is released.
        case inMemory
        /// A store another module provides: PostgreSQL (`StrataPostgres`'s
        /// `StoreDescription.postgres(_:)`), or a store of your own.
        case custom(any PersistentStoreProvider)

        public static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.sqlite(let a), .sqlite(let b)): a == b
            case (.inMemory, .inMemory): true
            case (.custom(let a), .custom(let b)): AnyHashable(a) == AnyHashable(b)
            default: false
            }
        }

        public func hash(into hasher: inout Hasher) {
            switch self {
            case .sqlite(let url):
                hasher.combine(0)
                hasher.combine(url)
            case .inMemory:
                hasher.combine(1)
            case .custom(let provider):
                hasher.combine(2)
                hasher.combine(AnyHashable(provider))
            }
        }

        /// The store's location for messages: a file's path, `in-memory`, or what a provider
        /// says (never a password).
        public var description: String {
            switch self {
            case .sqlite(let url): url.path
            case .inMemory: "in-memory"
            case .custom(let provider): provider.description
            }
        }
    }

    /// The kind of store.
    public var kind: Kind
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
    /// (``initialContentsURL``); an empty one ignores it.
    public var isReadOnly: Bool

    /// For an in-memory store: a Strata store file whose contents the store starts with.
    ///
    /// The file is opened read-only and copied into memory when the container opens: it is
    /// never written, and the two go their own ways afterwards. Use it for previews and tests
    /// seeded from a bundled store, or to look into a store with no risk of changing it
    /// (with ``isReadOnly``). `nil`, the default, starts empty. SQLite file stores ignore it.
    ///
    /// The copy keeps the file's store identifier (object IDs and URIs are the same in both, so
    /// one container cannot hold both) and records persistent history exactly when the file
    /// does, whatever ``isPersistentHistoryTrackingEnabled`` says.
    public var initialContentsURL: URL?

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

    /// Creates a description.
    public init(
        kind: Kind, configuration: String? = nil, remoteChangePollingInterval: Duration? = nil, isReadOnly: Bool = false,
        isPersistentHistoryTrackingEnabled: Bool = false
    ) {
        self.kind = kind
        self.configuration = configuration
        self.remoteChangePollingInterval = remoteChangePollingInterval
        self.isReadOnly = isReadOnly
        self.isPersistentHistoryTrackingEnabled = isPersistentHistoryTrackingEnabled
    }

    /// An SQLite file store, optionally looking for other processes' changes every
    /// `remoteChangePollingInterval`, optionally read-only, optionally recording persistent
    /// history.
    ///
    /// ```swift
    /// let shared = StoreDescription.sqlite(url, remoteChangePollingInterval: .milliseconds(500))
    /// let widget = StoreDescription.sqlite(appStoreURL, isReadOnly: true)
    /// let tracked = StoreDescription.sqlite(url, persistentHistoryTracking: true)
    /// ```
    public static func sqlite(
        _ url: URL, configuration: String? = nil, remoteChangePollingInterval: Duration? = nil, isReadOnly: Bool = false,
        persistentHistoryTracking: Bool = false
    ) -> StoreDescription {
        StoreDescription(
            kind: .sqlite(url), configuration: configuration, remoteChangePollingInterval: remoteChangePollingInterval,
            isReadOnly: isReadOnly, isPersistentHistoryTrackingEnabled: persistentHistoryTracking)
    }

    /// An in-memory store for every entity.
    public static var inMemory: StoreDescription { StoreDescription(kind: .inMemory) }

    /// An in-memory store that starts as a copy of the Strata store file at `url`, optionally
    /// refusing saves (see ``initialContentsURL``).
    ///
    /// ```swift
    /// let preview = try PersistentContainer(
    ///     name: "Preview", schema: schema, storeDescriptions: [.inMemory(copyOf: bundledStoreURL)])
    /// ```
    public static func inMemory(copyOf url: URL, configuration: String? = nil, isReadOnly: Bool = false) -> StoreDescription {
        var description = StoreDescription(kind: .inMemory, configuration: configuration, isReadOnly: isReadOnly)
        description.initialContentsURL = url
        return description
    }

    /// An in-memory store for the entities of one configuration, optionally recording
    /// persistent history.
    public static func inMemory(configuration: String?, persistentHistoryTracking: Bool = false) -> StoreDescription {
        StoreDescription(
            kind: .inMemory, configuration: configuration, isPersistentHistoryTrackingEnabled: persistentHistoryTracking)
    }
}

/// A logger in a description: descriptions compare and hash without it.
private struct LoggerReference: Sendable, Hashable {
    let logger: Logger?
    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
