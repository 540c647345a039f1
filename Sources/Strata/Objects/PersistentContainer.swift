import Foundation

/// The entry point to a Strata stack: a schema, the stores that hold its objects, and the
/// contexts that work with them.
///
/// ```swift
/// let container = try PersistentContainer(name: "Movies", entities: [Movie.self, Review.self])
/// // An SQLite file in the per-user data folder: ~/.local/share/Movies/Movies.sqlite on Linux,
/// // Application Support/Movies/Movies.sqlite on Apple platforms.
///
/// let context = await container.viewContext          // main actor
/// try await container.performBackgroundTask { context in
///     let movie = Movie(context: context)
///     movie.title = "Heat"
///     try context.save()
/// }
/// ```
///
/// A container is `Sendable`; share it freely. Contexts are not: each is used in the isolation
/// domain that created it (``viewContext`` on the main actor, ``newBackgroundContext()`` where you
/// call it, ``performBackgroundTask(author:_:)`` in its closure).
public final class PersistentContainer: Sendable {
    /// The container's name, also the default store's folder and file name.
    public let name: String
    /// The schema of every store.
    public let schema: Schema
    /// The open stores, in the order they were added (Core Data's `persistentStores`).
    ///
    /// A container starts with one store per store description; ``addPersistentStore(_:name:)``
    /// and ``removePersistentStore(_:)`` change the list while the container is open.
    public var stores: [any PersistentStore] { state.withLock { $0.entries.map(\.store) } }
    private let viewContextBox = ViewContextBox()
    private let state = LockedBox(State())
    /// Streams of ``savedChanges()``.
    let savedChangeStreams = ChangeStreams()
    /// Contexts that merge the others' saves by themselves.
    let mergeInboxes = MergeInboxes()
    /// The container's own observation of its stores' commits, which it passes on to
    /// ``savedChanges()`` and to the contexts that merge automatically.
    private let commitObservation = LockedBox<StoreObservation?>(nil)
    /// Whether the view context merges other contexts' saves as soon as it is made (set by data
    /// stacks before anyone asks for it).
    let viewContextMergesAutomatically = LockedBox(false)

    /// One open store, with the description it was opened from.
    struct StoreEntry {
        let description: StoreDescription
        let store: any PersistentStore
        /// The name it was added under, for stores added by name.
        let name: String?
    }

    /// A commit observer of the whole container, attached to every store, including stores
    /// added later.
    private struct CommitObserverEntry {
        let observer: @Sendable (StoreCommit) -> Void
        var observations: [ObjectIdentifier: StoreObservation]
    }

    private struct State {
        var isClosed = false
        var entries: [StoreEntry] = []
        var storesByEntity: [String: any PersistentStore] = [:]
        var commitObservers: [UUID: CommitObserverEntry] = [:]

        /// Which store holds each entity: the first store whose configuration lists it, or else
        /// the first store without configuration.
        mutating func assignEntities(of schema: Schema) {
            var byEntity: [String: any PersistentStore] = [:]
            for entry in entries where entry.description.configuration != nil {
                for entity in entry.store.schema.entities where byEntity[entity.name] == nil {
                    byEntity[entity.name] = entry.store
                }
            }
            for entry in entries where entry.description.configuration == nil {
                for entity in schema.entities where byEntity[entity.name] == nil {
                    byEntity[entity.name] = entry.store
                }
            }
            storesByEntity = byEntity
        }
    }

    /// Opens (or creates) the stores for the model made of `entities` and the classes they are
    /// related to.
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try PersistentContainer(
    ///     name: "Movies", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(storeURL)])
    /// let preview = try PersistentContainer(name: "Preview", entities: [Movie.self], storeDescriptions: [.inMemory])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The container's name; the default store is `<data folder>/<name>/<name>.sqlite`.
    ///   - entities: `@Entity` classes.
    ///   - storeDescriptions: Where to keep objects; by default one SQLite file in the default
    ///     location.
    ///
    /// The schema is built once per process for a list of classes (``Schema/shared(for:)``):
    /// containers opened from the same classes share it.
    ///
    /// - Throws: ``StrataError`` when the schema is invalid or a store cannot be opened.
    public convenience init(
        name: String, entities: [ManagedObject.Type], storeDescriptions: [StoreDescription]? = nil
    ) throws {
        try self.init(name: name, schema: Schema.shared(for: entities), storeDescriptions: storeDescriptions)
    }

    /// Opens (or creates) the stores for `schema`.
    ///
    /// Each store description may name a configuration; an entity is kept in the store of the
    /// first configuration that lists it, or else in a store without configuration.
    ///
    /// For example:
    ///
    /// ```swift
    /// let schema = try Schema([Movie.self])   // also finds Review and Person
    /// let container = try PersistentContainer(name: "Movies", schema: schema, storeDescriptions: [.inMemory])
    /// ```
    ///
    /// Pass an empty array to start without stores and add them with
    /// ``addPersistentStore(_:name:)``.
    ///
    /// - Throws: ``StrataError`` when a store cannot be opened (see ``StoreDescription/makeStore(schema:)``).
    public init(name: String, schema: Schema, storeDescriptions: [StoreDescription]? = nil) throws {
        self.name = name
        self.schema = schema
        let descriptions = storeDescriptions ?? [.sqlite(Self.defaultStoreURL(name: name))]
        var entries: [StoreEntry] = []
        do {
            for description in descriptions {
                let store = try Self.openStore(description, schema: schema, besides: entries)
                entries.append(StoreEntry(description: description, store: store, name: nil))
            }
        } catch {
            for entry in entries { try? entry.store.close() }
            throw error
        }
        state.withLock { state in
            state.entries = entries
            state.assignEntities(of: schema)
        }
        // Every commit — of this process's contexts, and of other processes noticed by polling
        // (a change of unknown objects) — reaches the streams of saved changes and the contexts
        // that merge automatically, from the store's one commit value.
        let observation = addCommitObserver { [weak self] commit in
            guard let self,
                commit.changedObjectsAreUnknown || !commit.namesNoObjects
            else { return }
            let wantedByStreams = self.savedChangeStreams.wants(.didSave)
            let wantedByContexts = self.mergeInboxes.count > 0
            guard wantedByStreams || wantedByContexts else { return }
            let changes = ContextChanges(commit)
            if wantedByStreams { self.savedChangeStreams.post(changes) }
            if wantedByContexts { self.mergeInboxes.post(changes, fromContext: commit.origin) }
        }
        commitObservation.withLock { $0 = observation }
        for entry in entries {
            if let interval = entry.description.remoteChangePollingInterval {
                entry.store.startPollingForRemoteChanges(every: interval)
            }
        }
    }

    /// Opens the store of `description`, refusing one that an open store already is.
    private static func openStore(
        _ description: StoreDescription, schema: Schema, besides entries: [StoreEntry]
    ) throws -> any PersistentStore {
        let storeSchema = try schema.subschema(forConfiguration: description.configuration)
        let store: any PersistentStore
        do {
            store = try description.makeStore(schema: storeSchema)
            description.coreDataProvider?.finishInterruptedCoreDataConversion(
                keepingOriginal: description.keepsConvertedCoreDataStore)
        } catch let error as StrataError where error.code == .notAStore && description.isCoreDataStore {
            // A store Core Data wrote: converted in place (or, read-only, copied into memory).
            store = try openCoreDataStore(description, schema: storeSchema)
        }
        // Objects are found by their store's identifier: two stores with one (the same file
        // twice, or a file and its in-memory copy) would make IDs ambiguous.
        if entries.contains(where: { $0.store.identifier == store.identifier }) {
            try? store.close()
            throw StrataError(
                .storeError,
                "Two of the container's store descriptions open the same store (identifier \(store.identifier)): the same file twice, or a file and a copy of it. Give each description a store of its own.",
                fileURL: store.url)
        }
        return store
    }

    /// Opens one more store while the container is open (Core Data's
    /// `addPersistentStore(with:)`).
    ///
    /// The new store's entities are found in it from now on: an entity goes to the first store
    /// whose configuration lists it, else to the first store without configuration, in the
    /// order the stores were added. Commit observers, live queries, streams of saved changes and
    /// contexts that merge automatically see its commits.
    ///
    /// For example:
    ///
    /// ```swift
    /// let archive = try container.addPersistentStore(.sqlite(archiveURL, configuration: "Archive"))
    /// ```
    ///
    /// - Parameters:
    ///   - description: Where and how to open the store.
    ///   - name: A name to find it by with ``persistentStore(named:configurationName:)``.
    /// - Returns: The open store.
    /// - Throws: ``StrataError`` when the container is closed, the configuration is unknown, the
    ///   store cannot be opened, or the container already has the same store open.
    @discardableResult
    public func addPersistentStore(_ description: StoreDescription, name: String? = nil) throws -> any PersistentStore {
        try checkOpen()
        let store = try Self.openStore(description, schema: schema, besides: state.withLock { $0.entries })
        let added = state.withLock { state -> Bool in
            // Checked again under the lock: another thread may have added or closed meanwhile.
            guard !state.isClosed, !state.entries.contains(where: { $0.store.identifier == store.identifier }),
                name.map({ name in
                    !state.entries.contains { $0.matches(storeName: name, configurationName: description.configuration) }
                }) ?? true
            else {
                return false
            }
            state.entries.append(StoreEntry(description: description, store: store, name: name))
            state.assignEntities(of: schema)
            for (id, entry) in state.commitObservers {
                state.commitObservers[id]?.observations[ObjectIdentifier(store)] = store.addCommitObserver(entry.observer)
            }
            return true
        }
        guard added else {
            try? store.close()
            try checkOpen()
            throw StrataError(
                .storeError,
                "The container already has this store open (identifier \(store.identifier))"
                    + (name.map { ", or a store named '\($0)' for this configuration" } ?? "") + ".",
                fileURL: store.url)
        }
        if let interval = description.remoteChangePollingInterval {
            store.startPollingForRemoteChanges(every: interval)
        }
        return store
    }

    /// Closes `store` and takes it out of the container (Core Data's `remove(_:)`).
    ///
    /// Its objects can no longer be fetched or saved through the container: a context that
    /// still holds some gets ``StrataError/Code/noStore`` or ``StrataError/Code/storeClosed``
    /// when it touches them. Entities it held go to the next store that can hold them, if any.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let archive = container.store(forEntityNamed: "Review") {
    ///     try container.removePersistentStore(archive)   // closes it; its reviews can no longer be fetched
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/noStore`` when `store` is not
    ///   one of the container's, or the store's error when closing it fails.
    public func removePersistentStore(_ store: any PersistentStore) throws {
        let removed = state.withLock { state -> [StoreObservation]? in
            guard let index = state.entries.firstIndex(where: { $0.store === store }) else { return nil }
            state.entries.remove(at: index)
            state.assignEntities(of: schema)
            var observations: [StoreObservation] = []
            for id in state.commitObservers.keys {
                if let observation = state.commitObservers[id]?.observations.removeValue(forKey: ObjectIdentifier(store)) {
                    observations.append(observation)
                }
            }
            return observations
        }
        guard let removed else {
            throw StrataError(
                .noStore, "The store \(store.identifier) is not one of the container \(name)'s stores.", fileURL: store.url)
        }
        for observation in removed { observation.cancel() }
        try store.close()
    }

    /// The open stores with the descriptions they were opened from and their names.
    var storeEntries: [StoreEntry] { state.withLock { $0.entries } }

    /// The per-user folder where containers keep their stores by default: `$XDG_DATA_HOME` or
    /// `~/.local/share` on Linux, Application Support on Apple platforms.
    public static var defaultDirectoryURL: URL {
        #if canImport(Darwin)
            if let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first {
                return support
            }
        #endif
        return defaultDirectoryURL(
            environment: ProcessInfo.processInfo.environment, home: FileManager.default.homeDirectoryForCurrentUser)
    }

    /// The default folder on Linux, per the XDG base directory specification: `$XDG_DATA_HOME`
    /// when set to an absolute path, `~/.local/share` otherwise.
    static func defaultDirectoryURL(environment: [String: String], home: URL) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        return home.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// The default store file of a container named `name`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let url = PersistentContainer.defaultStoreURL(name: "Movies")   // <defaultDirectoryURL>/Movies/Movies.sqlite
    /// ```
    public static func defaultStoreURL(name: String) -> URL {
        defaultDirectoryURL.appendingPathComponent(name, isDirectory: true).appendingPathComponent("\(name).sqlite")
    }

    /// The context of the main actor, for user interfaces and simple programs.
    ///
    /// The container owns its view context, which does not keep the container alive (as
    /// SwiftData's `mainContext`): keep a reference to the container while you use it. A
    /// container released without ``close()`` closes its stores and their files.
    @MainActor public var viewContext: ObjectContext {
        if let context = viewContextBox.context { return context }
        let context = ObjectContext(ownedBy: self)
        context.name = "viewContext"
        context.transactionAuthor = .viewContext
        context.isViewContext = true
        if viewContextMergesAutomatically.withLock({ $0 }) { context.automaticallyMergesChangesFromContainer = true }
        viewContextBox.context = context
        return context
    }

    /// A new context for use in the caller's isolation domain (a task, an actor).
    ///
    /// For example:
    ///
    /// ```swift
    /// Task.detached {
    ///     let context = container.newBackgroundContext()   // used only inside this task
    ///     Movie(context: context).title = "Heat"
    ///     try context.save()
    /// }
    /// ```
    public func newBackgroundContext() -> ObjectContext {
        ObjectContext(container: self)
    }

    /// Runs `body` with a new context on a background task and returns its result.
    ///
    /// The body runs on a thread that may block (Core Data's private queue), not on one of
    /// Swift's cooperative threads: its store calls wait on the disk or a database server, and
    /// a server can await many such tasks at once without stalling its other work.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = try await container.performBackgroundTask(author: "import") { context in
    ///     for row in rows { let movie = Movie(context: context); movie.title = row.title }
    ///     try context.save()
    ///     return try context.count(for: Movie.self)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - author: The transaction author recorded with the context's saves (and in persistent
    ///     history).
    ///   - body: The work; the context must not escape it.
    /// - Returns: What `body` returns.
    public func performBackgroundTask<Result: Sendable>(
        author: TransactionAuthor? = nil, _ body: @escaping @Sendable (ObjectContext) throws -> Result
    ) async throws -> Result {
        // On threads that may block, not on the cooperative pool: the body's store calls wait
        // on the disk or the server.
        try await Task.detached(executorPreference: BlockingWorkExecutor.shared) {
            let context = self.newBackgroundContext()
            context.transactionAuthor = author
            // As Core Data posts at the end of the block: changes nobody saved are announced.
            defer { context.processPendingChanges() }
            return try body(context)
        }.value
    }

    /// Calls `observer` after every commit of any of the container's stores.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observation = container.addCommitObserver { commit in
    ///     print("\(commit.author ?? "someone") inserted \(commit.insertedObjectIDs.count) objects")
    /// }
    /// ```
    ///
    /// - Returns: The registration; cancel or release it to stop.
    public func addCommitObserver(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        let id = UUID()
        state.withLock { state in
            var observations: [ObjectIdentifier: StoreObservation] = [:]
            for entry in state.entries {
                observations[ObjectIdentifier(entry.store)] = entry.store.addCommitObserver(observer)
            }
            state.commitObservers[id] = CommitObserverEntry(observer: observer, observations: observations)
        }
        return StoreObservation { [weak self] in
            let observations = self?.state.withLock { $0.commitObservers.removeValue(forKey: id) }?.observations
            for observation in (observations ?? [:]).values { observation.cancel() }
        }
    }

    /// Closes every store. Saving afterwards throws ``StrataError/Code/storeClosed``.
    ///
    /// For example:
    ///
    /// ```swift
    /// try container.close()   // at shutdown, once every context is done
    /// container.isClosed      // true
    /// ```
    public func close() throws {
        let (wasClosed, stores) = state.withLock { state in
            defer { state.isClosed = true }
            return (state.isClosed, state.entries.map(\.store))
        }
        guard !wasClosed else { return }
        commitObservation.withLock { $0 = nil }
        savedChangeStreams.finishAll()
        for store in stores { try store.close() }
    }

    /// Every commit of the container's stores, as object IDs with each save's author and context
    /// name: the saves of its contexts (child contexts excepted: their saves reach the stores
    /// through their parent), change sets saved to a store directly, and — for stores with a
    /// ``StoreDescription/remoteChangePollingInterval`` — other processes' commits, which name no
    /// objects. Each element is made from the store's ``StoreCommit``; a save that spans several
    /// stores yields one element per store.
    ///
    /// The sequence ends when the container is closed.
    ///
    /// For example:
    ///
    /// ```swift
    /// Task {
    ///     for await save in container.savedChanges() {
    ///         print(save.author ?? "someone", "inserted", save.insertedObjectIDs.count)
    ///     }
    /// }
    /// ```
    public func savedChanges() -> ContextChangesSequence {
        savedChangeStreams.makeSequence(for: [.didSave])
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// The store that holds objects of `entityName`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let store = container.store(forEntityNamed: "Movie")
    /// print(store?.url?.path ?? "in memory")
    /// ```
    public func store(forEntityNamed entityName: String) -> (any PersistentStore)? {
        state.withLock { $0.storesByEntity[entityName] }
    }

    /// The store whose identifier is `identifier`.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let identifier = movie.objectID.storeIdentifier, let store = container.store(withIdentifier: identifier) {
    ///     print("\(movie.title) is saved in \(store.url?.lastPathComponent ?? "memory")")
    /// }
    /// ```
    public func store(withIdentifier identifier: String) -> (any PersistentStore)? {
        state.withLock { state in state.entries.first { $0.store.identifier == identifier }?.store }
    }

    /// The object ID that a URI made by ``ObjectID/uriRepresentation`` stands for, if it names
    /// an entity and a store of this container.
    ///
    /// For example:
    ///
    /// ```swift
    /// let uri = movie.objectID.uriRepresentation   // keep it in a file or a link
    /// if let id = container.objectID(forURIRepresentation: uri) {
    ///     let restored = try context.existingObject(with: id) as? Movie
    /// }
    /// ```
    public func objectID(forURIRepresentation uri: URL) -> ObjectID? {
        guard let objectID = ObjectID(uriRepresentation: uri), !objectID.isTemporaryID,
            let storeIdentifier = objectID.storeIdentifier, store(withIdentifier: storeIdentifier) != nil,
            schema.entity(named: objectID.entityName) != nil
        else { return nil }
        return objectID
    }

    func checkOpen() throws {
        if isClosed {
            throw StrataError(.storeClosed, "The container \(name) was closed; open a new container to keep working.")
        }
    }
}

/// Holds the main actor's context; isolated to the main actor, so it is `Sendable`.
@MainActor private final class ViewContextBox {
    var context: ObjectContext?
    nonisolated init() {}
}

extension Schema {
    /// The schema of one configuration's entities, for a store that holds only them.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidSchema`` when an entity of
    ///   the configuration is related to an entity outside it (relationships cannot cross stores).
    func subschema(forConfiguration configuration: String?) throws -> Schema {
        guard let configuration, configuration != Schema.defaultConfigurationName else { return self }
        guard let members = configurations[configuration] else {
            throw StrataError(
                .unknownConfigurationEntity,
                "The schema has no configuration named '\(configuration)'."
                    + didYouMean(configuration, in: configurations.keys.sorted()))
        }
        let names = Set(members).union(
            members.flatMap { name in
                var chain: [String] = []
                var current = entity(named: name)?.superentity
                while let parent = current {
                    chain.append(parent.name)
                    current = parent.superentity
                }
                return chain
            })
        return try Schema(entityDescriptions.filter { names.contains($0.name) }, versionIdentifier: versionIdentifier)
    }
}

extension PersistentContainer {
    /// `nil` and the default configuration's name are the same configuration.
    static func normalized(_ configurationName: String?) -> String? {
        configurationName == Schema.defaultConfigurationName ? nil : configurationName
    }
}

extension PersistentContainer.StoreEntry {
    /// Whether this is the store named `storeName` for `configurationName`.
    func matches(storeName: String, configurationName: String?) -> Bool {
        let configuration = PersistentContainer.normalized(configurationName)
        guard PersistentContainer.normalized(description.configuration) == configuration else { return false }
        if let name { return name == storeName }
        guard let url = description.url else { return false }
        // `<configuration or Default>/<storeName>/<storeName>.<extension>`, under any base folder.
        let components = url.standardizedFileURL.pathComponents
        guard components.count >= 3 else { return false }
        return url.deletingPathExtension().lastPathComponent == storeName
            && components[components.count - 2] == storeName
            && components[components.count - 3] == (configuration ?? Schema.defaultConfigurationName)
    }
}
