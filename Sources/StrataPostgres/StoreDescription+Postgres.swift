import Foundation
import Logging
import Strata

/// Opens PostgreSQL stores for containers: what ``Strata/StoreDescription/postgres(_:configuration:persistentHistoryTracking:logger:)``
/// puts in a description.
///
/// Two providers are equal when they name the same server, database and schema: the same store.
public struct PostgresStoreProvider: PersistentStoreProvider {
    /// Where the store lives and how to reach it.
    public var configuration: PostgresConfiguration

    /// A provider for the store in `configuration`'s database and schema.
    ///
    /// For example:
    ///
    /// ```swift
    /// let configuration = try PostgresConfiguration(url: "postgres://app@db.internal/movies")
    /// let provider = PostgresStoreProvider(configuration: configuration)
    /// let description = StoreDescription(provider: provider, isPersistentHistoryTrackingEnabled: true)
    /// ```
    public init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// Opens the store, logging through the description's ``Strata/StoreDescription/logger``
    /// with its statement settings.
    ///
    /// For example:
    ///
    /// ```swift
    /// let description = StoreDescription.postgres(configuration, persistentHistoryTracking: true)
    /// let store = try provider.makeStore(schema: try Schema([Movie.self]), description: description)
    /// ```
    public func makeStore(schema: Schema, description: StoreDescription) throws -> any PersistentStore {
        try PostgresStore(
            configuration: configuration, schema: schema, isReadOnly: description.isReadOnly,
            persistentHistoryTracking: description.isPersistentHistoryTrackingEnabled,
            instrumentation: StoreInstrumentation(description: description, kind: "postgres", name: configuration.schemaName))
    }

    /// Reads the schema from the store's metadata in a read-only session (see
    /// ``PostgresStore/recordedSchema(configuration:logger:)``); `nil` when the PostgreSQL schema holds
    /// no store.
    ///
    /// For example:
    ///
    /// ```swift
    /// let recorded = try PostgresStoreProvider(configuration: configuration).recordedSchema()
    /// ```
    public func recordedSchema() throws -> Schema? {
        try PostgresStore.recordedSchema(configuration: configuration)
    }

    /// The store's location, without the password.
    public var description: String { configuration.description }

    /// Whether two providers name the same store: the same host, port, database and schema, whatever
    /// their credentials, TLS and pool options.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.configuration.host == rhs.configuration.host && lhs.configuration.port == rhs.configuration.port
            && lhs.configuration.database == rhs.configuration.database
            && lhs.configuration.schemaName == rhs.configuration.schemaName
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(configuration.host)
        hasher.combine(configuration.port)
        hasher.combine(configuration.database)
        hasher.combine(configuration.schemaName)
    }
}

extension StoreDescription {
    /// A PostgreSQL store, from a configuration.
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try PersistentContainer(
    ///     name: "Movies", schema: schema,
    ///     storeDescriptions: [.postgres(try PostgresConfiguration(url: "postgres://app:secret@db/movies"))])
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The server, database, schema, TLS and pool.
    ///   - storeConfiguration: The model configuration whose entities the store holds; `nil`
    ///     for every entity.
    ///   - persistentHistoryTracking: Whether the store records persistent history.
    ///   - logger: Where the store logs connection events, conflicts and slow statements
    ///     (the description's ``Strata/StoreDescription/logger``).
    public static func postgres(
        _ configuration: PostgresConfiguration, configuration storeConfiguration: String? = nil,
        persistentHistoryTracking: Bool = false, logger: Logger? = nil
    ) -> StoreDescription {
        var description = StoreDescription(
            provider: PostgresStoreProvider(configuration: configuration),
            configuration: storeConfiguration, isPersistentHistoryTrackingEnabled: persistentHistoryTracking)
        description.logger = logger
        return description
    }

    /// A PostgreSQL store, from a connection URL (see ``PostgresConfiguration/init(url:)``).
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try PersistentContainer(
    ///     name: "Movies", entities: [Movie.self],
    ///     storeDescriptions: [try .postgres(url: "postgres://app:secret@db.internal/movies?schema=catalog")])
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidConfiguration`` for a bad URL.
    public static func postgres(
        url: String, configuration storeConfiguration: String? = nil, persistentHistoryTracking: Bool = false,
        logger: Logger? = nil
    ) throws -> StoreDescription {
        .postgres(
            try PostgresConfiguration(url: url), configuration: storeConfiguration,
            persistentHistoryTracking: persistentHistoryTracking, logger: logger)
    }
}
