import Foundation

/// The stack kit's default ``CoreDataStack``: a context, and sibling stacks with new contexts
/// on the same container.
///
/// ```swift
/// // Finds Movies.xcdatamodeld in the bundle and opens
/// // <PersistentStore.defaultDirectory>/CoreDataStores/Default/Movies/Movies.sqlite.
/// let stack = try DefaultCoreDataStack(modelName: "Movies", modelBundle: .module)
/// let movies = try stack.context.fetch(FetchRequest<ManagedObject>(entityName: "Movie"))
/// ```
///
/// Store locations follow the convention of ``PersistentStore/url(forStoreName:configurationName:withExtension:in:)``.
/// The kit's migration options are not needed: a store written by an earlier version of the
/// model is migrated with a ``ModelVersion`` type (``BasicDataStack`` does it for you).
open class DefaultCoreDataStack: CoreDataStack {
    /// The stack's context.
    public let context: ObjectContext

    /// Creates a stack around `context`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = DefaultCoreDataStack(context: container.newBackgroundContext())
    /// ```
    public required init(context: ObjectContext) {
        self.context = context
    }

    /// Creates a stack with a new context of `container` (the kit's `init(coordinator:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = DefaultCoreDataStack(container: container)   // a new background context
    /// ```
    public convenience init(container: PersistentContainer) {
        self.init(context: container.newBackgroundContext())
    }

    /// Opens a store of `model` and creates a stack on it (the kit's
    /// `init(model:storeType:configurationName:storeURL:options:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let stack = try DefaultCoreDataStack(model: schema, storeURL: folder.appendingPathComponent("Movies.sqlite"))
    /// let scratch = try DefaultCoreDataStack(model: schema, storeType: .inMemory, storeURL: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - model: The schema.
    ///   - storeType: The kind of store; SQLite by default.
    ///   - configurationName: The configuration whose entities the store holds; `nil` for all.
    ///   - storeURL: The SQLite file; ignored for in-memory stores. Required for SQLite.
    ///   - options: History, read-only and polling options; `nil` for the defaults.
    /// - Throws: ``StrataError`` when the store cannot be opened, or with
    ///   ``StrataError/Code/storeError`` when an SQLite store has no URL.
    public convenience init(
        model: Schema, storeType: StoreType = .sqlite, configurationName: String? = nil, storeURL: URL?,
        options: StoreOptions? = nil
    ) throws {
        let location: StoreDescription
        if storeType.fileExtension != nil {
            guard let storeURL else {
                throw StrataError(.storeError, "An \(storeType) store needs a URL; pass storeURL, or use init(modelName:) to place it by name.")
            }
            location = .sqlite(storeURL)
        } else {
            location = .inMemory
        }
        let options = options ?? StoreOptions()
        let description = StoreDescription(
            provider: location.provider, configuration: configurationName,
            remoteChangePollingInterval: options.remoteChangePollingInterval, isReadOnly: options.isReadOnly,
            isPersistentHistoryTrackingEnabled: options.persistentHistoryTracking)
        let container = try PersistentContainer(
            name: storeURL?.deletingPathExtension().lastPathComponent ?? "Store", schema: model,
            storeDescriptions: [description])
        self.init(container: container)
    }

    /// Opens the store named `storeName` (by default the model's name), placed by convention
    /// in `directory`, for `schema`, and creates a stack on it.
    ///
    /// For example:
    ///
    /// ```swift
    /// // <SQLiteStore.defaultDirectory>/CoreDataStores/Default/Movies/Movies.sqlite:
    /// let stack = try DefaultCoreDataStack(schema: schema, name: "Movies", options: StoreOptions(persistentHistoryTracking: true))
    /// ```
    ///
    /// - Throws: ``StrataError`` when the store cannot be opened.
    public convenience init(
        schema: Schema, name: String, storeType: StoreType = .sqlite, configurationName: String? = nil,
        storeName: String? = nil, options: StoreOptions? = nil, in directory: URL? = nil
    ) throws {
        let container = try PersistentContainer(name: name, schema: schema, storeDescriptions: [])
        try container.addPersistentStore(
            ofType: storeType, configurationName: configurationName, storeName: storeName ?? name, in: directory,
            options: options)
        self.init(container: container)
    }

    /// Finds the model named `modelName` in `modelBundle`, opens the store named `storeName`
    /// (by default the model's name) placed by convention, and creates a stack on it (the kit's
    /// `init(modelName:modelBundle:storeType:configurationName:storeName:options:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// // Movies.xcdatamodeld's Cloud configuration, in <defaultDirectory>/CoreDataStores/Cloud/Movies/:
    /// let stack = try DefaultCoreDataStack(modelName: "Movies", modelBundle: .module, configurationName: "Cloud")
    /// ```
    ///
    /// - Parameters:
    ///   - modelName: The `.xcdatamodeld` to find; its current version is used.
    ///   - modelBundle: The bundle whose resources hold it; the main bundle by default.
    ///   - storeType: The kind of store; SQLite by default.
    ///   - configurationName: The configuration whose entities the store holds; `nil` for all.
    ///   - storeName: The store's name; the model's by default.
    ///   - options: History, read-only and polling options; `nil` for the defaults.
    ///   - directory: The base folder under which `CoreDataStores/` goes; by default
    ///     ``PersistentStore/defaultDirectory``.
    /// - Throws: ``StrataError`` with ``StrataError/Code/modelFileNotFound`` when there is no
    ///   model of that name, and the store's errors.
    public convenience init(
        modelName: String, modelBundle: Bundle = .main, storeType: StoreType = .sqlite, configurationName: String? = nil,
        storeName: String? = nil, options: StoreOptions? = nil, in directory: URL? = nil
    ) throws {
        try self.init(
            schema: Schema.named(modelName, in: modelBundle), name: modelName, storeType: storeType,
            configurationName: configurationName, storeName: storeName, options: options, in: directory)
    }

    /// A stack with a new context of the same container.
    ///
    /// For example:
    ///
    /// ```swift
    /// let background = stack.createBackgroundStack()
    /// Task.detached {
    ///     try background.performAndWait { context in
    ///         Movie(context: context).title = "Heat"
    ///         try context.save()
    ///     }
    /// }
    /// ```
    open func createBackgroundStack() -> sending any CoreDataStack {
        DefaultCoreDataStack(context: newSiblingContext())
    }

    /// A stack with a new context of the same container, for the main actor.
    ///
    /// For example:
    ///
    /// ```swift
    /// let main = stack.createMainStack()
    /// Task { @MainActor in print(try main.context.count(for: Movie.self)) }
    /// ```
    open func createMainStack() -> sending any CoreDataStack {
        DefaultCoreDataStack(context: newSiblingContext())
    }

    /// A new context on the same stores; a context without a container gets a new one on the
    /// same schema.
    private func newSiblingContext() -> ObjectContext {
        context.container?.newBackgroundContext() ?? ObjectContext(schema: context.schema)
    }
}

@available(*, unavailable, message: "A stack owns a context, which belongs to one isolation domain.")
extension DefaultCoreDataStack: Sendable {}
