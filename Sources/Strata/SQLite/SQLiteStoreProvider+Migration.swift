import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Migrations of SQLite files: the store to itself under its file lock, lightweight steps in one
/// SQLite transaction, and a copy for stages that run code that takes the store's place in one
/// rename. A store in memory has nothing to migrate: the steps write nothing.
extension SQLiteStoreProvider {
    /// Runs `body` with the store to itself: holding its file's lock exclusively (see
    /// ``StoreFileLock``), so that no container has it open with another schema meanwhile.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/storeInUse`` when a container (of this
    ///   process or another) has the store open; what `body` throws.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        guard let url else { return try body() }
        let lock = try StoreFileLock(url: url, exclusive: true)
        defer { lock.release() }
        // Reading the store in WAL mode makes its `-wal` and `-shm` files; a failed migration
        // leaves the folder as it found it.
        let absentBefore = ["-wal", "-shm"].filter { !FileManager.default.fileExists(atPath: url.path + $0) }
        do {
            return try body()
        } catch {
            Self.removeEmptySidecars(of: url, absentBefore: absentBefore)
            throw error
        }
    }

    /// Removes the `-wal` and `-shm` files of the store at `url` that did not exist before,
    /// when the WAL holds nothing (so no transaction can be lost).
    private static func removeEmptySidecars(of url: URL, absentBefore: [String]) {
        let wal = url.path + "-wal"
        if absentBefore.contains("-wal"),
            let size = (try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? NSNumber, size.intValue == 0
        {
            try? FileManager.default.removeItem(atPath: wal)
        }
        if absentBefore.contains("-shm"), !FileManager.default.fileExists(atPath: wal) {
            try? FileManager.default.removeItem(atPath: url.path + "-shm")
        }
    }

    /// Applies `steps` to the store in one SQLite transaction: all of them, or — when any
    /// fails or the process dies — none.
    ///
    /// - Returns: The rows the steps wrote.
    public func migrateStoreSchema(_ steps: [StoreMigrationStep], progress: (Int, Int) -> Void) throws -> Int {
        guard let url, let first = steps.first else { return 0 }
        let migrations = try steps.map { try SchemaMigration(from: $0.source, to: $0.destination) }
        // Opened without the upgrades and repairs a normal open may write, so that a migration
        // that fails leaves the file exactly as it was.
        guard try SQLiteStore.fileState(at: url) == .existing else {
            throw StrataError(.storeNotWritable, "There is no store at \(url.path) to migrate.", fileURL: url)
        }
        try SQLiteStore.checkHeader(of: url)
        guard case .store(_, let format) = try SQLiteStore.inspectExisting(url: url, schema: first.source) else {
            throw StrataError(.notAStore, "\(url.path) is an empty database, not a store to migrate.", fileURL: url)
        }
        guard format == StoreLayout.format else {
            throw StrataError(
                .migrationFailed,
                "The store at \(url.path) has storage format \(format); open it once with the schema it was written with (which upgrades it), then migrate. It was not modified.",
                fileURL: url)
        }
        let pool: DatabasePool
        do {
            pool = try SQLiteStore.openPool(at: url, isReadOnly: false)
        } catch {
            throw SQLiteStore.openingError(error, url: url)
        }
        defer { try? pool.close() }
        do {
            return try pool.write { db in
                var rows = 0
                var labels = try SQLiteStore.readMetadata(db)["migrationStages"].flatMap {
                    try? JSONDecoder().decode([String].self, from: $0)
                } ?? []
                for (number, (step, migration)) in zip(steps, migrations).enumerated() {
                    do {
                        rows += try migration.apply(SQLiteMigrationDatabase(db: db, url: url, newLayout: migration.newLayout))
                    } catch let error as DatabaseError
                        where ![.SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY].contains(error.resultCode)
                    {
                        // The statement (never values: migrations bind none that matter) names
                        // what the store holds that the step did not expect.
                        let busy = error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
                        throw StrataError(
                            busy ? .storeInUse : .migrationFailed,
                            "Stage \"\(step.label)\" failed in SQLite: \(error.message ?? "\(error.resultCode)")\(error.sql.map { " (in: \($0))" } ?? ""). The store at \(url.path) was not modified.",
                            fileURL: url, underlyingError: error)
                    }
                    labels.append(step.label)
                    progress(number, rows)
                }
                let last = steps[steps.count - 1].destination
                let insert = "INSERT OR REPLACE INTO \(quoted(StoreLayout.metadataTable)) (key, value) VALUES (?, ?)"
                try db.execute(sql: insert, arguments: ["schema", last.serializedRepresentation()])
                try db.execute(sql: insert, arguments: ["versionHash", Data(last.versionHash.utf8)])
                try db.execute(sql: insert, arguments: ["migrationStages", try JSONEncoder().encode(labels)])
                return rows
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw SQLiteStore.openingError(error, url: url)
        }
    }

    /// A copy of the store next to it, for migrations whose stages run code: the stages work on
    /// the copy, which replaces the store only when every stage succeeded.
    public func makeMigrationCopy() throws -> any PersistentStoreProvider {
        guard let url else { return self }
        let copy = SQLiteStore.scratchFile(beside: url, suffix: SQLiteStore.migratingSuffix)
        do {
            // VACUUM INTO reads through the WAL and leaves the store untouched.
            let source = try DatabaseQueue(path: url.path, configuration: SQLiteStore.configuration(for: url, isReadOnly: true))
            defer { try? source.close() }
            try source.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy.path]) }
        } catch {
            SQLiteStore.removeFiles(at: copy)
            throw SQLiteStore.openingError(error, url: url)
        }
        return SQLiteStoreProvider(url: copy)
    }

    /// Replaces the store with its migrated copy in one rename: a process killed before finds
    /// the old store, one killed after the new one.
    public func replaceStore(withMigratedCopy copy: any PersistentStoreProvider) throws {
        guard let url else { return }  // in memory: the copy was the store itself
        guard let copyURL = (copy as? SQLiteStoreProvider)?.url else {
            throw StrataError(
                .migrationFailed, "\(copy) is not an SQLite copy of the store at \(url.path); the store was not modified.",
                fileURL: url)
        }
        // The copy must hold everything in its main file (its WAL stays behind in the rename),
        // and transactions still in the old store's WAL must not be replayed into the new file.
        try Self.checkpointCompletely(copyURL)
        try Self.checkpointCompletely(url)
        guard rename(copyURL.path, url.path) == 0 else {
            let code = errno
            throw StrataError(
                .storeNotWritable,
                "Cannot put the migrated store in place at \(url.path): \(String(cString: strerror(code))). The store was not modified.",
                fileURL: url)
        }
        SQLiteStore.synchronizeFolder(url.deletingLastPathComponent())
    }

    /// Moves every transaction in the WAL of the store at `url` into its main file.
    static func checkpointCompletely(_ url: URL) throws {
        do {
            let pool = try SQLiteStore.openPool(at: url, isReadOnly: false)
            defer { try? pool.close() }
            let busy = try pool.writeWithoutTransaction { db in
                try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") ?? 0
            }
            guard busy == 0 else {
                throw StrataError(
                    .storeInUse,
                    "The store at \(url.path) is in use by another connection, so a migration cannot finish; close every container that has it open. The store was not modified.",
                    fileURL: url)
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw SQLiteStore.openingError(error, url: url)
        }
    }

    /// Removes a migration copy that is not needed any more.
    public func removeMigrationCopy() {
        guard let url, url.lastPathComponent.hasSuffix(SQLiteStore.migratingSuffix) else { return }
        SQLiteStore.removeFiles(at: url)
    }
}

extension SQLiteStore {
    /// The suffix of the copies migrations with custom stages work on.
    static let migratingSuffix = ".strata-migrating"

    /// A new, unused name beside the store at `url` for a scratch store whose name ends in
    /// `suffix` (`.<file>-<UUID><suffix>`), after removing the scratch stores of that kind that
    /// migrations or conversions killed half-way left. The caller holds the store to itself,
    /// so no other one is in use.
    static func scratchFile(beside url: URL, suffix: String) -> URL {
        let folder = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            removeFiles(at: folder.appendingPathComponent(name))
        }
        return folder.appendingPathComponent(prefix + UUID().uuidString + suffix)
    }
}
