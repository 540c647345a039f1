import Foundation
import Logging
import NIOCore
import PostgresNIO
import Strata

/// A store in a PostgreSQL database: the store for several app servers sharing one database.
///
/// It behaves exactly as the SQLite store does — the same conformance suite runs against both
/// — and keeps the same layout ideas with PostgreSQL's types (see ``PostgresValueCoding``).
/// Its tables live in one PostgreSQL schema (``PostgresConfiguration/schemaName``), so several
/// Strata models can share a database. Writes take a transaction-scoped advisory lock on that
/// schema, so that writers on every server commit one at a time, as they do in SQLite: a
/// merge policy resolves conflicts against the state the save writes over, and history
/// transactions are numbered in commit order.
///
/// Open it through a container with ``Strata/StoreDescription/postgres(_:configuration:persistentHistoryTracking:logger:)``:
///
/// ```swift
/// let container = try PersistentContainer(
///     name: "Movies", schema: schema,
///     storeDescriptions: [.postgres(try PostgresConfiguration(url: databaseURL))])
/// ```
///
/// Store calls are synchronous and block the calling thread while the server answers (see
/// ``PostgresConnectionPool`` for how that meets postgres-nio's event loops). Never call it on
/// an event-loop thread: such a call fails with a typed error instead of blocking the loop.
public final class PostgresStore: PersistentStore {
    /// The store's identifier, written into its metadata when the store was created: every server
    /// that opens the store gives its objects IDs with the same one.
    public let identifier: String
    /// The schema the store was opened with; the store's metadata records it.
    public let schema: Schema
    /// The store's location without credentials: `postgres://USER@HOST:PORT/DATABASE?schema=NAME`.
    public let url: URL?
    /// Whether saves are refused; the store's connections are then read-only sessions.
    public let isReadOnly: Bool
    /// Where the store lives and how it connects.
    public let configuration: PostgresConfiguration
    let layout: PostgresLayout
    let pool: PostgresConnectionPool
    let commitObservers = CommitObservers()
    /// Where the store logs: its instrumentation's logger.
    var logger: Logger { instrumentation.logger }
    /// The key of the advisory lock writers take: one per PostgreSQL schema.
    let writeLockKey: Int64
    let historyTracking: LockedBox<Bool>
    /// Set when a migration changed the store's schema while this store had lost its
    /// connection to the server (and so its presence lock): it refuses writes from then on.
    let schemaWasMigrated = LockedBox(false)
    /// This instance of the store, in its commit notices: its own commits come back from the
    /// server and are not announced twice.
    let instanceID = UUID().uuidString
    /// Where remote commits are handed to observers, in order, off the event loops.
    let announcements = DispatchQueue(label: "strata.postgres.commits")
    /// The connection that listens for other servers' commits.
    let listener: PostgresListener
    /// Where the store logs and what it counts (``Strata/StoreDescription/logger``).
    let instrumentation: StoreInstrumentation
    /// Whether the store records persistent history. It turns on by itself once another server has
    /// opened the store with history tracking: each write transaction checks.
    public var isPersistentHistoryTrackingEnabled: Bool { historyTracking.withLock { $0 } }

    /// Opens the store in `configuration`'s database and schema, creating its tables when the
    /// schema holds none.
    ///
    /// Opening checks what it finds before writing anything: a schema whose tables something
    /// else made, a store written with another schema, or a server it cannot reach or log in to
    /// gives a typed error, and the database is left as it was. Creating a store is one
    /// transaction: a crash half-way leaves nothing behind.
    ///
    /// For example:
    ///
    /// ```swift
    /// let store = try PostgresStore(
    ///     configuration: try PostgresConfiguration(url: "postgres://app:secret@db.internal/movies?schema=catalog"),
    ///     schema: try Schema([Movie.self]), persistentHistoryTracking: true)
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The server, database and schema.
    ///   - schema: The schema of the objects in the store.
    ///   - isReadOnly: Whether saves are refused (the store must exist); its connections are
    ///     read-only sessions.
    ///   - persistentHistoryTracking: Whether the store records persistent history.
    ///   - logger: Where connection events, conflicts and slow statements are logged;
    ///     nothing is logged by default.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/connectionFailed``,
    ///   ``StrataError/Code/authenticationFailed``, ``StrataError/Code/notAStore`` (the schema
    ///   holds tables of something else), ``StrataError/Code/incompatibleSchema`` (written with
    ///   another schema; the details list the differences), ``StrataError/Code/invalidSchema``
    ///   (a name too long for PostgreSQL) or ``StrataError/Code/storeNotWritable``.
    public convenience init(
        configuration: PostgresConfiguration, schema: Schema, isReadOnly: Bool = false,
        persistentHistoryTracking: Bool = false, logger: Logger? = nil
    ) throws {
        let description = StoreDescription.postgres(configuration, logger: logger)
        try self.init(
            configuration: configuration, schema: schema, isReadOnly: isReadOnly,
            persistentHistoryTracking: persistentHistoryTracking,
            instrumentation: StoreInstrumentation(description: description, kind: "postgres", name: configuration.schemaName))
    }

    /// Opens the store as ``init(configuration:schema:isReadOnly:persistentHistoryTracking:logger:)``
    /// does, logging and counting through `instrumentation`.
    package init(
        configuration: PostgresConfiguration, schema: Schema, isReadOnly: Bool, persistentHistoryTracking: Bool,
        instrumentation: StoreInstrumentation
    ) throws {
        let layout = try PostgresLayout(schema: schema)
        let logger = instrumentation.logger
        var setup = ["SET search_path TO \(quoted(configuration.schemaName))"]
        if isReadOnly { setup.append("SET default_transaction_read_only = on") }
        let pool = try PostgresConnectionPool(configuration: configuration, instrumentation: instrumentation, sessionSetup: setup)
        let writeLockKey = Self.lockKey(forSchemaNamed: configuration.schemaName)
        // The listener starts first: it holds the presence lock that keeps migrations away
        // while the store is open (and waits for one that runs), before anything is read.
        let receiver = WeakStore()
        let listener = PostgresListener(
            configuration: pool.connectionConfiguration, channel: Self.channel(forSchemaNamed: configuration.schemaName),
            presenceLockKey: Self.presenceLockKey(forSchemaNamed: configuration.schemaName),
            lockTimeout: configuration.pool.acquireTimeout, logger: logger,
            receive: { payload in receiver.store?.receive(payload) },
            reconnected: { receiver.store?.listenerReconnected() })
        let opened: (identifier: String, history: Bool)
        do {
            try PostgresConnectionPool.checkNotOnEventLoop()
            do {
                try listener.start()
            } catch where PostgresErrors.sqlState(of: error) == "55P03" {
                throw StrataError(
                    .storeInUse,
                    "The store \(configuration) is being migrated; it did not open within the pool's acquire timeout (\(configuration.pool.acquireTimeout)). Open it once the migration has finished.")
            } catch {
                throw PostgresErrors.connectionError(error, configuration: configuration)
            }
            opened = try pool.withConnection { session in
                try Self.prepare(
                    session, configuration: configuration, layout: layout, schema: schema, isReadOnly: isReadOnly,
                    history: persistentHistoryTracking, lockKey: writeLockKey)
            }
        } catch {
            listener.stop()
            pool.close()
            throw error
        }
        self.identifier = opened.identifier
        self.schema = schema
        self.url = URL(string: configuration.description)
        self.isReadOnly = isReadOnly
        self.configuration = configuration
        self.layout = layout
        self.pool = pool
        self.writeLockKey = writeLockKey
        self.historyTracking = LockedBox(opened.history)
        self.instrumentation = instrumentation
        self.listener = listener
        receiver.store = self
        logger.info("Opened PostgreSQL store", metadata: ["strata.store": "\(configuration)", "strata.storeIdentifier": "\(identifier)"])
    }

    /// The `pg_class.relkind` letters of relations that hold rows (tables, partitioned tables,
    /// views, materialized views, foreign tables): a schema holding any of them is not empty.
    static let tableKinds: [Character] = ["r", "p", "v", "m", "f"]

    /// The key of the advisory lock every open store of a PostgreSQL schema holds shared, and
    /// a migration exclusively.
    static func presenceLockKey(forSchemaNamed name: String) -> Int64 {
        lockKey(forSchemaNamed: "open:" + name)
    }

    /// A stable 64-bit key for the advisory lock of a PostgreSQL schema (FNV-1a of its name),
    /// the same in every process.
    static func lockKey(forSchemaNamed name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("strata:" + name).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Calls `observer` after each commit: this store's own on the thread that committed, and other
    /// servers' — heard through `LISTEN` — in commit order, off the event loops.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observation = store.addCommitObserver { commit in
    ///     if commit.isRemote { print("another server saved", commit.updatedObjectIDs.count, "updates") }
    /// }
    /// ```
    public func addCommitObserver(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        commitObservers.add(observer)
    }

    /// PostgreSQL stores always hear other servers' commits (`LISTEN`/`NOTIFY`): no polling.
    ///
    /// For example:
    ///
    /// ```swift
    /// store.startPollingForRemoteChanges(every: .seconds(1))   // does nothing: commits arrive by NOTIFY
    /// ```
    public func startPollingForRemoteChanges(every interval: Duration) {}

    /// Stops listening for other servers' commits and closes the pool's connections; later calls
    /// throw ``Strata/StrataError/Code/storeClosed``.
    ///
    /// For example:
    ///
    /// ```swift
    /// try store.close()   // or close the container that opened it
    /// ```
    public func close() throws {
        listener.stop()
        pool.close()
        logger.info("Closed PostgreSQL store", metadata: ["strata.store": "\(configuration)"])
    }

    deinit {
        listener.stop()
        pool.close()
    }

    // MARK: Connections

    /// The session of the save this thread is preparing, whose reads see the state the save
    /// writes over.
    @TaskLocal static var preparingSave: PreparingSave?

    /// A save in preparation: its store and session.
    struct PreparingSave: @unchecked Sendable {
        // Only read on the thread that set it, inside `withValue`: the session never crosses.
        let store: ObjectIdentifier
        let session: PostgresSession
    }

    /// Runs `body` on a connection: the preparing save's, on its thread, else one of the pool.
    func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        if let preparing = Self.preparingSave, preparing.store == ObjectIdentifier(self) {
            return try body(preparing.session)
        }
        return try pool.withConnection(body)
    }

    /// Refuses a write from inside ``save(preparedBy:)``'s `prepare`, which may only read.
    func checkNotPreparing() throws {
        guard let preparing = Self.preparingSave, preparing.store == ObjectIdentifier(self) else { return }
        throw StrataError(
            .storeError, "A store cannot be written while it prepares a save; the preparation may only read.", fileURL: url)
    }

    func checkWritable() throws {
        guard !isReadOnly else {
            throw StrataError(
                .storeNotWritable, "The store \(configuration) was opened read-only; nothing was saved.", fileURL: url)
        }
        guard !schemaWasMigrated.withLock({ $0 }) else {
            throw StrataError(
                .incompatibleSchema,
                "The store \(configuration) was migrated to another schema while this container had lost its connection; nothing was saved. Open a new container with the new schema.",
                fileURL: url)
        }
    }
}

extension PostgresStore {
    /// Checks the database and schema and creates the store when the schema has none, in one
    /// transaction under the schema's advisory lock (two servers starting at once create it
    /// once).
    ///
    /// - Returns: The store's identifier and whether it records history.
    static func prepare(
        _ session: PostgresSession, configuration: PostgresConfiguration, layout: PostgresLayout, schema: Schema,
        isReadOnly: Bool, history: Bool, lockKey: Int64
    ) throws -> (identifier: String, history: Bool) {
        let encoding = try session.query("SHOW server_encoding").rows.first.flatMap { $0.first.flatMap(PostgresValueCoding.string) }
        guard encoding == "UTF8" else {
            throw StrataError(
                .storeError,
                "The database \(configuration.database) uses the encoding \(encoding ?? "unknown"); Strata needs UTF8 (createdb --encoding=UTF8).")
        }
        let location = "the schema \(configuration.schemaName) of \(configuration)"
        return try session.transaction {
            if !isReadOnly {
                try session.lockUntilTransactionEnds(lockKey)
            }
            let tables = try session.relationNames(ofKinds: PostgresStore.tableKinds, inSchema: configuration.schemaName)
            if tables.contains(PostgresLayout.metadataTable) {
                return try checkExisting(session, location: location, schema: schema, layout: layout, history: history, isReadOnly: isReadOnly)
            }
            guard tables.isEmpty else {
                throw StrataError(
                    .notAStore,
                    "\(location) holds tables that are not a Strata store (\(tables.sorted().prefix(5).joined(separator: ", "))). Choose another schema (schema=NAME in the URL). Nothing was changed.")
            }
            guard !isReadOnly else {
                throw StrataError(
                    .storeNotWritable, "There is no store in \(location) to open read-only. Open it for writing once to create it.")
            }
            let identifier = UUID().uuidString
            try session.query("CREATE SCHEMA IF NOT EXISTS \(quoted(configuration.schemaName))")
            for statement in layout.creationStatements + PostgresFunctions.creationStatements
                + (history ? PostgresStore.historyCreationStatements : [])
            {
                try session.query(statement)
            }
            var metadata: [(String, Data)] = [
                ("identifier", Data(identifier.utf8)), ("schema", schema.serializedRepresentation()),
                ("versionHash", Data(schema.versionHash.utf8)), ("format", Data(PostgresLayout.format.utf8)),
            ]
            if history { metadata.append(("history", Data("1".utf8))) }
            for (key, value) in metadata {
                var bindings = PostgresBindings()
                bindings.append(string: key)
                bindings.append(value: .data(value))
                try session.query("INSERT INTO \(quoted(PostgresLayout.metadataTable)) (key, value) VALUES ($1, $2)", bindings)
            }
            return (identifier, history)
        }
    }

    /// Checks a store that exists: its format and the schema it was written with.
    private static func checkExisting(
        _ session: PostgresSession, location: String, schema: Schema, layout: PostgresLayout, history: Bool, isReadOnly: Bool
    ) throws -> (identifier: String, history: Bool) {
        var metadata: [String: Data] = [:]
        for row in try session.query("SELECT key, value FROM \(quoted(PostgresLayout.metadataTable))").rows {
            let cells = Array(row)
            guard cells.count == 2, let key = PostgresValueCoding.string(cells[0]), let value = PostgresValueCoding.data(cells[1])
            else { continue }
            metadata[key] = value
        }
        guard let identifier = metadata["identifier"].map({ String(decoding: $0, as: UTF8.self) }), let schemaData = metadata["schema"]
        else {
            throw StrataError(.corruptStore, "The metadata of the store in \(location) is incomplete. Nothing was changed.")
        }
        let format = metadata["format"].map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard format == PostgresLayout.format else {
            throw StrataError(
                .incompatibleSchema,
                "The store in \(location) has storage format '\(format)', which this version of Strata cannot read (it reads \(PostgresLayout.format)). Nothing was changed.")
        }
        if metadata["versionHash"] != Data(schema.versionHash.utf8) {
            let stored: Schema
            do {
                stored = try Schema(serializedRepresentation: schemaData)
            } catch {
                throw StrataError(.corruptStore, "The schema recorded in the store in \(location) cannot be read.", underlyingError: error)
            }
            if stored.versionHash != schema.versionHash {
                let difference = schema.difference(from: stored)
                throw StrataError(
                    .incompatibleSchema,
                    "The store in \(location) was written with another schema: \(difference.changes.map(\.description).joined(separator: "; ")). Migrate the store or open it with the schema it was written with. Nothing was changed.",
                    details: difference.changes.map { StrataError(.incompatibleSchema, $0.description) })
            }
        }
        var recordsHistory = metadata["history"] != nil
        if history && !recordsHistory && !isReadOnly {
            for statement in PostgresStore.historyCreationStatements { try session.query(statement) }
            var bindings = PostgresBindings()
            bindings.append(string: "history")
            bindings.append(value: .data(Data("1".utf8)))
            try session.query("INSERT INTO \(quoted(PostgresLayout.metadataTable)) (key, value) VALUES ($1, $2)", bindings)
            recordsHistory = true
        }
        return (identifier, recordsHistory)
    }

    /// The schema a store was written with, read without writing: what migrations and tools
    /// use to open a store without the app's classes.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let schema = try PostgresStore.recordedSchema(configuration: configuration) {
    ///     print(schema.entities.map(\.name))   // the store's entities, without the app's classes
    /// }
    /// ```
    ///
    /// - Returns: `nil` when the PostgreSQL schema holds no store.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/notAStore`` when the schema holds
    ///   tables of something else, or the connection errors.
    public static func recordedSchema(configuration: PostgresConfiguration, logger: Logger? = nil) throws -> Schema? {
        let description = StoreDescription.postgres(configuration, logger: logger)
        let pool = try PostgresConnectionPool(
            configuration: configuration,
            instrumentation: StoreInstrumentation(description: description, kind: "postgres", name: configuration.schemaName),
            sessionSetup: ["SET search_path TO \(quoted(configuration.schemaName))", "SET default_transaction_read_only = on"])
        defer { pool.close() }
        return try pool.withConnection { session in
            let tables = try session.relationNames(ofKinds: PostgresStore.tableKinds, inSchema: configuration.schemaName)
            guard tables.contains(PostgresLayout.metadataTable) else {
                if tables.isEmpty { return nil }
                throw StrataError(
                    .notAStore, "The schema \(configuration.schemaName) of \(configuration) holds tables that are not a Strata store.")
            }
            let rows = try session.query("SELECT value FROM \(quoted(PostgresLayout.metadataTable)) WHERE key = 'schema'").rows
            guard let data = rows.first.flatMap({ $0.first.flatMap(PostgresValueCoding.data) }) else {
                throw StrataError(.corruptStore, "The store in \(configuration) records no schema.")
            }
            do {
                return try Schema(serializedRepresentation: data)
            } catch {
                throw StrataError(.corruptStore, "The schema recorded in \(configuration) cannot be read.", underlyingError: error)
            }
        }
    }
}

/// A weak reference to a store, for the listener's callbacks.
///
/// The store is set once it is made, after its listener started, while the listener's threads
/// may already read it: both go through the lock box.
final class WeakStore: Sendable {
    private struct Reference {
        weak var store: PostgresStore?
    }

    private let reference = LockedBox(Reference())

    /// The store, until it is released.
    var store: PostgresStore? {
        get { reference.withLock { $0.store } }
        set { reference.withLock { $0.store = newValue } }
    }
}

extension PostgresStore {
    /// The bytes the store takes on the server: its tables (entities, join tables, metadata and
    /// history) with their indexes and TOAST data, as `pg_total_relation_size` counts them.
    /// Other tables in the same PostgreSQL schema (``PostgresConfiguration/schemaName``) are not
    /// counted. `strata info` shows it as the store's size.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let store = container.stores.first as? PostgresStore {
    ///     print(try store.storageSize())   // 180224
    /// }
    /// ```
    public func storageSize() throws -> Int {
        let schemaName = configuration.schemaName
        let tables = layout.tables.map(\.name) + [PostgresLayout.metadataTable] + Self.historyTables
        return try withSession { session in
            var bindings = PostgresBindings()
            bindings.append(string: schemaName)
            bindings.append(tables)
            let sizes = try session.query(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname = ANY($2)",
                bindings
            ).rows.compactMap { $0.first.flatMap(PostgresValueCoding.integer) }
            return Int(sizes.first ?? 0)
        }
    }
}
