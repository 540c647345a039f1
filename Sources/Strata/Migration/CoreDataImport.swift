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
/// UUIDs as 16 bytes, Booleans as integers, binary data stored inline or externally), to-one
/// and many-to-many relationships. Ordered relationships, to-many relationships without
/// inverse and transformable values that are not JSON are refused with a typed error (not yet
/// supported). Then migrate the new store with a ``StagedMigrationManager`` like any other.
public enum CoreDataImport {
    /// The versions of `bundle` whose table layout fits the Core Data store at `url` (0 or 1
    /// expected; versions that differ only in what the layout does not show — optionality,
    /// defaults, validation — all fit).
    public static func versions(of bundle: XcodeModelBundle, forStoreAt url: URL) throws -> [XcodeModel] {
        var fitting: [XcodeModel] = []
        for version in bundle.versions {
            do {
                try StoreDescription.checkCoreDataStore(at: url, schema: version.schema)
                fitting.append(version)
            } catch let error as StrataError where error.code == .incompatibleSchema {
                continue
            }
        }
        return fitting
    }

    /// Imports the Core Data store at `source`, written with `schema`, into a new Strata store
    /// at `destination`, in one go: the new store appears complete, or not at all.
    ///
    /// - Parameters:
    ///   - source: The Core Data store (read only).
    ///   - schema: The schema of the model version that wrote it.
    ///   - destination: Where the new Strata store goes; there must be no file there.
    ///   - progress: Called with (objects imported, objects in all) as the import goes.
    /// - Returns: The number of objects imported.
    /// - Throws: ``StrataError``: ``StrataError/Code/notAStore`` or
    ///   ``StrataError/Code/incompatibleSchema`` when the source is not a Core Data store of
    ///   `schema`; ``StrataError/Code/storeNotWritable`` when `destination` exists;
    ///   ``StrataError/Code/typeMismatch`` for a value Core Data would not have written.
    @discardableResult
    public static func importStore(
        at source: URL, schema: Schema, to destination: URL, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws -> Int {
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StrataError(
                .storeNotWritable, "\(destination.path) exists; import into a new file.", fileURL: destination)
        }
        let (rows, links) = try StoreDescription.readCoreDataStore(at: source, schema: schema)
        let folder = destination.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let building = folder.appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString).strata-importing")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: building.path + suffix) }
        }
        let container = try PersistentContainer(name: "Import", schema: schema, storeDescriptions: [.sqlite(building)])
        do {
            let context = container.newBackgroundContext()
            context.name = "coreDataImport"
            var objects: [String: [Int64: ManagedObject]] = [:]  // root entity → Z_PK → object
            for (number, row) in rows.enumerated() {
                guard let entity = schema.entity(named: row.entityName) else { continue }
                let object = ManagedObject(entity: entity)
                context.insert(object)
                for (name, value) in row.values {
                    guard let index = entity.attributeNumber(named: name) else { continue }
                    object._setStoredValue(value, at: index)
                }
                objects[entity.rootEntity.name, default: [:]][row.primaryKey] = object
                if number % 1000 == 999 { progress?(number + 1, rows.count) }
            }
            for row in rows {
                guard let entity = schema.entity(named: row.entityName),
                    let object = objects[entity.rootEntity.name]?[row.primaryKey]
                else { continue }
                for (relationship, target) in row.toOne {
                    guard let destinationObject = objects[target.rootEntity]?[target.primaryKey] else {
                        throw StrataError(
                            .corruptStore,
                            "\(row.entityName).\(relationship) of the object with Z_PK \(row.primaryKey) points at Z_PK \(target.primaryKey) of \(target.rootEntity), which does not exist.",
                            entityName: row.entityName, propertyName: relationship, fileURL: source)
                    }
                    try object.setValue(destinationObject, forKey: relationship)
                }
            }
            for link in links {
                guard let entity = schema.entity(named: link.entityName),
                    let relationship = entity.relationship(named: link.relationship),
                    let destinationEntity = schema.entity(named: relationship.destinationEntityName)
                else { continue }
                var targets: [ObjectIdentifier: (object: ManagedObject, targets: Set<ManagedObject>)] = [:]  // per source
                for pair in link.pairs {
                    guard let from = objects[entity.rootEntity.name]?[pair.source],
                        let to = objects[destinationEntity.rootEntity.name]?[pair.destination]
                    else { continue }
                    targets[ObjectIdentifier(from), default: (from, [])].targets.insert(to)
                }
                for (object, related) in targets.values {
                    try object.setValue(related, forKey: link.relationship)
                }
            }
            try context.save()
            progress?(rows.count, rows.count)
            try container.close()
        } catch {
            try? container.close()
            throw error
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
        return rows.count
    }
}
