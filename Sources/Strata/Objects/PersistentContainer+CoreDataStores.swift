import Foundation

/// SQLite files that Core Data wrote: imported into new Strata stores, opened read-only as
/// in-memory copies, or converted in place when a container opens one for writing.
extension PersistentContainer {
    /// Imports the Core Data store `source` opens, written with `schema`, into a new Strata store
    /// at `destination`, in one go: the new store appears complete, or not at all (see
    /// ``CoreDataImport/importStore(at:schema:to:progress:)``).
    ///
    /// - Returns: The number of objects imported.
    @discardableResult
    static func importCoreDataStore(
        _ source: any CoreDataStoreProvider, schema: Schema, to destination: URL, progress: ((StoreImportProgress) -> Void)?
    ) throws -> Int {
        try source.importCoreDataStore(writtenWith: schema, to: destination) { snapshot, building in
            let container = try PersistentContainer(name: "Import", schema: schema, storeDescriptions: [building])
            do {
                var importer = StoreSnapshotImporter(
                    schema: schema, source: source.url, context: container.newBackgroundContext(), progress: progress)
                let count = try importer.run(snapshot)
                try container.close()
                return count
            } catch {
                try? container.close()
                throw error
            }
        }
    }

    /// Opens the Core Data store `description` names for a container holding `schema`: a
    /// read-only description gets an in-memory copy (the file is only read); any other
    /// converts the file in place, then opens it.
    static func openCoreDataStore(_ description: StoreDescription, schema: Schema) throws -> any PersistentStore {
        guard let source = description.coreDataProvider else { return try description.makeStore(schema: schema) }
        if description.isReadOnly {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "strata-coredata-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let copy = folder.appendingPathComponent(source.url?.lastPathComponent ?? "Store.sqlite")
            try importCoreDataStore(source, schema: schema, to: copy, progress: nil)
            var inMemory = description
            inMemory.provider = StoreDescription.inMemory(copyOf: copy).provider
            return try inMemory.makeStore(schema: schema)
        }
        try convertCoreDataStore(description, writtenWith: schema)
        return try description.makeStore(schema: schema)
    }

    /// Converts the Core Data store `description` names, written with `schema`, into a Strata
    /// store in place, in one atomic step: the objects are imported into a new file beside it,
    /// `migrate` runs on that file (a staged migration to the app's version), and the file
    /// then takes the Core Data store's place in one rename. A process killed at any moment
    /// leaves either the untouched Core Data store or the complete converted one; the Core Data
    /// file is removed afterwards unless ``StoreDescription/keepsConvertedCoreDataStore``.
    ///
    /// - Parameters:
    ///   - description: The Core Data store (an SQLite file).
    ///   - schema: The schema of the model version that wrote it.
    ///   - progress: Called as the import goes.
    ///   - migrate: Work on the converted file before it takes the store's place.
    /// - Throws: ``StrataError``: the import's errors (``StrataError/Code/incompatibleSchema``
    ///   when `schema` did not write the store), `migrate`'s, or
    ///   ``StrataError/Code/storeInUse`` while another container or program has the store open.
    ///   The Core Data store is then as it was.
    package static func convertCoreDataStore(
        _ description: StoreDescription, writtenWith schema: Schema,
        progress: ((StoreImportProgress) -> Void)? = nil, migrate: ((StoreDescription) throws -> Void)? = nil
    ) throws {
        try description.provider.withExclusiveAccess {
            try convertCoreDataStoreExclusively(description, writtenWith: schema, progress: progress, migrate: migrate)
        }
    }

    /// ``convertCoreDataStore(_:writtenWith:progress:migrate:)`` for a caller that holds the
    /// store to itself already (a migration).
    package static func convertCoreDataStoreExclusively(
        _ description: StoreDescription, writtenWith schema: Schema,
        progress: ((StoreImportProgress) -> Void)? = nil, migrate: ((StoreDescription) throws -> Void)? = nil
    ) throws {
        // Another process may have converted it while this one waited.
        guard let source = description.coreDataProvider, source.isCoreDataStore,
            let converted = source.makeConversionTarget(), let convertedURL = converted.url
        else { return }
        defer { source.removeConversionTarget(converted) }
        try importCoreDataStore(source, schema: schema, to: convertedURL, progress: progress)
        try migrate?(description.scratch(converted))
        try source.replaceCoreDataStore(withConverted: converted, keepingOriginal: description.keepsConvertedCoreDataStore)
    }
}
