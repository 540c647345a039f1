import Foundation

/// Opens SQLite stores: a file, or a private database in memory. What
/// ``StoreDescription/sqlite(_:configuration:remoteChangePollingInterval:isReadOnly:persistentHistoryTracking:)``
/// and ``StoreDescription/inMemory`` put in a description; the embedded default.
///
/// It is a provider like any other (``PersistentStoreProvider``): containers open its stores,
/// staged migrations migrate them and read their recorded schema, and a file Core Data wrote is
/// imported or converted in place, all through the provider's requirements.
///
/// For example:
///
/// ```swift
/// let provider = SQLiteStoreProvider(url: URL(fileURLWithPath: "/var/lib/movies/Movies.sqlite"))
/// let container = try PersistentContainer(
///     name: "Movies", schema: schema, storeDescriptions: [StoreDescription(provider: provider)])
/// ```
///
/// Two providers are equal when they name the same file, or are both in memory with the same
/// initial contents (in-memory stores are private to their container all the same).
public struct SQLiteStoreProvider: PersistentStoreProvider {
    /// The store file; `nil` for a store in memory.
    public let url: URL?

    /// For a store in memory: a Strata store file whose contents the store starts with; `nil`
    /// starts empty.
    ///
    /// The file is opened read-only and copied into memory when the container opens: it is
    /// never written, and the two go their own ways afterwards. Use it for previews and tests
    /// seeded from a bundled store, or to look into a store with no risk of changing it
    /// (with ``StoreDescription/isReadOnly``).
    ///
    /// The copy keeps the file's store identifier (object IDs and URIs are the same in both, so
    /// one container cannot hold both) and records persistent history exactly when the file
    /// does, whatever ``StoreDescription/isPersistentHistoryTrackingEnabled`` says.
    public let initialContentsURL: URL?

    /// A provider of the SQLite file at `url`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let provider = SQLiteStoreProvider(url: storeURL)
    /// ```
    public init(url: URL) {
        self.url = url
        initialContentsURL = nil
    }

    /// A provider of a private store in memory, empty or starting as a copy of the Strata store
    /// file at `initialContentsURL`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let preview = SQLiteStoreProvider(inMemoryCopyOf: bundledStoreURL)
    /// ```
    public init(inMemoryCopyOf initialContentsURL: URL? = nil) {
        url = nil
        self.initialContentsURL = initialContentsURL
    }

    /// Whether the store is kept in memory rather than in a file.
    public var isInMemory: Bool { url == nil }

    /// Opens (or creates) the store for `description`: read-only, recording history, logging
    /// as it says.
    ///
    /// - Throws: ``StrataError`` when the store cannot be opened (see
    ///   ``SQLiteStore/init(url:schema:isReadOnly:persistentHistoryTracking:)``).
    public func makeStore(schema: Schema, description: StoreDescription) throws -> any PersistentStore {
        if let url {
            return try SQLiteStore(
                url: url, schema: schema, isReadOnly: description.isReadOnly,
                persistentHistoryTracking: description.isPersistentHistoryTrackingEnabled,
                instrumentation: StoreInstrumentation(description: description, kind: "sqlite", name: url.lastPathComponent))
        }
        let instrumentation = StoreInstrumentation(description: description, kind: "memory", name: "in-memory")
        if let initialContentsURL {
            return try SQLiteStore(
                inMemoryCopyOf: initialContentsURL, schema: schema, isReadOnly: description.isReadOnly,
                instrumentation: instrumentation)
        }
        return try SQLiteStore(
            inMemoryWith: schema, persistentHistoryTracking: description.isPersistentHistoryTrackingEnabled,
            instrumentation: instrumentation)
    }

    /// The schema the file was written with, read without writing to it; `nil` when there is
    /// no file yet, or the store is in memory.
    ///
    /// - Throws: The errors of ``SQLiteStore/recordedSchema(at:)`` for a file that is not a
    ///   readable Strata store.
    public func recordedSchema() throws -> Schema? {
        guard let url, try SQLiteStore.fileState(at: url) == .existing else { return nil }
        return try SQLiteStore.recordedSchema(at: url)
    }

    /// The file's path, or `in-memory`.
    public var description: String { url?.path ?? "in-memory" }
}

extension StoreDescription {
    /// An SQLite file store, optionally looking for other processes' changes every
    /// `remoteChangePollingInterval`, optionally read-only, optionally recording persistent
    /// history.
    ///
    /// For example:
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
            provider: SQLiteStoreProvider(url: url), configuration: configuration,
            remoteChangePollingInterval: remoteChangePollingInterval, isReadOnly: isReadOnly,
            isPersistentHistoryTrackingEnabled: persistentHistoryTracking)
    }

    /// An in-memory store for every entity: a private SQLite database, gone when the container
    /// is released.
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try PersistentContainer(name: "Tests", schema: schema, storeDescriptions: [.inMemory])
    /// ```
    public static var inMemory: StoreDescription { StoreDescription(provider: SQLiteStoreProvider()) }

    /// An in-memory store that starts as a copy of the Strata store file at `url`, optionally
    /// refusing saves (see ``SQLiteStoreProvider/initialContentsURL``).
    ///
    /// For example:
    ///
    /// ```swift
    /// let preview = try PersistentContainer(
    ///     name: "Preview", schema: schema, storeDescriptions: [.inMemory(copyOf: bundledStoreURL)])
    /// ```
    public static func inMemory(copyOf url: URL, configuration: String? = nil, isReadOnly: Bool = false) -> StoreDescription {
        StoreDescription(provider: SQLiteStoreProvider(inMemoryCopyOf: url), configuration: configuration, isReadOnly: isReadOnly)
    }

    /// An in-memory store for the entities of one configuration, optionally recording
    /// persistent history.
    ///
    /// For example:
    ///
    /// ```swift
    /// let cache = StoreDescription.inMemory(configuration: "Cache")
    /// ```
    public static func inMemory(configuration: String?, persistentHistoryTracking: Bool = false) -> StoreDescription {
        StoreDescription(
            provider: SQLiteStoreProvider(), configuration: configuration,
            isPersistentHistoryTrackingEnabled: persistentHistoryTracking)
    }
}
