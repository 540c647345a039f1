import Foundation

/// Imports SQLite stores that Core Data wrote on iOS or macOS into new Strata stores, given the
/// model version that wrote them. The Core Data file is only read, never modified.
///
/// ```swift
/// let bundle = try XcodeModelBundle.load(contentsOf: modelURL)          // Model.xcdatamodeld
/// let version = try CoreDataImport.versions(of: bundle, forStoreAt: coreDataURL).first!
/// try CoreDataImport.importStore(at: coreDataURL, schema: version.schema, to: strataURL)
/// let container = try PersistentContainer(name: "App", schema: version.schema, storeDescriptions: [.sqlite(strataURL)])
/// ```
///
/// Objects keep their attribute values (Core Data's encodings: dates in seconds since 2001,
/// UUIDs as 16 bytes, Booleans as integers, binary data stored inline or externally,
/// transformable values archived by `NSSecureUnarchiveFromData` as JSON for `Codable`), and
/// their relationships of every kind: to-one, one-to-many, many-to-many, ordered (with their
/// order) and to-many without inverse. Then migrate the new store with a
/// ``StagedMigrationManager`` like any other, or look into the Core Data store without
/// writing anything with ``openReadOnly(at:schema:name:)``.
public enum CoreDataImport {
    /// The versions of `bundle` whose table layout fits the Core Data store at `url` (0 or 1
    /// expected; versions that differ only in what the layout does not show — optionality,
    /// defaults, validation — all fit).
    ///
    /// For example:
    ///
    /// ```swift
    /// let bundle = try XcodeModelBundle.load(contentsOf: modelURL)   // Movies.xcdatamodeld
    /// let fitting = try CoreDataImport.versions(of: bundle, forStoreAt: coreDataURL)
    /// print(fitting.map(\.name))   // ["Movies 2"]
    /// ```
    public static func versions(of bundle: XcodeModelBundle, forStoreAt url: URL) throws -> [XcodeModel] {
        var fitting: [XcodeModel] = []
        let source = StoreDescription.sqlite(url).coreDataProvider
        for version in bundle.versions {
            do {
                try source?.checkCoreDataStore(writtenWith: version.schema)
                fitting.append(version)
            } catch let error as StrataError where error.code == .incompatibleSchema {
                continue
            }
        }
        return fitting
    }

    /// How far an import has come (see ``StoreImportProgress``).
    public typealias Progress = StoreImportProgress

    /// Imports the Core Data store at `source`, written with `schema`, into a new Strata store
    /// at `destination`, in one go: the new store appears complete, or not at all.
    ///
    /// The import reads one consistent state of the source's tables and holds a batch of
    /// objects in memory at a time; beyond the batch it keeps a few dozen bytes per object (the
    /// map from Core Data's keys to Strata's) and the links of one relationship at a time, so a
    /// store of millions of objects imports in modest memory. Relationships, the orders of
    /// ordered relationships and attribute values come over as they were.
    ///
    /// The read is one SQLite read transaction: a store in WAL mode (Core Data's default) can
    /// go on being written meanwhile, while one in rollback-journal mode waits for the import.
    /// Binary data stored in external files is read as the import reaches it, outside that
    /// snapshot.
    ///
    /// For example:
    ///
    /// ```swift
    /// let count = try CoreDataImport.importStore(at: coreDataURL, schema: version.schema, to: strataURL) { progress in
    ///     print(progress.phase, progress.completedUnitCount, "of", progress.totalUnitCount)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - source: The Core Data store (read only).
    ///   - schema: The schema of the model version that wrote it.
    ///   - destination: Where the new Strata store goes; there must be no file there.
    ///   - progress: Called as the import goes, from the calling thread.
    /// - Returns: The number of objects imported.
    /// - Throws: ``StrataError``: ``StrataError/Code/notAStore`` or
    ///   ``StrataError/Code/incompatibleSchema`` when the source is not a Core Data store of
    ///   `schema`; ``StrataError/Code/storeNotWritable`` when `destination` exists;
    ///   ``StrataError/Code/typeMismatch`` or ``StrataError/Code/corruptStore`` for a value Core
    ///   Data would not have written; ``StrataError/Code/unrepresentableValue`` for a
    ///   transformable value with no JSON form.
    @discardableResult
    public static func importStore(
        at source: URL, schema: Schema, to destination: URL, progress: ((Progress) -> Void)? = nil
    ) throws -> Int {
        guard let provider = StoreDescription.sqlite(source).coreDataProvider else {
            throw StrataError(.notAStore, "\(source.path) cannot hold a Core Data store.", fileURL: source)
        }
        return try PersistentContainer.importCoreDataStore(provider, schema: schema, to: destination, progress: progress)
    }

    /// Opens the Core Data store at `source`, written with `schema`, read-only: a container
    /// whose in-memory store holds the store's objects, and refuses saves.
    ///
    /// The Core Data file is only read. The container holds the whole store in memory; import
    /// large stores with ``importStore(at:schema:to:progress:)`` instead.
    ///
    /// For example:
    ///
    /// ```swift
    /// let container = try CoreDataImport.openReadOnly(at: coreDataURL, schema: version.schema)
    /// let books = try container.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
    /// ```
    ///
    /// - Parameters:
    ///   - source: The Core Data store.
    ///   - schema: The schema of the model version that wrote it.
    ///   - name: The container's name.
    /// - Returns: A container whose saves fail with ``StrataError/Code/storeNotWritable``.
    /// - Throws: What ``importStore(at:schema:to:progress:)`` throws.
    public static func openReadOnly(at source: URL, schema: Schema, name: String = "CoreDataStore") throws -> PersistentContainer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-coredata-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Store.sqlite")
        try importStore(at: source, schema: schema, to: copy)
        return try PersistentContainer(name: name, schema: schema, storeDescriptions: [.inMemory(copyOf: copy, isReadOnly: true)])
    }
}
