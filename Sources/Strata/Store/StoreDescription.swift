import Foundation

/// Where and how a container keeps one of its stores.
///
/// ```swift
/// let container = try PersistentContainer(
///     name: "Movies", schema: schema,
///     storeDescriptions: [.sqlite(URL(fileURLWithPath: "/var/lib/movies/Movies.sqlite"))])
/// ```
public struct StoreDescription: Sendable, Hashable {
    /// The kind of store.
    public enum Kind: Sendable, Hashable {
        /// An SQLite file at a URL.
        case sqlite(URL)
        /// A private SQLite database in memory, gone when the container is released.
        case inMemory
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

    /// Creates a description.
    public init(kind: Kind, configuration: String? = nil, remoteChangePollingInterval: Duration? = nil) {
        self.kind = kind
        self.configuration = configuration
        self.remoteChangePollingInterval = remoteChangePollingInterval
    }

    /// An SQLite file store, optionally looking for other processes' changes every
    /// `remoteChangePollingInterval`.
    ///
    /// ```swift
    /// let shared = StoreDescription.sqlite(url, remoteChangePollingInterval: .milliseconds(500))
    /// ```
    public static func sqlite(
        _ url: URL, configuration: String? = nil, remoteChangePollingInterval: Duration? = nil
    ) -> StoreDescription {
        StoreDescription(
            kind: .sqlite(url), configuration: configuration, remoteChangePollingInterval: remoteChangePollingInterval)
    }

    /// An in-memory store for every entity.
    public static var inMemory: StoreDescription { StoreDescription(kind: .inMemory) }

    /// An in-memory store for the entities of one configuration.
    public static func inMemory(configuration: String?) -> StoreDescription {
        StoreDescription(kind: .inMemory, configuration: configuration)
    }
}
