import Foundation

extension SQLiteStore {
    /// The schema a store file was written with, read from its metadata without writing to
    /// the file: what tools use to open a store without the app's classes.
    ///
    /// ```swift
    /// let schema = try SQLiteStore.recordedSchema(at: url)
    /// let store = try SQLiteStore(url: url, schema: schema, isReadOnly: true)
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/notAStore`` (not a Strata store),
    ///   ``StrataError/Code/corruptStore`` (damaged file or unreadable schema) or
    ///   ``StrataError/Code/storeNotWritable`` (no file, or it cannot be read).
    public static func recordedSchema(at url: URL) throws -> Schema {
        let rows: [[Data?]] = try inspecting(url) { inspector in
            let tables = try inspector.rows("SELECT name FROM sqlite_master WHERE type = 'table'")
            guard tables.contains(where: { $0.first == Data(StoreLayout.metadataTable.utf8) }) else {
                throw StrataError(
                    .notAStore, "\(url.path) is not a Strata store (it has no \(StoreLayout.metadataTable) table).",
                    fileURL: url)
            }
            return try inspector.rows("SELECT value FROM \(quoted(StoreLayout.metadataTable)) WHERE key = 'schema'")
        }
        guard let data = rows.first?.first ?? nil else {
            throw StrataError(.corruptStore, "The store at \(url.path) records no schema.", fileURL: url)
        }
        do {
            return try Schema(serializedRepresentation: data)
        } catch {
            throw StrataError(
                .corruptStore, "The schema recorded in the store at \(url.path) cannot be read.", fileURL: url,
                underlyingError: error)
        }
    }
}

extension SQLiteStore {
    /// The names of the tables in an SQLite file, read without writing to it: how tools tell a
    /// Strata store from a Core Data store or another program's database.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/notAStore`` (not an SQLite file),
    ///   ``StrataError/Code/corruptStore`` or ``StrataError/Code/storeNotWritable`` (no file).
    package static func tableNames(at url: URL) throws -> [String] {
        try inspecting(url) { inspector in
            try inspector.strings("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
    }

    /// Runs `body` on a read-only connection to the file at `url`, after checking that it is an
    /// SQLite file, without writing to it (a shared-memory file SQLite makes is removed after).
    private static func inspecting<T>(_ url: URL, _ body: (SQLiteFileInspector) throws -> T) throws -> T {
        guard try fileState(at: url) == .existing else {
            throw StrataError(.storeNotWritable, "There is no store at \(url.path).", fileURL: url)
        }
        try checkHeader(of: url)
        let hasWALContent = (fileSize(atPath: url.path + "-wal") ?? 0) > 0
        let sharedMemory = url.path + "-shm"
        let hadSharedMemory = fileSize(atPath: sharedMemory) != nil
        defer { if !hadSharedMemory { try? FileManager.default.removeItem(atPath: sharedMemory) } }
        do {
            return try body(try SQLiteFileInspector(url: url, mode: hasWALContent ? .readOnly : .immutable))
        } catch {
            throw openingError(error, url: url)
        }
    }
}
