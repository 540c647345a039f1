import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file work of Core Data stores: telling a Core Data file, reading it, importing it into a
/// new file that appears in one step, giving a conversion a place beside it, and putting the
/// converted store in the Core Data file's place in one rename (the objects themselves are
/// copied by the object layer's importer).
extension SQLiteStoreProvider: CoreDataStoreProvider {
    /// The suffix of the files conversions build the new store in.
    static let convertingSuffix = ".strata-converting"
    /// What a Core Data file kept after its conversion is called: `<file>.coredata`.
    static let keptCoreDataSuffix = ".coredata"

    /// Whether the file is one Core Data wrote (one with Core Data's `Z_PRIMARYKEY` and
    /// `Z_METADATA` tables). Reads the file without writing to it; `false` for anything else, a
    /// missing file among them.
    package var isCoreDataStore: Bool {
        guard let url, SQLiteStore.fileState(orMissing: url) == .existing else { return false }
        return (try? CoreDataStoreReader.read(url) { db in
            try db.tableExists("Z_PRIMARYKEY") && db.tableExists("Z_METADATA")
        }) ?? false
    }

    /// The Core Data store's UUID (`Z_METADATA.Z_UUID`), `nil` when the description names no
    /// Core Data store or the metadata holds none.
    package var coreDataStoreUUID: String? {
        guard let url, isCoreDataStore else { return nil }
        return try? CoreDataStoreReader.read(url) { db in
            try String.fetchOne(db, sql: "SELECT Z_UUID FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        }
    }

    package func checkCoreDataStore(writtenWith schema: Schema) throws {
        guard let url else {
            throw StrataError(.notAStore, "An in-memory store is not a Core Data store.")
        }
        _ = try CoreDataStoreReader(url: url, schema: schema)
    }

    package func importCoreDataStore(
        writtenWith schema: Schema, to destination: URL,
        filling fill: (any ImportedStoreSnapshot, StoreDescription) throws -> Int
    ) throws -> Int {
        guard let source = url else {
            throw StrataError(.notAStore, "An in-memory store is not a Core Data store.")
        }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StrataError(
                .storeNotWritable, "\(destination.path) exists; import into a new file.", fileURL: destination)
        }
        let folder = destination.deletingLastPathComponent()
        let building = folder.appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString).strata-importing")
        defer { SQLiteStore.removeFiles(at: building) }
        // The source's layout is checked before anything is written.
        let count = try CoreDataStoreReader(url: source, schema: schema).read { snapshot in
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return try fill(snapshot, .sqlite(building))
        }
        // A journal or WAL left by a deleted store of that name would be replayed into the new one.
        for suffix in ["-journal", "-wal", "-shm"] where !FileManager.default.fileExists(atPath: destination.path) {
            try? FileManager.default.removeItem(atPath: destination.path + suffix)
        }
        guard link(building.path, destination.path) == 0 else {
            throw StrataError(
                .storeNotWritable, "Cannot put the imported store at \(destination.path); it may exist now.",
                fileURL: destination)
        }
        return count
    }

    /// A new file beside the store for its conversion to build the Strata store in, after
    /// removing what conversions killed half-way left (no conversion of this store runs now:
    /// the caller holds the store to itself).
    package func makeConversionTarget() -> (any PersistentStoreProvider)? {
        guard let url else { return nil }
        return SQLiteStoreProvider(url: SQLiteStore.scratchFile(beside: url, suffix: Self.convertingSuffix))
    }

    package func removeConversionTarget(_ target: any PersistentStoreProvider) {
        guard let url = target.url, url.lastPathComponent.hasSuffix(Self.convertingSuffix) else { return }
        SQLiteStore.removeFiles(at: url)
    }

    /// Puts the converted store at `converted` in the place of the Core Data store the
    /// description names, in one rename: a process killed before it finds the Core Data store
    /// as it was, one killed after it the complete converted store.
    ///
    /// The Core Data file is kept beside the store (`<file>.coredata`) until the rename is
    /// done; then it is removed, with its external-data folder, unless `keepingOriginal`.
    ///
    /// - Throws: ``StrataError/Code/storeNotWritable`` when the files cannot be moved (the
    ///   Core Data store is then as it was); ``StrataError/Code/storeInUse`` when another
    ///   connection has the Core Data store open.
    package func replaceCoreDataStore(withConverted target: any PersistentStoreProvider, keepingOriginal: Bool) throws {
        guard let url, let converted = target.url else { return }
        // The converted store must hold everything in its main file: its WAL stays behind.
        try Self.checkpointCompletely(converted)
        // Core Data's own WAL must be in its main file too, and gone: a WAL left next to the
        // new store would be replayed into it.
        SQLiteStore.removeSideFilesIfUnused(of: url)
        if (SQLiteStore.fileSize(atPath: url.path + "-wal") ?? 0) > 0 {
            throw StrataError(
                .storeInUse,
                "The Core Data store at \(url.path) is open in another program (its WAL could not be checkpointed); close it, then open the store again. It was not modified.",
                fileURL: url)
        }
        // A second name for the Core Data file while the store changes hands; a process
        // killed after the rename leaves it, and the next open finishes the job.
        let copy = Self.convertingCopyURL(for: url)
        try? FileManager.default.removeItem(at: copy)
        guard link(url.path, copy.path) == 0 || (try? FileManager.default.copyItem(at: url, to: copy)) != nil else {
            throw StrataError(
                .storeNotWritable,
                "Cannot keep a copy of the Core Data store at \(copy.path) while it is converted: \(String(cString: strerror(errno))). It was not modified.",
                fileURL: url)
        }
        for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        guard rename(converted.path, url.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: copy)
            throw StrataError(
                .storeNotWritable,
                "Cannot put the converted store in place at \(url.path): \(String(cString: strerror(code))). The Core Data store was not modified.",
                fileURL: url)
        }
        SQLiteStore.synchronizeFolder(url.deletingLastPathComponent())
        finishConversion(of: url, keepingOriginal: keepingOriginal)
    }

    /// Finishes a conversion whose process was killed after the converted store took the Core
    /// Data store's place: keeps the Core Data file or removes it, as the description says.
    package func finishInterruptedCoreDataConversion(keepingOriginal: Bool) {
        guard let url, FileManager.default.fileExists(atPath: Self.convertingCopyURL(for: url).path) else { return }
        finishConversion(of: url, keepingOriginal: keepingOriginal)
    }

    /// Keeps the Core Data file of the converted store at `url` as `<file>.coredata`, or
    /// removes it with its external-data folder (`.<name>_SUPPORT`, whose data the converted
    /// store holds).
    private func finishConversion(of url: URL, keepingOriginal: Bool) {
        let copy = Self.convertingCopyURL(for: url)
        if keepingOriginal {
            _ = rename(copy.path, Self.keptCoreDataURL(for: url).path)
        } else {
            try? FileManager.default.removeItem(at: copy)
            let support = url.deletingLastPathComponent()
                .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT")
            try? FileManager.default.removeItem(at: support)
        }
        SQLiteStore.synchronizeFolder(url.deletingLastPathComponent())
    }

    /// The Core Data file's second name while its store changes hands.
    private static func convertingCopyURL(for url: URL) -> URL {
        URL(fileURLWithPath: url.path + keptCoreDataSuffix + convertingSuffix)
    }

    /// Where the Core Data file of `url` is kept: `<file>.coredata`, or with a number when a
    /// kept one from an earlier conversion is there.
    private static func keptCoreDataURL(for url: URL) -> URL {
        var candidate = URL(fileURLWithPath: url.path + keptCoreDataSuffix)
        var number = 2
        while FileManager.default.fileExists(atPath: candidate.path) {
            candidate = URL(fileURLWithPath: url.path + keptCoreDataSuffix + "-\(number)")
            number += 1
        }
        return candidate
    }
}
