import Foundation
import GRDB

/// Reads an SQLite store that Core Data wrote, given the schema of the model version that
/// wrote it, without writing to it: `Z`-prefixed tables (one per root entity) and columns,
/// `Z_PK`/`Z_ENT`, entity numbers from `Z_PRIMARYKEY`, the metadata in `Z_METADATA`, join
/// tables, ordering columns, and Core Data's value encodings.
/// `Tests/StrataTests/Fixtures/CoreData/FORMAT.md` describes the format.
///
/// Objects come out as neutral values — ``ImportedObject``s and ``ImportedLinks`` — for an
/// importer to turn into objects (``CoreDataImport``). Read them inside ``read(_:)``, which
/// sees one consistent state of the store's tables however long it takes (a store in WAL mode,
/// Core Data's default, can be written meanwhile; binary data in external files is read when
/// reached, outside that state):
///
/// ```swift
/// let reader = try CoreDataStoreReader(url: coreDataURL, schema: version.schema)
/// try reader.read { snapshot in
///     try snapshot.forEachObject { object in print(object.entityName, object.primaryKey) }
/// }
/// ```
public struct CoreDataStoreReader: Sendable {
    /// The store file.
    public let url: URL
    /// The schema of the model version that wrote the store.
    public let schema: Schema
    /// Entity numbers (`Z_ENT`) by entity name.
    public let entityNumbers: [String: Int64]
    /// The store's UUID (`Z_METADATA.Z_UUID`), which Core Data's object URIs carry.
    public let storeUUID: String?
    /// The entities that the store's metadata (`NSStoreModelVersionHashes`) names; `nil` when
    /// the metadata cannot be read.
    public let versionHashEntityNames: Set<String>?
    private let columnsByTable: [String: Set<String>]

    /// Opens the store at `url` for reading, checking that its layout fits `schema`.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/notAStore`` for a file that is not a
    ///   Core Data store, ``StrataError/Code/incompatibleSchema`` naming what does not fit.
    public init(url: URL, schema: Schema) throws {
        self.url = url
        self.schema = schema
        let (numbers, columns, uuid, hashNames) = try Self.read(url) { db in
            guard try db.tableExists("Z_PRIMARYKEY"), try db.tableExists("Z_METADATA") else {
                throw StrataError(
                    .notAStore, "\(url.path) is not a store written by Core Data (it has no Z_PRIMARYKEY and Z_METADATA tables).",
                    fileURL: url)
            }
            var numbers: [String: Int64] = [:]
            for row in try GRDB.Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
                if let number: Int64 = row[0], let name: String = row[1] { numbers[name] = number }
            }
            var columns: [String: Set<String>] = [:]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                columns[table] = Set(try db.columns(in: table).map(\.name))
            }
            var uuid: String?
            var hashNames: Set<String>?
            if let row = try GRDB.Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") {
                uuid = row[0]
                if let plist: Data = row[1], case .dictionary(let metadata)? = try? BinaryPropertyList.value(of: plist),
                    case .dictionary(let hashes)? = metadata["NSStoreModelVersionHashes"]
                {
                    hashNames = Set(hashes.keys)
                }
            }
            return (numbers, columns, uuid, hashNames)
        }
        entityNumbers = numbers
        columnsByTable = columns
        storeUUID = uuid
        versionHashEntityNames = hashNames
        let problems = layoutProblems()
        guard problems.isEmpty else {
            throw StrataError(
                .incompatibleSchema,
                "The Core Data store at \(url.path) was not written with this model version: \(problems.joined(separator: "; ")).",
                fileURL: url, details: problems.map { StrataError(.incompatibleSchema, $0, fileURL: url) })
        }
    }

    static func read<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
        // A read-only connection to a store in WAL mode (Core Data's default) makes `-wal` and
        // `-shm` files it cannot remove; remove them after closing when they were not there
        // before and nobody wrote meanwhile (SQLite removes them only if no one else has the
        // store open).
        let hadSideFiles = SQLiteStore.fileSize(atPath: url.path + "-wal") != nil || SQLiteStore.fileSize(atPath: url.path + "-shm") != nil
        defer {
            if !hadSideFiles, (SQLiteStore.fileSize(atPath: url.path + "-wal") ?? 0) == 0 {
                SQLiteStore.removeSideFilesIfUnused(of: url)
            }
        }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read(body)
        } catch let error as StrataError {
            throw error
        } catch {
            throw SQLiteStore.openingError(error, url: url)
        }
    }

    /// Runs `body` with a view of the store as it is now: one read transaction, so every
    /// object and link it reads belongs to the same committed state, whatever Core Data
    /// writes meanwhile.
    ///
    /// - Throws: ``StrataError`` when the store cannot be read, and what `body` throws.
    public func read<T>(_ body: (Snapshot) throws -> T) throws -> T {
        try Self.read(url) { db in try body(Snapshot(reader: self, db: db)) }
    }

    // MARK: Layout

    static func tableName(_ entity: Entity) -> String { "Z" + entity.rootEntity.name.uppercased() }
    static func columnName(_ property: String) -> String { "Z" + property.uppercased() }
    /// The column that orders the members of an ordered relationship: `Z_FOK_` and the name of
    /// the column (without its `Z`, or its `Z_`) that points at them.
    static func orderColumnName(_ column: String) -> String {
        if column == "REFLEXIVE" { return "Z_FOK_REFLEXIVE" }
        return "Z_FOK_" + (column.hasPrefix("Z_") ? column.dropFirst(2) : column.dropFirst())
    }

    /// The join table of a to-many relationship whose inverse is to-many or absent.
    struct JoinTable {
        var name: String
        /// The column of the keys of the relationship's source.
        var source: String
        /// The column of the keys of its destination.
        var destination: String
        /// The columns ordering the destinations per source, and the sources per destination.
        var destinationOrder: String?
        var sourceOrder: String?
    }

    /// The join table of `relationship`, trying the name each side would give it (many-to-many),
    /// or the source's (no inverse).
    func joinTable(of relationship: RelationshipDescription, in entity: Entity) -> JoinTable? {
        guard let destination = schema.entity(named: relationship.destinationEntityName),
            let sourceNumber = entityNumbers[StoreLayout.declaringEntity(ofRelationship: relationship.name, in: entity).name],
            let destinationNumber = entityNumbers[destination.name]
        else { return nil }
        guard let inverseName = relationship.inverseName else {
            // No inverse: Z_<source><NAME> with the destinations in Z_<destination><NAME> (the
            // column naming rule of join tables) and the sources in the one other key column.
            let table = "Z_\(sourceNumber)\(relationship.name.uppercased())"
            let target = "Z_\(destinationNumber)\(relationship.name.uppercased())"
            guard let columns = columnsByTable[table], columns.contains(target) else { return nil }
            let others = columns.subtracting([target]).filter { !$0.hasPrefix("Z_FOK_") }
            guard others.count == 1, let source = others.first, entity.rootEntity.name != destination.rootEntity.name || sourceNumber != destinationNumber
            else { return nil }
            let order = Self.orderColumnName(target)
            return JoinTable(
                name: table, source: source, destination: target,
                destinationOrder: relationship.isOrdered && columns.contains(order) ? order : nil)
        }
        guard let inverse = destination.relationship(named: inverseName),
            let inverseNumber = entityNumbers[StoreLayout.declaringEntity(ofRelationship: inverseName, in: destination).name]
        else { return nil }
        let source = "Z_\(sourceNumber)\(inverseName.uppercased())"
        // A relationship that is its own inverse names its second column REFLEXIVE.
        let isOwnInverse = inverseName == relationship.name && destination.name == entity.name
        let target = isOwnInverse ? "REFLEXIVE" : "Z_\(inverseNumber)\(relationship.name.uppercased())"
        for table in ["Z_\(sourceNumber)\(relationship.name.uppercased())", "Z_\(inverseNumber)\(inverseName.uppercased())"] {
            if let columns = columnsByTable[table], columns.contains(source), columns.contains(target) {
                let destinationOrder = Self.orderColumnName(target)
                let sourceOrder = Self.orderColumnName(source)
                return JoinTable(
                    name: table, source: source, destination: target,
                    destinationOrder: relationship.isOrdered && columns.contains(destinationOrder) ? destinationOrder : nil,
                    sourceOrder: inverse.isOrdered && columns.contains(sourceOrder) ? sourceOrder : nil)
            }
        }
        return nil
    }

    /// What in the store does not fit the schema.
    func layoutProblems() -> [String] {
        var problems: [String] = []
        let names = Set(schema.entities.map(\.name))
        // Core Data's own entities (persistent history, CloudKit mirroring) are numbered from
        // 16000 and are not the model's.
        let stored = Set(entityNumbers.filter { $0.value < 16000 && !$0.key.hasPrefix("NSCK") }.keys)
        if names != stored {
            let missing = names.subtracting(stored).sorted()
            let extra = stored.subtracting(names).sorted()
            if !missing.isEmpty { problems.append("the store has no entity \(missing.joined(separator: ", "))") }
            if !extra.isEmpty { problems.append("the store has entities the model lacks: \(extra.joined(separator: ", "))") }
        }
        if let hashed = versionHashEntityNames, !names.isSubset(of: hashed) {
            problems.append("the store's metadata has no version hash for \(names.subtracting(hashed).sorted().joined(separator: ", "))")
        }
        // Core Data gives sibling subentities' properties of one name numbered columns (ZTITLE,
        // ZTITLE1, …) in an order Strata cannot know yet: refuse rather than read the wrong one.
        for root in schema.entities where root.superentity == nil {
            var declaredBy: [String: [String]] = [:]
            for entity in schema.entities where entity.rootEntity.name == root.name {
                for name in entity.declaration.attributes.map(\.name) + entity.declaration.relationships.map(\.name) {
                    declaredBy[name.uppercased(), default: []].append(entity.name)
                }
            }
            for (name, entities) in declaredBy.sorted(by: { $0.key < $1.key }) where entities.count > 1 {
                problems.append(
                    "\(entities.sorted().joined(separator: " and ")) each declare \(name.lowercased()), which Core Data stores in numbered columns (Z\(name), Z\(name)1, …) that Strata does not import yet")
            }
        }
        // Core Data pairs only the inverses a model names; a schema built in code may have paired
        // two independent relationships, which Core Data stored apart and Strata would merge.
        for entity in schema.entities {
            for declared in entity.declaration.relationships where declared.inverseName == nil {
                guard let inverse = entity.relationship(named: declared.name)?.inverseName,
                    let destination = schema.entity(named: declared.destinationEntityName)
                else { continue }
                // Named from the other side (adopted) is the model's own pairing.
                let otherSide = StoreLayout.declaringEntity(ofRelationship: inverse, in: destination).declaration.relationships
                if otherSide.first(where: { $0.name == inverse })?.inverseName == declared.name { continue }
                problems.append(
                    "the schema pairs \(entity.name).\(declared.name) with \(destination.name).\(inverse) as inverses, which the model does not (Core Data kept them apart); load the model from its Xcode model, or name their inverses")
            }
        }
        for entity in schema.entities where stored.contains(entity.name) {
            let table = Self.tableName(entity)
            guard let columns = columnsByTable[table] else {
                problems.append("no table \(table) for \(entity.name)")
                continue
            }
            for attribute in entity.attributes where !attribute.isTransient && !columns.contains(Self.columnName(attribute.name)) {
                problems.append("no column \(Self.columnName(attribute.name)) for \(entity.name).\(attribute.name)")
            }
            for relationship in entity.relationships where !relationship.isTransient {
                let name = "\(entity.name).\(relationship.name)"
                let inverse = relationship.inverseName.flatMap { schema.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }
                if !relationship.isToMany {
                    if !columns.contains(Self.columnName(relationship.name)) {
                        problems.append("no column \(Self.columnName(relationship.name)) for \(name)")
                    }
                    if let inverse, inverse.isOrdered, !columns.contains(Self.orderColumnName(Self.columnName(relationship.name))) {
                        problems.append("no column \(Self.orderColumnName(Self.columnName(relationship.name))) ordering \(relationship.destinationEntityName).\(inverse.name)")
                    }
                } else if let inverse, !inverse.isToMany {
                    continue  // one-to-many: the destination's column holds it
                } else if let join = joinTable(of: relationship, in: entity) {
                    if relationship.isOrdered, join.destinationOrder == nil {
                        problems.append("no column ordering \(name) in \(join.name)")
                    }
                } else if inverse == nil {
                    problems.append("no join table for \(name), which has no inverse (Z_\(entityNumbers[entity.name].map(String.init) ?? "?")\(relationship.name.uppercased()) with a column Z_\(entityNumbers[relationship.destinationEntityName].map(String.init) ?? "?")\(relationship.name.uppercased()) and one for the sources)")
                } else {
                    problems.append("no join table for \(name)")
                }
            }
        }
        return Array(Set(problems)).sorted()
    }

    // MARK: Whole-store reads

    /// Every object of the store, root table by root table, read at once.
    public func rows() throws -> [ImportedObject] {
        try read { snapshot in
            var rows: [ImportedObject] = []
            try snapshot.forEachObject { rows.append($0) }
            return rows
        }
    }

    /// The links of every to-many relationship that the objects' to-one references do not
    /// give (see ``Snapshot/forEachLinks(_:)``), read at once.
    public func links() throws -> [ImportedLinks] {
        try read { snapshot in
            var result: [ImportedLinks] = []
            try snapshot.forEachLinks { result.append($0) }
            return result
        }
    }

    /// One consistent view of a Core Data store, inside ``CoreDataStoreReader/read(_:)``.
    public struct Snapshot {
        let reader: CoreDataStoreReader
        let db: Database

        /// The number of objects in the store.
        public func objectCount() throws -> Int {
            var count = 0
            for root in reader.schema.entities where root.superentity == nil {
                count += try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quoted(CoreDataStoreReader.tableName(root)))") ?? 0
            }
            return count
        }

        /// Calls `body` with every object of the store, root table by root table in `Z_PK`
        /// order, one at a time (memory stays flat however large the store is).
        ///
        /// - Parameters:
        ///   - includingAttributes: Whether to read and decode attribute values; without
        ///     them, objects carry their to-one references only.
        ///   - body: Called with each object.
        /// - Throws: ``StrataError`` with ``StrataError/Code/corruptStore`` or
        ///   ``StrataError/Code/typeMismatch`` for values Core Data would not have written,
        ///   ``StrataError/Code/unrepresentableValue`` for a transformable value with no JSON
        ///   form; and what `body` throws.
        public func forEachObject(includingAttributes: Bool = true, _ body: (ImportedObject) throws -> Void) throws {
            let schema = reader.schema
            let entityNames = Dictionary(reader.entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
            for root in schema.entities where root.superentity == nil {
                let table = CoreDataStoreReader.tableName(root)
                let kinds = schema.entities.filter { $0.rootEntity.name == root.name }
                var columns: [String] = []
                for entity in kinds {
                    if includingAttributes {
                        for attribute in entity.declaration.attributes where !attribute.isTransient {
                            columns.append(CoreDataStoreReader.columnName(attribute.name))
                        }
                    }
                    for relationship in entity.declaration.relationships where !relationship.isTransient && !relationship.isToMany {
                        columns.append(CoreDataStoreReader.columnName(relationship.name))
                    }
                }
                columns = Array(Set(columns)).sorted()
                let position = Dictionary(columns.enumerated().map { ($0.element, $0.offset + 2) }, uniquingKeysWith: { first, _ in first })
                let sql = "SELECT Z_PK, Z_ENT" + columns.map { ", \(quoted($0))" }.joined() + " FROM \(quoted(table)) ORDER BY Z_PK"
                let cursor = try GRDB.Row.fetchCursor(db, sql: sql)
                while let stored = try cursor.next() {
                    guard let key: Int64 = stored[0] else { continue }
                    let number: Int64? = stored[1]
                    guard let number, let name = entityNames[number], let entity = schema.entity(named: name),
                        entity.rootEntity.name == root.name
                    else {
                        throw StrataError(
                            .corruptStore,
                            "The row with Z_PK \(key) of \(table) has entity number \(number.map(String.init) ?? "NULL"), which names no entity of that table in Z_PRIMARYKEY and the model.",
                            fileURL: reader.url)
                    }
                    var row = ImportedObject(entityName: name, primaryKey: key)
                    if includingAttributes {
                        for attribute in entity.attributes where !attribute.isTransient {
                            guard let index = position[CoreDataStoreReader.columnName(attribute.name)] else { continue }
                            row.values[attribute.name] = try reader.decode(
                                stored[index] as DatabaseValue, attribute: attribute, entity: entity, key: key)
                        }
                    }
                    for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                        guard let index = position[CoreDataStoreReader.columnName(relationship.name)], let target: Int64 = stored[index],
                            let destination = schema.entity(named: relationship.destinationEntityName)
                        else { continue }
                        row.toOne[relationship.name] = ImportedReference(rootEntity: destination.rootEntity.name, primaryKey: target)
                    }
                    try body(row)
                }
            }
        }

        /// Calls `body` with the links of each to-many relationship that the objects' to-one
        /// references do not give, or not in order: many-to-many relationships (once per pair
        /// of inverses, or once per ordered side), to-many relationships without inverse, and
        /// ordered one-to-many relationships. Links are sorted by source, and an ordered
        /// relationship's destinations come in their order.
        ///
        /// - Throws: ``StrataError`` when the store cannot be read, and what `body` throws.
        public func forEachLinks(_ body: (ImportedLinks) throws -> Void) throws {
            for (header, sql) in linkQueries() {
                var links = header
                links.pairs = try pairs(sql)
                try body(links)
            }
        }

        /// The number of links ``forEachLinks(_:)`` gives, counted without reading them.
        public func linkCount() throws -> Int {
            try linkQueries().reduce(0) { count, query in
                count + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(query.sql))") ?? 0)
            }
        }

        /// Each relationship's links (without pairs) and the query of its (source, destination)
        /// pairs, in order.
        private func linkQueries() -> [(links: ImportedLinks, sql: String)] {
            let schema = reader.schema
            var queries: [(links: ImportedLinks, sql: String)] = []
            var seen: Set<String> = []
            for entity in schema.entities {
                for relationship in entity.declaration.relationships where relationship.isToMany && !relationship.isTransient {
                    let inverse = relationship.inverseName.flatMap { schema.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }
                    if let inverse, !inverse.isToMany {
                        // One-to-many: ordered ones need the order column of the destination's table.
                        guard relationship.isOrdered, let destination = schema.entity(named: relationship.destinationEntityName) else { continue }
                        let key = CoreDataStoreReader.columnName(inverse.name)
                        queries.append((
                            ImportedLinks(entityName: entity.name, relationship: relationship.name, isOrdered: true),
                            """
                            SELECT \(quoted(key)), Z_PK FROM \(quoted(CoreDataStoreReader.tableName(destination))) WHERE \(quoted(key)) IS NOT NULL \
                            ORDER BY \(quoted(key)), \(quoted(CoreDataStoreReader.orderColumnName(key))), Z_PK
                            """
                        ))
                        continue
                    }
                    guard let join = reader.joinTable(of: relationship, in: entity), seen.insert(join.name).inserted else { continue }
                    let sides: [(entity: Entity, relationship: RelationshipDescription, source: String, destination: String, order: String?)]
                    if let inverse, let destination = schema.entity(named: relationship.destinationEntityName), !relationship.isOrdered, inverse.isOrdered {
                        sides = [(destination, inverse, join.destination, join.source, join.sourceOrder)]
                    } else if let inverse, let destination = schema.entity(named: relationship.destinationEntityName), relationship.isOrdered, inverse.isOrdered,
                        relationship.name != inverse.name || entity.name != destination.name
                    {
                        sides = [
                            (entity, relationship, join.source, join.destination, join.destinationOrder),
                            (destination, inverse, join.destination, join.source, join.sourceOrder),
                        ]
                    } else {
                        sides = [(entity, relationship, join.source, join.destination, join.destinationOrder)]
                    }
                    for side in sides {
                        let order = side.order.map { "\(quoted($0)), " } ?? ""
                        queries.append((
                            ImportedLinks(
                                entityName: StoreLayout.declaringEntity(ofRelationship: side.relationship.name, in: side.entity).name,
                                relationship: side.relationship.name, isOrdered: side.relationship.isOrdered),
                            "SELECT \(quoted(side.source)), \(quoted(side.destination)) FROM \(quoted(join.name)) ORDER BY \(quoted(side.source)), \(order)\(quoted(side.destination))"
                        ))
                    }
                }
            }
            return queries
        }

        private func pairs(_ sql: String) throws -> [ImportedLinkPair] {
            var pairs: [ImportedLinkPair] = []
            let cursor = try GRDB.Row.fetchCursor(db, sql: sql)
            while let row = try cursor.next() {
                if let a: Int64 = row[0], let b: Int64 = row[1] { pairs.append(ImportedLinkPair(source: a, destination: b)) }
            }
            return pairs
        }
    }

    /// A stored value in Core Data's encoding, as Strata's.
    func decode(_ value: DatabaseValue, attribute: AttributeDescription, entity: Entity, key: Int64) throws -> AttributeValue {
        func mismatch() -> StrataError {
            StrataError(
                .typeMismatch,
                "\(entity.name).\(attribute.name) of the object with Z_PK \(key) holds \(value), not a \(attribute.type) value as Core Data writes it.",
                entityName: entity.name, propertyName: attribute.name, fileURL: url)
        }
        if value.isNull { return .null }
        switch (attribute.type, value.storage) {
        case (.integer16, .int64(let number)), (.integer32, .int64(let number)), (.integer64, .int64(let number)):
            return .integer(number)
        case (.boolean, .int64(let number)):
            return .boolean(number != 0)
        case (.double, .double(let number)), (.float, .double(let number)):
            return attribute.type == .float ? .float(Float(number)) : .double(number)
        case (.double, .int64(let number)), (.float, .int64(let number)):
            return attribute.type == .float ? .float(Float(number)) : .double(Double(number))
        case (.date, .double(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.date, .int64(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case (.decimal, .int64(let number)):
            return .decimal(Decimal(number))
        case (.decimal, .double(let number)):
            // NUMERIC affinity stores decimals as REAL: the shortest text that reads back as
            // the same double is the value Core Data was given.
            guard let decimal = Decimal(string: "\(number)", locale: Locale(identifier: "en_US_POSIX")) else { throw mismatch() }
            return .decimal(decimal)
        case (.decimal, .string(let text)):
            guard let decimal = DecimalText.decimal(text) else { throw mismatch() }
            return .decimal(decimal)
        case (.string, .string(let text)):
            return .string(text)
        case (.uri, .string(let text)):
            guard let url = URL(string: text) else { throw mismatch() }
            return .url(url)
        case (.uuid, .blob(let data)) where data.count == 16:
            return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch() }
            return .uuid(uuid)
        case (.binaryData, .blob(let data)):
            return .data(try binary(data, attribute: attribute, entity: entity, key: key))
        case (.codable, .blob), (.codable, .string):
            let bytes = Self.bytes(of: value)
            if (try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])) != nil { return .codable(bytes) }
            do {
                return .codable(try KeyedArchive.jsonData(from: bytes))
            } catch {
                throw StrataError(
                    .unrepresentableValue,
                    "\(entity.name).\(attribute.name) of the object with Z_PK \(key) holds a transformable value Strata cannot read: \(error). Import that attribute in a custom stage, or make it binary data in the model.",
                    entityName: entity.name, propertyName: attribute.name, fileURL: url)
            }
        case (.codable, _):
            throw StrataError(
                .unrepresentableValue,
                "\(entity.name).\(attribute.name) of the object with Z_PK \(key) holds \(value), which is not a transformable value as Core Data writes one.",
                entityName: entity.name, propertyName: attribute.name, fileURL: url)
        default:
            throw mismatch()
        }
    }

    /// The bytes of a blob or text value.
    private static func bytes(of value: DatabaseValue) -> Data {
        switch value.storage {
        case .blob(let data): data
        case .string(let text): Data(text.utf8)
        default: Data()
        }
    }

    /// The bytes of a binary attribute; with external storage, Core Data prefixes the value
    /// with 0x01 (bytes follow) or 0x02 (the name of a file in the store's `_EXTERNAL_DATA`
    /// folder follows, ending with a NUL).
    private func binary(_ data: Data, attribute: AttributeDescription, entity: Entity, key: Int64) throws -> Data {
        guard attribute.allowsExternalBinaryDataStorage, let marker = data.first else { return data }
        switch marker {
        case 0x01:
            return data.dropFirst()
        case 0x02:
            let name = String(decoding: data.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            let storeName = url.deletingPathExtension().lastPathComponent
            let folder = url.deletingLastPathComponent().appendingPathComponent(".\(storeName)_SUPPORT/_EXTERNAL_DATA")
            let file = folder.appendingPathComponent(name)
            // The name comes from the file: it must stay a plain file name inside the folder.
            let resolved = file.resolvingSymlinksInPath().path
            guard !name.isEmpty, !name.contains("/"), name != "..",
                resolved.hasPrefix(folder.resolvingSymlinksInPath().path + "/"),
                let bytes = FileManager.default.contents(atPath: file.path)
            else {
                throw StrataError(
                    .corruptStore,
                    "\(entity.name).\(attribute.name) of the object with Z_PK \(key) is stored in the external file \(file.path), which cannot be read.",
                    entityName: entity.name, propertyName: attribute.name, fileURL: file)
            }
            return bytes
        default:
            throw StrataError(
                .corruptStore,
                "\(entity.name).\(attribute.name) of the object with Z_PK \(key) starts with byte \(marker), which is not one of Core Data's external-storage markers (1: bytes follow, 2: a file name follows).",
                entityName: entity.name, propertyName: attribute.name, fileURL: url)
        }
    }
}

extension CoreDataStoreReader.Snapshot: ImportedStoreSnapshot {}
