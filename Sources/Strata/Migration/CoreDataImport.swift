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

    /// How far an import has come.
    public struct Progress: Sendable, Hashable {
        /// What the import does now.
        public enum Phase: String, Sendable, Hashable {
            /// Writing objects and their attribute values.
            case objects
            /// Connecting objects: to-one and one-to-many relationships.
            case relationships
            /// Connecting objects: many-to-many, ordered and inverse-less to-many relationships.
            case links
        }

        /// What the import does now.
        public var phase: Phase
        /// Units done: objects written, then objects connected, then links made.
        public var completedUnitCount: Int
        /// Units in all: twice the number of objects, plus the number of links; counted before
        /// the import starts, so ``fractionCompleted`` only grows.
        public var totalUnitCount: Int

        /// The fraction done, from 0 to 1.
        public var fractionCompleted: Double {
            totalUnitCount == 0 ? 1 : Double(completedUnitCount) / Double(totalUnitCount)
        }
    }

    /// How many objects an import holds in memory at once: it saves and starts afresh after
    /// each batch.
    static let batchSize = 2_000

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
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StrataError(
                .storeNotWritable, "\(destination.path) exists; import into a new file.", fileURL: destination)
        }
        let folder = destination.deletingLastPathComponent()
        let building = folder.appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString).strata-importing")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: building.path + suffix) }
        }
        // The source's layout is checked before anything is written.
        let count = try StoreDescription.readCoreDataStore(at: source, schema: schema) { snapshot in
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let container = try PersistentContainer(name: "Import", schema: schema, storeDescriptions: [.sqlite(building)])
            do {
                var importer = Importer(schema: schema, source: source, context: container.newBackgroundContext(), progress: progress)
                let count = try importer.run(snapshot)
                try container.close()
                return count
            } catch {
                try? container.close()
                throw error
            }
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

    /// Opens the Core Data store at `source`, written with `schema`, read-only: a container
    /// whose in-memory store holds the store's objects, and refuses saves.
    ///
    /// The Core Data file is only read. The container holds the whole store in memory; import
    /// large stores with ``importStore(at:schema:to:progress:)`` instead.
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

    /// One import: objects in batches, then their relationships, then the links of to-many
    /// relationships, each batch saved and forgotten.
    private struct Importer {
        let schema: Schema
        let source: URL
        let context: ObjectContext
        let progress: ((Progress) -> Void)?
        /// Each imported object's entity (its index in the schema) and Strata key, by root
        /// entity and Core Data key.
        var keys: [String: [Int64: (entity: Int32, key: Int64)]] = [:]
        var storeIdentifier = ""
        var done = 0
        var total = 0
        var phase = Progress.Phase.objects

        init(schema: Schema, source: URL, context: ObjectContext, progress: ((Progress) -> Void)?) {
            self.schema = schema
            self.source = source
            self.context = context
            self.progress = progress
            context.name = "coreDataImport"
            // Objects are saved before their required relationships are set (those come in a
            // later batch); Core Data validated them when it saved them.
            context.validatesObjectsOnSave = false
        }

        mutating func run(_ snapshot: any ImportedStoreSnapshot) throws -> Int {
            let objectCount = try snapshot.objectCount()
            // Counted up front, so that the fraction done only grows.
            total = 2 * objectCount + (try snapshot.linkCount())
            report()
            try insertObjects(snapshot)
            phase = .relationships
            try connectToOneRelationships(snapshot)
            phase = .links
            try linkToManyRelationships(snapshot)
            try context.save()
            done = total
            report()
            return objectCount
        }

        /// Inserts every object with its attribute values, a batch at a time, and records the
        /// key each one gets.
        private mutating func insertObjects(_ snapshot: any ImportedStoreSnapshot) throws {
            let entityIndex = Dictionary(
                schema.entities.enumerated().map { ($0.element.name, Int32($0.offset)) }, uniquingKeysWith: { first, _ in first })
            var pending: [(root: String, key: Int64, entity: Int32, object: ManagedObject)] = []
            func flush(_ importer: inout Importer) throws {
                try importer.context.save()
                for item in pending {
                    guard let key = item.object.objectID.primaryKey else { continue }
                    if importer.storeIdentifier.isEmpty { importer.storeIdentifier = item.object.objectID.storeIdentifier ?? "" }
                    importer.keys[item.root, default: [:]][item.key] = (item.entity, key)
                }
                importer.context.reset()
                importer.advance(by: pending.count)
                pending.removeAll(keepingCapacity: true)
            }
            try snapshot.forEachObject(includingAttributes: true) { row in
                guard let entity = schema.entity(named: row.entityName), let index = entityIndex[entity.name] else { return }
                let object = ManagedObject(entity: entity)
                context.insert(object)
                for (name, value) in row.values {
                    guard let attribute = entity.attributeNumber(named: name) else { continue }
                    object._setStoredValue(value, at: attribute)
                }
                pending.append((entity.rootEntity.name, row.primaryKey, index, object))
                if pending.count == CoreDataImport.batchSize { try flush(&self) }
            }
            try flush(&self)
        }

        /// Sets the to-one relationships (and so their one-to-many inverses), except those whose
        /// inverse is ordered: the links give those with their order.
        private mutating func connectToOneRelationships(_ snapshot: any ImportedStoreSnapshot) throws {
            var connected = 0
            try snapshot.forEachObject(includingAttributes: false) { row in
                connected += 1
                guard let entity = schema.entity(named: row.entityName) else { return }
                for (name, target) in row.toOne.sorted(by: { $0.key < $1.key }) {
                    guard let relationship = entity.relationship(named: name) else { continue }
                    let inverse = relationship.inverseName.flatMap { schema.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }
                    if inverse?.isOrdered == true { continue }
                    let object = try self.object(entity.rootEntity.name, row.primaryKey, for: row.entityName, name)
                    try object.setValue(try self.object(target.rootEntity, target.primaryKey, for: row.entityName, name), forKey: name)
                }
                if connected % CoreDataImport.batchSize == 0 { try saveBatch(connected: CoreDataImport.batchSize) }
            }
            try saveBatch(connected: connected % CoreDataImport.batchSize)
        }

        /// Sets each source's members of the to-many relationships the links give, in their
        /// order for ordered ones.
        private mutating func linkToManyRelationships(_ snapshot: any ImportedStoreSnapshot) throws {
            try snapshot.forEachLinks { links in
                guard let entity = schema.entity(named: links.entityName),
                    let relationship = entity.relationship(named: links.relationship),
                    let destination = schema.entity(named: relationship.destinationEntityName)
                else { return }
                var linked = 0
                // Pairs come sorted by source: one run per source.
                var start = links.pairs.startIndex
                while start < links.pairs.endIndex {
                    let sourceKey = links.pairs[start].source
                    let end = links.pairs[start...].firstIndex { $0.source != sourceKey } ?? links.pairs.endIndex
                    let object = try self.object(entity.rootEntity.name, sourceKey, for: links.entityName, links.relationship)
                    var members: [ManagedObject] = []
                    var seen: Set<Int64> = []
                    for pair in links.pairs[start..<end] where seen.insert(pair.destination).inserted {
                        members.append(try self.object(destination.rootEntity.name, pair.destination, for: links.entityName, links.relationship))
                    }
                    try object.setValue(relationship.isOrdered ? members as Any : Set(members) as Any, forKey: links.relationship)
                    linked += end - start
                    if linked >= CoreDataImport.batchSize {
                        try saveBatch(connected: linked)
                        linked = 0
                    }
                    start = end
                }
                try saveBatch(connected: linked)
            }
        }

        /// The imported object with Core Data key `key` in the table of `root`, as a fault.
        private func object(_ root: String, _ key: Int64, for entityName: String, _ relationship: String) throws -> ManagedObject {
            guard let stored = keys[root]?[key], schema.entities.indices.contains(Int(stored.entity)) else {
                throw StrataError(
                    .corruptStore,
                    "\(entityName).\(relationship) links Z_PK \(key) of \(root), which does not exist.",
                    entityName: entityName, propertyName: relationship, fileURL: source)
            }
            let entity = schema.entities[Int(stored.entity)]
            return try context.object(
                with: ObjectID(entityName: entity.name, entityNameHash: entity.nameHash, storeIdentifier: storeIdentifier, primaryKey: stored.key))
        }

        private mutating func saveBatch(connected: Int) throws {
            try context.save()
            context.reset()
            advance(by: connected)
        }

        private mutating func advance(by units: Int) {
            done += units
            report()
        }

        private func report() {
            progress?(Progress(phase: phase, completedUnitCount: min(done, total), totalUnitCount: total))
        }
    }
}
