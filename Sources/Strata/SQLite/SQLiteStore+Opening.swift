import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a file store: deciding from the file alone whether it may be opened, creating new
/// stores atomically, and opening existing ones without writing to them.
extension SQLiteStore {
    /// The SQLite `application_id` of Strata stores ("Strt"), in the database header.
    static let applicationID: Int32 = 0x5374_7274

    /// What is at a store's path.
    enum FileState {
        case missing
        /// A file of zero bytes: SQLite treats it as a new, empty database.
        case empty
        case existing
    }

    /// What a look into an existing database found.
    enum Inspection {
        /// A Strata store written with the schema: its identifier and format.
        case store(identifier: String, format: String)
        /// A database with no tables, indexes, views or triggers, no user version and no
        /// application ID: indistinguishable from a store whose creation was interrupted.
        case emptyDatabase
    }

    /// Opens the store file at `url`, creating it when there is none.
    static func openFile(
        at url: URL, schema: Schema, layout: StoreLayout, isReadOnly: Bool, instrumentation: StoreInstrumentation? = nil
    ) throws -> (
        pool: DatabasePool, identifier: String
    ) {
        // Creating can lose a race with another process creating the same store; the store
        // then exists, and the next round opens it.
        for _ in 0..<3 {
            switch try fileState(at: url) {
            case .missing:
                guard !isReadOnly else {
                    throw StrataError(
                        .storeNotWritable,
                        "There is no store at \(url.path) to open read-only. Open it for writing once to create it.",
                        fileURL: url)
                }
                let identifier = UUID().uuidString
                guard try createAtomically(at: url, schema: schema, layout: layout, identifier: identifier) else { continue }
                return (try openPool(at: url, isReadOnly: false, instrumentation: instrumentation), identifier)
            case .empty:
                guard !isReadOnly else {
                    throw StrataError(
                        .storeNotWritable,
                        "\(url.path) is an empty file, not a store; a read-only open cannot create one. It was not modified.",
                        fileURL: url)
                }
                removeStaleSideFiles(of: url)
                return try createInPlace(at: url, schema: schema, layout: layout, instrumentation: instrumentation)
            case .existing:
                guard try recoverHotJournalIfNeeded(at: url, isReadOnly: isReadOnly) else { continue }
                try checkHeader(of: url)
                switch try inspectExisting(url: url, schema: schema) {
                case .store(let identifier, let format):
                    let pool = try openPool(at: url, isReadOnly: isReadOnly, instrumentation: instrumentation)
                    do {
                        try verifyStructure(of: pool, layout: layout, format: format, isReadOnly: isReadOnly, url: url)
                    } catch {
                        try? pool.close()
                        throw openingError(error, url: url)
                    }
                    return (pool, identifier)
                case .emptyDatabase:
                    guard !isReadOnly else {
                        throw StrataError(
                            .storeNotWritable,
                            "\(url.path) is an empty database, not a store; a read-only open cannot create one. It was not modified.",
                            fileURL: url)
                    }
                    return try createInPlace(at: url, schema: schema, layout: layout)
                }
            }
        }
        throw StrataError(
            .storeError,
            "The store at \(url.path) kept appearing and disappearing while it was opened; another process may be creating and deleting it.",
            fileURL: url)
    }

    /// Whether there is a file at `url`, and whether it is empty. Only regular files (or links
    /// to them) can be stores.
    static func fileState(at url: URL) throws -> FileState {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return .missing }
            throw StrataError(
                .storeNotWritable, "Cannot read the store at \(url.path): \(String(cString: strerror(code))).",
                fileURL: url)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "a device or other special file"
            throw StrataError(
                .notAStore, "\(url.path) is \(kind), not a regular file, so it cannot be a store. It was not modified.",
                fileURL: url)
        }
        return info.st_size == 0 ? .empty : .existing
    }

    /// The size of the file at `path`, or `nil` when there is none.
    static func fileSize(atPath path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    // MARK: Creating

    /// Builds a new store under a temporary name next to `url` and moves it into place whole.
    ///
    /// - Returns: `false` when another process put a store at `url` first (it is left alone).
    static func createAtomically(at url: URL, schema: Schema, layout: StoreLayout, identifier: String) throws -> Bool {
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StrataError(
                .storeNotWritable,
                "Cannot create the folder for the store at \(url.path): \(error.localizedDescription). Choose a writable location.",
                fileURL: url)
        }
        removeAbandonedCreations(of: url)
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent)-\(UUID().uuidString)\(creatingSuffix)")
        defer { removeFiles(at: temporary) }
        do {
            let pool = try DatabasePool(path: temporary.path, configuration: configuration(for: url, isReadOnly: false))
            try prepareNewStore(pool, layout: layout, schema: schema, identifier: identifier)
            // Closing checkpoints the WAL into the file and removes it: the file is complete.
            try pool.close()
        } catch let error as StrataError {
            throw error
        } catch {
            throw openingError(error, url: url)
        }
        // A journal or WAL left by a deleted store of the same name would be replayed into the
        // new one; SQLite removes them too when it finds no database.
        guard fileState(orMissing: url) == .missing else { return false }
        removeStaleSideFiles(of: url)
        if link(temporary.path, url.path) != 0 {
            let code = errno
            if code == EEXIST { return false }
            // A file system without hard links: move the file instead, checking once more that
            // nothing took the name meanwhile.
            guard fileState(orMissing: url) == .missing, rename(temporary.path, url.path) == 0 else {
                if fileState(orMissing: url) != .missing { return false }
                throw StrataError(
                    .storeNotWritable,
                    "Cannot create the store at \(url.path): \(String(cString: strerror(code))). Choose a writable location.",
                    fileURL: url)
            }
        }
        synchronizeFolder(folder)
        return true
    }

    /// Creates the tables of a new store in an existing empty file (or empty database), which
    /// cannot be replaced atomically without racing other processes. A crash half-way leaves
    /// an empty file or an empty database, which the next open creates the store in again.
    static func createInPlace(
        at url: URL, schema: Schema, layout: StoreLayout, instrumentation: StoreInstrumentation? = nil
    ) throws -> (pool: DatabasePool, identifier: String) {
        do {
            let pool = try DatabasePool(
                path: url.path, configuration: configuration(for: url, isReadOnly: false, instrumentation: instrumentation))
            let identifier = try prepareNewStore(pool, layout: layout, schema: schema, identifier: UUID().uuidString)
            return (pool, identifier)
        } catch let error as StrataError {
            throw error
        } catch {
            throw openingError(error, url: url)
        }
    }

    /// Creates the tables and metadata of a new store in one transaction, unless another
    /// process did so first; returns the store's identifier.
    @discardableResult
    static func prepareNewStore(_ writer: any DatabaseWriter, layout: StoreLayout, schema: Schema, identifier: String) throws
        -> String
    {
        try writer.write { db in
            if try db.tableExists(StoreLayout.metadataTable) {
                return try readMetadata(db)["identifier"].map { String(decoding: $0, as: UTF8.self) } ?? identifier
            }
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(
                sql: "CREATE TABLE \(quoted(StoreLayout.metadataTable)) (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)")
            for statement in layout.creationStatements { try db.execute(sql: statement) }
            let insert = "INSERT INTO \(quoted(StoreLayout.metadataTable)) (key, value) VALUES (?, ?)"
            try db.execute(sql: insert, arguments: ["identifier", Data(identifier.utf8)])
            try db.execute(sql: insert, arguments: ["schema", schema.serializedRepresentation()])
            try db.execute(sql: insert, arguments: ["versionHash", Data(schema.versionHash.utf8)])
            try db.execute(sql: insert, arguments: ["format", Data(StoreLayout.format.utf8)])
            return identifier
        }
    }

    /// The suffix of the temporary files new stores are built in.
    static let creatingSuffix = ".strata-creating"

    /// Removes temporary files that creations killed half-way left next to `url`. Creating a
    /// store takes milliseconds, so files older than an hour belong to no running creation.
    static func removeAbandonedCreations(of url: URL) {
        let folder = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let cutoff = Date().addingTimeInterval(-3600)
        for name in names where name.hasPrefix(prefix) && name.contains(creatingSuffix) {
            let path = folder.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            if modified < cutoff { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Removes the journal, WAL and shared-memory files of a database that no longer exists
    /// (or is empty), as SQLite does itself: replayed into a new database, they would damage it.
    static func removeStaleSideFiles(of url: URL) {
        for suffix in ["-journal", "-wal", "-shm"] {
            // Checked each time: a store that appears meanwhile keeps its files.
            guard fileState(orMissing: url) != .existing else { return }
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// The state of `url`, counting anything unreadable as existing (never to be replaced).
    static func fileState(orMissing url: URL) -> FileState {
        (try? fileState(at: url)) ?? .existing
    }

    /// Makes a new directory entry durable.
    static func synchronizeFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try? handle.synchronize()
        try? handle.close()
    }

    // MARK: Opening existing files

    /// The connection settings of a file store.
    static func configuration(
        for url: URL, isReadOnly: Bool, instrumentation: StoreInstrumentation? = nil
    ) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = isReadOnly
        configuration.label = "Strata \(url.lastPathComponent)"
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(in: db)
            if let instrumentation { observeStatements(of: db, instrumentation) }
        }
        return configuration
    }

    /// Times every statement a connection runs and hands it to `instrumentation` (slow
    /// statements and the statement trace), when a logger wants them: otherwise nothing is
    /// installed and statements cost nothing extra.
    static func observeStatements(of db: Database, _ instrumentation: StoreInstrumentation) {
        guard instrumentation.observesStatements else { return }
        db.trace(options: .profile) { event in
            // `sql` is the text as prepared, with `?` where values are bound; never
            // `expandedSQL`, which would put the values in the log.
            guard case .profile(let statement, let duration) = event else { return }
            instrumentation.statement(statement.sql, duration: .nanoseconds(Int64(duration * 1e9)))
        }
    }

    /// Opens an existing store's connections without writing to the file.
    ///
    /// GRDB makes sure a WAL-mode database has a non-empty `-wal` file by creating and dropping
    /// a table, which moves the schema cookie and leaves a free page behind. A placeholder
    /// `-wal` too short to hold a WAL header is one SQLite reads as an empty WAL and replaces on
    /// the first write, so it keeps GRDB from writing without changing what SQLite sees.
    static func openPool(at url: URL, isReadOnly: Bool, instrumentation: StoreInstrumentation? = nil) throws -> DatabasePool {
        if !isReadOnly { placeEmptyWAL(for: url) }
        do {
            return try DatabasePool(
                path: url.path, configuration: configuration(for: url, isReadOnly: isReadOnly, instrumentation: instrumentation))
        } catch {
            throw openingError(error, url: url)
        }
    }

    /// Removes the `-wal` and `-shm` files of a closed store that no other connection uses.
    ///
    /// SQLite removes them when the last connection to the file closes, but only when that
    /// connection can write, and GRDB closes a pool's read-only reader connections last. A
    /// connection opened and closed on its own removes them, after checkpointing whatever the
    /// WAL holds; while another connection uses the file it leaves them in place.
    static func removeSideFilesIfUnused(of url: URL) {
        guard fileSize(atPath: url.path + "-wal") != nil || fileSize(atPath: url.path + "-shm") != nil,
            fileState(orMissing: url) == .existing,
            let connection = try? SQLiteFileInspector(url: url, mode: .recovery)
        else { return }
        _ = try? connection.integer("PRAGMA schema_version")  // reads, which opens the WAL
    }

    /// Creates the placeholder `-wal` file, unless a WAL file already exists (in use or not).
    static func placeEmptyWAL(for url: URL) {
        let descriptor = open(url.path + "-wal", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { return }
        // Shorter than the 32-byte WAL header: SQLite treats the file as holding no frames.
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try? handle.write(contentsOf: Data(count: 8))
        try? handle.close()
    }

    /// Rolls back a transaction a crash left in a rollback journal, as any read-write SQLite
    /// connection does on open (a read-only one cannot, and then fails every read).
    ///
    /// - Returns: `false` when the rollback emptied the file: its creation had been interrupted.
    static func recoverHotJournalIfNeeded(at url: URL, isReadOnly: Bool) throws -> Bool {
        guard let journalSize = fileSize(atPath: url.path + "-journal"), journalSize > 0 else { return true }
        guard !isReadOnly else {
            throw StrataError(
                .storeNotWritable,
                "The store at \(url.path) was left in the middle of a transaction by a crash (\(url.lastPathComponent)-journal), and a read-only open cannot roll it back. Open it for writing once to recover it.",
                fileURL: url)
        }
        do {
            let recovery = try SQLiteFileInspector(url: url, mode: .recovery)
            _ = try recovery.integer("SELECT count(*) FROM sqlite_master")
        } catch {
            throw openingError(error, url: url)
        }
        return fileState(orMissing: url) == .existing
    }

    /// Rejects files that are not SQLite databases, and databases shorter than their header says.
    static func checkHeader(of url: URL) throws {
        let header: Data
        let size: Int
        do {
            (header, size) = try StoreFileLock.withRegisteredDescriptor(of: url) { descriptor in
                // Through the descriptor the process keeps for the store when there is one:
                // closing another descriptor of the file would drop SQLite's locks on it.
                if let descriptor {
                    var bytes = [UInt8](repeating: 0, count: 100)
                    let count = pread(descriptor, &bytes, 100, 0)
                    var status = stat()
                    guard count >= 0, fstat(descriptor, &status) == 0 else {
                        throw CocoaError(.fileReadUnknown)
                    }
                    return (Data(bytes.prefix(count)), Int(status.st_size))
                }
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                return (try handle.read(upToCount: 100) ?? Data(), Int(try handle.seekToEnd()))
            }
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
        let walSize = fileSize(atPath: url.path + "-wal") ?? 0
        if pageSize >= 512, pageCount > 0, walSize == 0, size < pageSize * pageCount {
            throw StrataError(
                .corruptStore,
                "\(url.path) is truncated: its header describes \(pageSize * pageCount) bytes but the file has \(size). It was not modified.",
                fileURL: url)
        }
    }

    /// Reads an existing file without writing to it or creating files next to it: checks that
    /// it is a Strata store written with `schema`.
    static func inspectExisting(url: URL, schema: Schema) throws -> Inspection {
        // Committed transactions may still be in the WAL file; only a connection that reads it
        // sees them. Without one, an immutable connection reads the file alone, lock-free.
        let hasWALContent = (fileSize(atPath: url.path + "-wal") ?? 0) > 0
        let sharedMemory = url.path + "-shm"
        let hadSharedMemory = fileSize(atPath: sharedMemory) != nil
        do {
            let inspector = try SQLiteFileInspector(url: url, mode: hasWALContent ? .readOnly : .immutable)
            return try inspect(inspector, url: url, schema: schema)
        } catch {
            // A read-only connection to a WAL database makes the shared-memory index when it is
            // missing; a refused file keeps its folder as it was.
            if !hadSharedMemory { try? FileManager.default.removeItem(atPath: sharedMemory) }
            throw openingError(error, url: url)
        }
    }

    private static func inspect(_ inspector: SQLiteFileInspector, url: URL, schema: Schema) throws -> Inspection {
        let objects = try inspector.rows("SELECT type, name FROM sqlite_master")
        let tables = objects.filter { $0.first == Data("table".utf8) }.compactMap { $0.last.flatMap { $0 } }
            .map { String(decoding: $0, as: UTF8.self) }
        if objects.isEmpty {
            let userVersion = try inspector.integer("PRAGMA user_version")
            let applicationID = try inspector.integer("PRAGMA application_id")
            guard userVersion == 0, applicationID == 0 || applicationID == Int(Self.applicationID) else {
                throw StrataError(
                    .notAStore,
                    "\(url.path) is an SQLite database made by another program (user version \(userVersion), application ID \(applicationID)), not a Strata store. It was not modified.",
                    fileURL: url)
            }
            return .emptyDatabase
        }
        guard tables.contains(StoreLayout.metadataTable) else {
            throw StrataError(
                .notAStore,
                "\(url.path) is an SQLite database but not a Strata store (it has no \(StoreLayout.metadataTable) table). It was not modified.",
                fileURL: url)
        }
        var metadata: [String: Data] = [:]
        for row in try inspector.rows("SELECT key, value FROM \(quoted(StoreLayout.metadataTable))") where row.count == 2 {
            if let key = row[0], let value = row[1] { metadata[String(decoding: key, as: UTF8.self)] = value }
        }
        guard let identifier = metadata["identifier"].map({ String(decoding: $0, as: UTF8.self) }),
            let schemaData = metadata["schema"]
        else {
            throw StrataError(.corruptStore, "The metadata of the store at \(url.path) is incomplete. It was not modified.", fileURL: url)
        }
        let format = metadata["format"].map { String(decoding: $0, as: UTF8.self) } ?? "1"
        guard StoreLayout.readableFormats.contains(format) else {
            throw StrataError(
                .incompatibleSchema,
                "The store at \(url.path) has storage format \(format), which this version of Strata cannot read (it reads formats \(StoreLayout.readableFormats.sorted().joined(separator: ", "))). Open it with a newer Strata. It was not modified.",
                fileURL: url)
        }
        // The recorded version hash settles the usual case without decoding the recorded
        // schema, which costs more than the rest of opening; the schema is read only to
        // explain a difference.
        if metadata["versionHash"] == Data(schema.versionHash.utf8) { return .store(identifier: identifier, format: format) }
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
                "The store at \(url.path) was written with another schema: \(difference.changes.map(\.description).joined(separator: "; ")). Migrate the store or open it with the schema it was written with. It was not modified.",
                fileURL: url,
                details: difference.changes.map { StrataError(.incompatibleSchema, $0.description, fileURL: url) })
        }
        return .store(identifier: identifier, format: format)
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

    static func removeFiles(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
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
                    "Cannot open the store at \(url.path) (\(database.message ?? "permission denied"), SQLite error \(database.extendedResultCode.rawValue)). Check that the file and its folder can be read and written.",
                    fileURL: url, underlyingError: database)
            default:
                break
            }
            return StrataError(.storeError, "SQLite failed on \(url.path): \(database.message ?? "\(database.resultCode)").", fileURL: url, underlyingError: database)
        }
        return StrataError(.storeError, "Could not open the store at \(url.path): \(error.localizedDescription)", fileURL: url)
    }
}

// MARK: Checking the structure

extension SQLiteStore {
    /// Checks that every index the schema implies exists with its exact definition (unique or
    /// not, columns, scope), repairing any that is missing or different, and upgrades a format 1
    /// store's index names; all in one transaction, which writes nothing when all is in order.
    ///
    /// - Throws: ``StrataError/Code/constraintConflict`` when the store holds rows that break a
    ///   uniqueness constraint whose index is missing (the store is left as it was).
    static func verifyStructure(of pool: DatabasePool, layout: StoreLayout, format: String, isReadOnly: Bool, url: URL) throws {
        let (existing, tables) = try pool.read { db in
            var existing: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
                let name: String? = row[0]
                let sql: String? = row[1]
                if let name, let sql { existing[name] = sql }
            }
            return (existing, Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")))
        }
        let differing = layout.indexes.filter { existing[$0.name] != $0.sql }
        guard !differing.isEmpty || format != StoreLayout.format else { return }
        // Reading does not depend on indexes, and a read-only store must not be written.
        guard !isReadOnly else { return }
        try pool.write { db in
            var dropped: Set<String> = []
            if format != StoreLayout.format {
                // Links of inherited many-to-many relationships that format 1 kept apart move to
                // the join table of the declaring entity.
                for former in layout.formerJoinTables where tables.contains(former.name) {
                    if !tables.contains(former.table), let table = layout.tables.first(where: { $0.name == former.table }) {
                        try db.execute(sql: table.sql)
                    }
                    try db.execute(
                        sql: "INSERT INTO \(quoted(former.table)) (\(former.columns.map { quoted($0.to) }.joined(separator: ", "))) "
                            + "SELECT \(former.columns.map { quoted($0.from) }.joined(separator: ", ")) FROM \(quoted(former.name))")
                    let itsIndexes = try String.fetchAll(
                        db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", arguments: [former.name])
                    try db.execute(sql: "DROP TABLE \(quoted(former.name))")
                    dropped.formUnion(itsIndexes)  // they went with it
                }
                let current = Set(layout.indexes.map(\.name))
                for index in layout.indexes where existing[index.formerName] != nil && !current.contains(index.formerName) {
                    if dropped.insert(index.formerName).inserted {
                        try db.execute(sql: "DROP INDEX \(quoted(index.formerName))")
                    }
                }
            }
            for index in differing {
                if existing[index.name] != nil, dropped.insert(index.name).inserted {
                    try db.execute(sql: "DROP INDEX \(quoted(index.name))")
                }
                do {
                    try db.execute(sql: index.sql)
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                    throw StrataError(
                        .constraintConflict,
                        "The store at \(url.path) holds rows of table \(index.table) that share values of (\(index.columns)), which must be unique, so the index \(index.name) that enforces it cannot be created. Remove the duplicates and open the store again. It was not modified.",
                        fileURL: url, underlyingError: error)
                }
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(quoted(StoreLayout.metadataTable)) (key, value) VALUES ('format', ?)",
                arguments: [Data(StoreLayout.format.utf8)])
        }
    }

    /// Throws unless the store may be written now: not opened read-only, and not found damaged
    /// since it was opened.
    func checkWritable() throws {
        if isReadOnly {
            throw StrataError(
                .storeNotWritable,
                "The store\(url.map { " at \($0.path)" } ?? "") was opened read-only; nothing was saved. Open it without isReadOnly to save.",
                fileURL: url)
        }
        if corruptionDetected.withLock({ $0 }) {
            throw StrataError(
                .corruptStore,
                "The store\(url.map { " at \($0.path)" } ?? "") was found damaged, so it refuses every write until it is closed and opened again. Nothing was saved.",
                fileURL: url)
        }
    }
}
