import Foundation

/// A ``DataStack`` over one SQLite file, with optional persistent history tracking and staged
/// migrations: the data-stack kit's `BasicDataStack`.
///
/// ```swift
/// // From a schema (or `@Entity` classes):
/// let stack = try BasicDataStack(schema, name: "Movies", mainAuthor: .iOSViewContext)
///
/// // From model versions: migrates the store to the current version, then opens it.
/// let versioned = try BasicDataStack(
///     versionKey: Versions.self, mainAuthor: .iOSViewContext, persistentHistoryOptions: .init())
/// await versioned.historyTracker?.startMonitoring()   // started already; awaiting makes sure it runs
/// ```
///
/// Without ``PersistentHistoryTrackingOptions`` the view context merges the saves of the
/// stack's other contexts by itself; with them the store records history and the stack's
/// ``historyTracker`` — created and started by the stack (the start reaches the actor a moment
/// later; `await` its ``PersistentHistoryTracker/startMonitoring()`` to be sure it runs, and a
/// ``PersistentHistoryTracker/stopMonitoring()`` that comes first wins) — merges other authors'
/// transactions, from this process and others. (The kit forgets the tracker in its versioned initializer;
/// Strata creates it in both.)
public final class BasicDataStack: DataStack {
    /// The stack's container.
    public let container: PersistentContainer
    /// The author of the view context.
    public let mainContextAuthor: TransactionAuthor
    /// The stack's history tracker, started; `nil` without history options.
    public let historyTracker: PersistentHistoryTracker?
    /// The store's file.
    public let storeURL: URL

    /// Opens (or creates) the store of `schema` at `storeURL`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try BasicDataStack(
    ///     try Schema([Movie.self]), name: "Movies", mainAuthor: .iOSViewContext,
    ///     persistentHistoryOptions: PersistentHistoryTrackingOptions(maxTransactionAge: 3 * 24 * 3600))
    /// ```
    ///
    /// - Parameters:
    ///   - schema: The model.
    ///   - name: The container's name; the store is `<data folder>/<name>/<name>.sqlite` unless
    ///     `storeURL` says otherwise.
    ///   - storeURL: The store's file, if not the default.
    ///   - mainAuthor: The view context's author.
    ///   - persistentHistoryOptions: How to track history; `nil` for none.
    /// - Throws: ``StrataError`` when the store cannot be opened (for instance when it was
    ///   written with another schema: migrate it with a ``ModelVersion`` type instead).
    public init(
        _ schema: Schema, name: String, storeURL: URL? = nil, mainAuthor: TransactionAuthor,
        persistentHistoryOptions: PersistentHistoryTrackingOptions? = nil
    ) throws {
        let url = storeURL ?? PersistentContainer.defaultStoreURL(name: name)
        self.storeURL = url
        self.mainContextAuthor = mainAuthor
        let container = try PersistentContainer(
            name: name, schema: schema,
            storeDescriptions: [.sqlite(url, persistentHistoryTracking: persistentHistoryOptions != nil)])
        self.container = container
        if let persistentHistoryOptions {
            historyTracker = persistentHistoryOptions.startedTracker(container: container, currentAuthor: mainAuthor)
        } else {
            container.viewContextMergesAutomatically.withLock { $0 = true }
            historyTracker = nil
        }
    }

    /// Opens (or creates) the store of the model made of `entities`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try BasicDataStack(entities: [Movie.self, Review.self], name: "Movies", mainAuthor: "app")
    /// ```
    ///
    /// - Throws: ``StrataError`` when the schema is invalid or the store cannot be opened.
    public convenience init(
        entities: [ManagedObject.Type], name: String, storeURL: URL? = nil, mainAuthor: TransactionAuthor,
        persistentHistoryOptions: PersistentHistoryTrackingOptions? = nil
    ) throws {
        try self.init(
            Schema.shared(for: entities), name: name, storeURL: storeURL, mainAuthor: mainAuthor,
            persistentHistoryOptions: persistentHistoryOptions)
    }

    /// Opens the store of a versioned model: at the current version, migrating the store to it
    /// first; at an older version, as that version without migrating.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try BasicDataStack(versionKey: Versions.self, mainAuthor: .iOSViewContext)
    /// // A build that must still read stores of version 2, untouched:
    /// let old = try BasicDataStack(storeURL: url, versionKey: Versions.self, currentVersion: .v2, mainAuthor: "reader")
    /// ```
    ///
    /// - Parameters:
    ///   - storeURL: The store's file; `<data folder>/<name>/<name>.sqlite` by default.
    ///   - versionKey: The ``ModelVersion`` type.
    ///   - currentVersion: The version to open the store as; the type's
    ///     ``ModelVersion/currentVersion`` when `nil`. Only the current version migrates.
    ///   - name: The container's name; the version type's name when `nil`.
    ///   - mainAuthor: The view context's author.
    ///   - persistentHistoryOptions: How to track history; `nil` for none.
    /// - Throws: ``StrataError``: the migration's errors (the store is then as it was), or the
    ///   store's when it cannot be opened as `currentVersion` (an older version opens only a
    ///   store written with it).
    public convenience init<Version: ModelVersion>(
        storeURL: URL? = nil, versionKey: Version.Type, currentVersion: Version? = nil, name: String? = nil,
        mainAuthor: TransactionAuthor, persistentHistoryOptions: PersistentHistoryTrackingOptions? = nil
    ) throws {
        let name = name ?? String(describing: Version.self)
        let url = storeURL ?? PersistentContainer.defaultStoreURL(name: name)
        let version = currentVersion ?? Version.currentVersion
        if version == Version.currentVersion, FileManager.default.fileExists(atPath: url.path) {
            try Version.migrationManager().migrateStore(at: url, to: version)
        }
        try self.init(
            version.modelVersion, name: name, storeURL: url, mainAuthor: mainAuthor,
            persistentHistoryOptions: persistentHistoryOptions)
    }

    /// Stops the stack's history tracker and closes its container, so that the store can be
    /// opened again — by another stack, a migration, or a test's next step.
    ///
    /// For example:
    ///
    /// ```swift
    /// try stack.close()
    /// let migrated = try BasicDataStack(versionKey: Versions.self, mainAuthor: .iOSViewContext)
    /// ```
    ///
    /// The tracker stops as soon as its actor takes the call; a pass already running ends with
    /// ``StrataError/Code/storeClosed`` in its ``PersistentHistoryTracker/lastError``, having
    /// written nothing. Contexts of the stack can no longer save; closing again does nothing.
    ///
    /// - Throws: The store's error when closing it fails.
    public func close() throws {
        if let historyTracker { Task { await historyTracker.stopMonitoring() } }
        try container.close()
    }
}
