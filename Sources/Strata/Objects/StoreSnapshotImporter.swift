import Foundation

/// One import: objects in batches, then their relationships, then the links of to-many
/// relationships, each batch saved and forgotten.
struct StoreSnapshotImporter {
    let schema: Schema
    /// The store's file, for messages.
    let source: URL?
    let context: ObjectContext
    let progress: ((StoreImportProgress) -> Void)?
    /// Each imported object's entity (its index in the schema) and Strata key, by root
    /// entity and Core Data key.
    var keys: [String: [Int64: (entity: Int32, key: Int64)]] = [:]
    var storeIdentifier = ""
    var done = 0
    var total = 0
    var phase = StoreImportProgress.Phase.objects

    /// How many objects an import holds in memory at once: it saves and starts afresh after
    /// each batch.
    static let batchSize = 2_000

    init(schema: Schema, source: URL?, context: ObjectContext, progress: ((StoreImportProgress) -> Void)?) {
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
        func flush(_ importer: inout StoreSnapshotImporter) throws {
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
            if pending.count == Self.batchSize { try flush(&self) }
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
            if connected % Self.batchSize == 0 { try saveBatch(connected: Self.batchSize) }
        }
        try saveBatch(connected: connected % Self.batchSize)
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
                if linked >= Self.batchSize {
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
        progress?(StoreImportProgress(phase: phase, completedUnitCount: min(done, total), totalUnitCount: total))
    }
}
