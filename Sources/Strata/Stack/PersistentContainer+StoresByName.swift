import Foundation

/// A kind of store that can be opened by name (Core Data's `NSPersistentStore.StoreType`).
///
/// ```swift
/// try container.addPersistentStore(ofType: .sqlite, storeName: "Movies")
/// try container.addPersistentStore(ofType: .inMemory, configurationName: "Cache", storeName: "Cache")
/// ```
public struct StoreType: Sendable, Hashable, CustomStringConvertible {
    /// The type's name, as Core Data spells it (`SQLite`, `InMemory`).
    public let name: String
    /// The extension of the store's file, `nil` for stores without one.
    public let fileExtension: String?

    /// An SQLite file, placed by the store-location convention.
    public static let sqlite = StoreType(name: "SQLite", fileExtension: "sqlite")
    /// A store in memory, gone when it is removed or the container is released.
    public static let inMemory = StoreType(name: "InMemory", fileExtension: nil)

    /// The type's name.
    public var description: String { name }

    /// A description of a store of this type named `storeName`, placed by convention in
    /// `directory`.
    func storeDescription(
        storeName: String, configurationName: String?, in directory: URL, options: StoreOptions
    ) -> StoreDescription {
        let location: StoreDescription
        if let fileExtension {
            location = .sqlite(
                StoreLocation.url(
                    forStoreName: storeName, configurationName: configurationName, withExtension: fileExtension,
                    in: directory))
        } else {
            location = .inMemory
        }
        return StoreDescription(
            provider: location.provider, configuration: configurationName,
            remoteChangePollingInterval: options.remoteChangePollingInterval, isReadOnly: options.isReadOnly,
            isPersistentHistoryTrackingEnabled: options.persistentHistoryTracking)
    }
}

/// How to open a store added by name: the options of ``StoreDescription`` that do not say
/// where the store is (Core Data's store options dictionary).
public struct StoreOptions: Sendable, Hashable {
    /// Whether the store records persistent history
    /// (``StoreDescription/isPersistentHistoryTrackingEnabled``).
    public var persistentHistoryTracking: Bool
    /// Whether the store refuses writes (``StoreDescription/isReadOnly``).
    public var isReadOnly: Bool
    /// How often to look for other processes' commits
    /// (``StoreDescription/remoteChangePollingInterval``).
    public var remoteChangePollingInterval: Duration?

    /// Creates options; the defaults open a writable store without history or polling.
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.addPersistentStore(ofType: .sqlite, storeName: "Archive", options: StoreOptions(isReadOnly: true))
    /// ```
    public init(
        persistentHistoryTracking: Bool = false, isReadOnly: Bool = false, remoteChangePollingInterval: Duration? = nil
    ) {
        self.persistentHistoryTracking = persistentHistoryTracking
        self.isReadOnly = isReadOnly
        self.remoteChangePollingInterval = remoteChangePollingInterval
    }
}

/// Stores by name and configuration, placed by the store-location convention, as the stack
/// kit's coordinator extension manages them.
///
/// ```swift
/// let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [])
/// try container.addPersistentStore(ofType: .sqlite, storeName: "Movies")
/// try container.addPersistentStore(ofType: .sqlite, configurationName: "Archive", storeName: "Archive")
///
/// let archive = container.persistentStore(named: "Archive", configurationName: "Archive")
/// try container.removePersistentStores(forConfigurationName: "Archive")
/// try container.removeAllPersistentStores()
/// ```
///
/// A store is found by the name it was added under, or, for an SQLite store opened from a
/// description, by its file being placed by the convention for that name and configuration
/// (`…/<configuration or Default>/<name>/<name>.<extension>`, under any base folder).
extension PersistentContainer {
    /// Opens the store named `storeName` for `configurationName`, at
    /// `<directory>/CoreDataStores/<configuration or Default>/<storeName>/<storeName>.sqlite` for SQLite
    /// (the kit's `addPersistentStore(ofType:configurationName:storeName:options:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let cache = try container.addPersistentStore(ofType: .inMemory, configurationName: "Cache", storeName: "Cache")
    /// ```
    ///
    /// - Parameters:
    ///   - type: The kind of store; SQLite by default.
    ///   - configurationName: The configuration whose entities the store holds; `nil` for all.
    ///   - storeName: The store's name.
    ///   - directory: The base folder, under which `CoreDataStores` goes; by default
    ///     ``PersistentStore/defaultDirectory``.
    ///   - options: History, read-only and polling options; `nil` for the defaults.
    /// - Returns: The open store.
    /// - Throws: ``StrataError`` when the container is closed, the configuration is unknown, the
    ///   store cannot be opened, or a store of that name and configuration is open already.
    @discardableResult
    public func addPersistentStore(
        ofType type: StoreType = .sqlite, configurationName: String? = nil, storeName: String,
        in directory: URL? = nil, options: StoreOptions? = nil
    ) throws -> any PersistentStore {
        if persistentStore(named: storeName, configurationName: configurationName) != nil {
            throw StrataError(
                .storeError,
                "The container \(name) already has a store named '\(storeName)' for the configuration \(configurationName ?? "Default").")
        }
        let description = type.storeDescription(
            storeName: storeName, configurationName: configurationName,
            in: directory ?? StoreLocation.defaultDirectory, options: options ?? StoreOptions())
        return try addPersistentStore(description, name: storeName)
    }

    /// The open store named `storeName` for `configurationName` (`nil` for the default
    /// configuration), if any (the kit's `persistentStore(forName:configurationName:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// if let archive = container.persistentStore(named: "Archive", configurationName: "Archive") {
    ///     print(archive.identifier)
    /// }
    /// ```
    public func persistentStore(named storeName: String, configurationName: String? = nil) -> (any PersistentStore)? {
        storeEntries.first { $0.matches(storeName: storeName, configurationName: configurationName) }?.store
    }

    /// Closes and removes the store named `storeName` for `configurationName` (the kit's
    /// `removePersistentStore(forName:configurationName:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.removePersistentStore(named: "Archive", configurationName: "Archive")
    /// ```
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeNotFound`` when no store of that
    ///   name and configuration is open (as the kit throws when it finds none); the store's
    ///   error when closing it fails.
    public func removePersistentStore(named storeName: String, configurationName: String? = nil) throws {
        guard let store = persistentStore(named: storeName, configurationName: configurationName) else {
            let open = storeEntries.compactMap { entry in entry.name.map { "'\($0)'" } }
            throw StrataError(
                .storeNotFound,
                "The container \(name) has no open store named '\(storeName)' for the configuration \(configurationName ?? "Default")\(open.isEmpty ? "" : " (open: \(open.joined(separator: ", ")))").")
        }
        try removePersistentStore(store)
    }

    /// Closes and removes every store of `configurationName` (`nil` for the stores without
    /// configuration).
    ///
    /// For example:
    ///
    /// ```swift
    /// let removed = try container.removePersistentStores(forConfigurationName: "Cache")
    /// ```
    ///
    /// - Returns: How many stores were removed.
    /// - Throws: The first error met closing a store; the others are still removed.
    @discardableResult
    public func removePersistentStores(forConfigurationName configurationName: String?) throws -> Int {
        let wanted = Self.normalized(configurationName)
        return try removeStores(storeEntries.filter { Self.normalized($0.description.configuration) == wanted })
    }

    /// Closes and removes every store; the container stays open, and stores can be added again.
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.removeAllPersistentStores()
    /// try container.addPersistentStore(ofType: .sqlite, storeName: "Movies")   // start again
    /// ```
    ///
    /// - Returns: How many stores were removed.
    /// - Throws: The first error met closing a store; the others are still removed.
    @discardableResult
    public func removeAllPersistentStores() throws -> Int {
        try removeStores(storeEntries)
    }

    private func removeStores(_ entries: [StoreEntry]) throws -> Int {
        var firstError: (any Error)?
        for entry in entries {
            do { try removePersistentStore(entry.store) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
        return entries.count
    }
}
