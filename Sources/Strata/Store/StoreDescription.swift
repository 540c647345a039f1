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

    /// Creates a description.
    public init(kind: Kind, configuration: String? = nil) {
        self.kind = kind
        self.configuration = configuration
    }

    /// An SQLite file store.
    public static func sqlite(_ url: URL, configuration: String? = nil) -> StoreDescription {
        StoreDescription(kind: .sqlite(url), configuration: configuration)
    }

    /// An in-memory store for every entity.
    public static var inMemory: StoreDescription { StoreDescription(kind: .inMemory) }

    /// An in-memory store for the entities of one configuration.
    public static func inMemory(configuration: String?) -> StoreDescription {
        StoreDescription(kind: .inMemory, configuration: configuration)
    }
}
