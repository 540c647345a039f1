import Foundation
import GRDB

/// A store in an SQLite database: a file (the embedded default) or a private in-memory database.
///
/// A file store runs in WAL mode with one writer and concurrent readers (GRDB's
/// `DatabasePool`), so reading never blocks saving. Every save is one transaction.
///
/// ```swift
/// let store = try SQLiteStore(url: URL(fileURLWithPath: "Movies.sqlite"), schema: schema)
/// let memory = try SQLiteStore(inMemoryWith: schema)
/// ```
///
/// Opening checks the file before touching it: a file that is not an SQLite database, an SQLite
/// database that is not a Strata store, a truncated or corrupt file, and a store written with
/// another schema each give a typed error, and the file is left exactly as it was.
public final class SQLiteStore: PersistentStore {
    public let identifier: String
    public let schema: Schema
    public let url: URL?
    let layout: StoreLayout
    let writer: any DatabaseWriter
    let commitObservers = CommitObservers()
    /// The task looking for other processes' commits, while one runs.
    private let remoteChangePolling = LockedBox<Task<Void, Never>?>(nil)

    /// Opens the store at `url`, creating it (and its folder) if there is no file yet.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - schema: The schema of the objects in the store.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/notAStore`` (not a Strata store),
    ///   ``StrataError/Code/corruptStore`` (damaged file), ``StrataError/Code/incompatibleSchema``
    ///   (written with another schema; the details list the differences) or
    ///   ``StrataError/Code/storeNotWritable`` (the location cannot be written).
    public init(url: URL, schema: Schema) throws {
        let fileManager = FileManager.default
        let path = url.path
        let layout = StoreLayout(schema: schema)
        let existing = fileManager.fileExists(atPath: path) && ((try? fileManager.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0
        var identifier = UUID().uuidString
        if existing {
            try Self.checkHeader(of: url)
            identifier = try Self.inspectExisting(url: url, schema: schema) ?? identifier
        } else {
            do {
                try fileManager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw StrataError(
                    .storeNotWritable,
                    "Cannot create the folder for the store at \(path): \(error.localizedDescription). Choose a writable location.",
                    fileURL: url)
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "Strata \(url.lastPathComponent)"
        configuration.prepareDatabase { db in SQLiteFunctions.register(in: db) }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Self.openingError(error, url: url)
        }
        do {
            try Self.prepare(pool, layout: layout, schema: schema, identifier: identifier, isNew: !existing)
        } catch let error as StrataError {
            if !existing { Self.removeFiles(at: url) }
            throw error
        } catch {
            if !existing { Self.removeFiles(at: url) }
            throw Self.openingError(error, url: url)
        }
        self.identifier = identifier
        self.schema = schema
        self.url = url
        self.layout = layout
        self.writer = pool
    }

    /// Creates an empty store in memory, private to this instance.
    ///
    /// - Parameter schema: The schema of the objects in the store.
    public init(inMemoryWith schema: Schema) throws {
        let layout = StoreLayout(schema: schema)
        let identifier = UUID().uuidString
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in SQLiteFunctions.register(in: db) }
            queue = try DatabaseQueue(configuration: configuration)
            try Self.prepare(queue, layout: layout, schema: schema, identifier: identifier, isNew: true)
        } catch {
            throw StrataError(.storeError, "Could not create an in-memory store.", underlyingError: error)
        }
        self.identifier = identifier
        self.schema = schema
        self.url = nil
        self.layout = layout
        self.writer = queue
    }

    public func addCommitObserver(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        commitObservers.add(observer)
    }

    /// Looks for commits of other processes and connections every `interval`, and tells the
    /// commit observers of each with a remote ``StoreCommit``. Polling stops when the store
    /// closes or is released; calling this again changes the interval.
    ///
    /// SQLite's `PRAGMA data_version`, read on the writer connection, changes exactly when
    /// another connection committed; this store's own saves do not move it.
    func startPollingForRemoteChanges(every interval: Duration) {
        guard url != nil else { return }  // nobody else can write a private in-memory store
        // The version to compare with is read now, so that a commit made before the task first
        // runs is not missed.
        let initial = try? writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
        let task = Task.detached { [weak self] in
            var last = initial
            while !Task.isCancelled {
                // The store is held only while it is asked, never while the task sleeps.
                guard let version = await self?.dataVersion() else { return }
                if let last, let version, version != last { self?.notifyRemoteCommit() }
                if version != nil { last = version }
                try? await Task.sleep(for: interval)
            }
        }
        remoteChangePolling.withLock { running in
            running?.cancel()
            running = task
        }
    }

    deinit {
        remoteChangePolling.withLock { $0?.cancel() }
    }

    /// The writer connection's `PRAGMA data_version`, or `nil` when it cannot be read now (a
    /// busy or closing store: polling tries again at the next interval).
    private func dataVersion() async -> Int?? {
        .some(try? await writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") })
    }

    private func notifyRemoteCommit() {
        commitObservers.notify(
            StoreCommit(
                storeIdentifier: identifier, insertedObjectIDs: [], updatedObjectIDs: [], deletedObjectIDs: [],
                author: nil, contextName: nil, isRemote: true))
    }

    public func close() throws {
        remoteChangePolling.withLock { running in
            running?.cancel()
            running = nil
        }
        do {
            try writer.close()
        } catch {
            throw StrataError(.storeError, "Could not close the store: \(error.localizedDescription)", fileURL: url, underlyingError: error)
        }
    }

    // MARK: Opening

    /// Rejects files that are not SQLite databases, and databases shorter than their header says.
    static func checkHeader(of url: URL) throws {
        let header: Data
        let size: Int
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            header = try handle.read(upToCount: 100) ?? Data()
            size = Int(try handle.seekToEnd())
        } catch {
            throw StrataError(
                .storeNotWritable, "Cannot read the store at \(url.path): \(error.localizedDescription).", fileURL: url)
        }
        guard header.count >= 16, header.prefix(16) == Data("SQLite format 3\0".utf8) else {
            throw StrataError(
                .notAStore, "\(url.path) is not an SQLite database, so it cannot be a Strata store. It was not modified.",
                fileURL: url)
        }
        guard header.count == 100 else {
            throw StrataError(.corruptStore, "\(url.path) is truncated: its SQLite header is incomplete. It was not modified.", fileURL: url)
        }
        let bytes = [UInt8](header)
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        let pageCount = Int(bytes[28]) << 24 | Int(bytes[29]) << 16 | Int(bytes[30]) << 8 | Int(bytes[31])
        // A checkpoint interrupted by a crash can leave the main file shorter than its header
        // says while the missing pages are still in the WAL file; SQLite recovers that on open.
        let walPath = url.path + "-wal"
        let walSize = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? 0
        if pageSize >= 512, pageCount > 0, walSize == 0, size < pageSize * pageCount {
            throw StrataError(
                .corruptStore,
                "\(url.path) is truncated: its header describes \(pageSize * pageCount) bytes but the file has \(size). It was not modified.",
                fileURL: url)
        }
    }

    /// Reads an existing file without writing to it: checks that it is a Strata store written
    /// with `schema`, and returns its identifier (`nil` for an empty database).
    static func inspectExisting(url: URL, schema: Schema) throws -> String? {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db -> String? in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                if tables.isEmpty { return nil }
                guard tables.contains(StoreLayout.metadataTable) else {
                    throw StrataError(
                        .notAStore,
                        "\(url.path) is an SQLite database but not a Strata store (it has no \(StoreLayout.metadataTable) table). It was not modified.",
                        fileURL: url)
                }
                let metadata = try Self.readMetadata(db)
                guard let identifier = metadata["identifier"].map({ String(decoding: $0, as: UTF8.self) }),
                    let schemaData = metadata["schema"]
                else {
                    throw StrataError(.corruptStore, "The metadata of the store at \(url.path) is incomplete. It was not modified.", fileURL: url)
                }
                // The recorded version hash settles the usual case without decoding the recorded
                // schema, which costs more than the rest of opening; the schema is read only to
                // explain a difference.
                if metadata["versionHash"] == Data(schema.versionHash.utf8) { return identifier }
                let stored: Schema
                do {
                    stored = try Schema(serializedRepresentation: schemaData)
                } catch {
                    throw StrataError(
                        .corruptStore, "The schema recorded in the store at \(url.path) cannot be read. It was not modified.",
                        fileURL: url, underlyingError: error)
                }
                guard stored.versionHash == schema.versionHash else {
                    let difference = schema.difference(from: stored)
                    throw StrataError(
                        .incompatibleSchema,
                        "The store at \(url.path) was written with another schema: \(difference.changes.map(\.description).joined(separator: "; ")). Migrate the store or open it with the schema it was written with.",
                        fileURL: url,
                        details: difference.changes.map { StrataError(.incompatibleSchema, $0.description, fileURL: url) })
                }
                return identifier
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw openingError(error, url: url)
        }
    }

    static func readMetadata(_ db: Database) throws -> [String: Data] {
        var metadata: [String: Data] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM \(quoted(StoreLayout.metadataTable))") {
            let key: String? = row[0]
            let value: Data? = row[1]
            if let key, let value { metadata[key] = value }
        }
        return metadata
    }

    /// Creates the tables of a new store, or checks an existing one.
    static func prepare(_ writer: any DatabaseWriter, layout: StoreLayout, schema: Schema, identifier: String, isNew: Bool) throws {
        try writer.write { db in
            let hasMetadata = try db.tableExists(StoreLayout.metadataTable)
            guard !hasMetadata else { return }
            try db.execute(
                sql: "CREATE TABLE \(quoted(StoreLayout.metadataTable)) (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)")
            for statement in layout.creationStatements { try db.execute(sql: statement) }
            let insert = "INSERT INTO \(quoted(StoreLayout.metadataTable)) (key, value) VALUES (?, ?)"
            try db.execute(sql: insert, arguments: ["identifier", Data(identifier.utf8)])
            try db.execute(sql: insert, arguments: ["schema", schema.serializedRepresentation()])
            try db.execute(sql: insert, arguments: ["versionHash", Data(schema.versionHash.utf8)])
            try db.execute(sql: insert, arguments: ["format", Data("1".utf8)])
        }
    }

    static func removeFiles(at url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    static func openingError(_ error: any Error, url: URL) -> StrataError {
        if let error = error as? StrataError { return error }
        if let database = error as? DatabaseError {
            switch database.resultCode {
            case .SQLITE_NOTADB:
                return StrataError(.notAStore, "\(url.path) is not an SQLite database. It was not modified.", fileURL: url, underlyingError: database)
            case .SQLITE_CORRUPT:
                return StrataError(.corruptStore, "\(url.path) is damaged: \(database.message ?? "corrupt database"). It was not modified.", fileURL: url, underlyingError: database)
            case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
                return StrataError(
                    .storeNotWritable,
                    "Cannot open the store at \(url.path) for writing (\(database.message ?? "permission denied")). Choose a writable location or fix the file's permissions.",
                    fileURL: url, underlyingError: database)
            default:
                break
            }
            return StrataError(.storeError, "SQLite failed on \(url.path): \(database.message ?? "\(database.resultCode)").", fileURL: url, underlyingError: database)
        }
        return StrataError(.storeError, "Could not open the store at \(url.path): \(error.localizedDescription)", fileURL: url)
    }
}
