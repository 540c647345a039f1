import Foundation
import GRDB

/// Reads an SQLite store that Core Data wrote, given the schema of the model version that
/// wrote it, without writing to it: `Z`-prefixed tables (one per root entity) and columns,
/// `Z_PK`/`Z_ENT`, entity numbers from `Z_PRIMARYKEY`, many-to-many join tables, and Core
/// Data's value encodings. `Tests/StrataTests/Fixtures/CoreData/FORMAT.md` describes the format.
///
/// Objects come out as neutral values — ``ImportedObject``s and ``ImportedLinks`` — for an
/// importer to turn into objects (``CoreDataImport``).
public struct CoreDataStoreReader: Sendable {
    /// The store file.
    public let url: URL
    /// The schema of the model version that wrote the store.
    public let schema: Schema
    /// Entity numbers (`Z_ENT`) by entity name.
    public let entityNumbers: [String: Int64]
    private let columnsByTable: [String: Set<String>]

    /// Opens the store at `url` for reading, checking that its layout fits `schema`.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/notAStore`` for a file that is not a
    ///   Core Data store, ``StrataError/Code/incompatibleSchema`` naming what does not fit.
    public init(url: URL, schema: Schema) throws {
        self.url = url
        self.schema = schema
        let (numbers, columns) = try Self.read(url) { db in
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
            return (numbers, columns)
        }
        entityNumbers = numbers
        columnsByTable = columns
        let problems = layoutProblems()
        guard problems.isEmpty else {
            throw StrataError(
                .incompatibleSchema,
                "The Core Data store at \(url.path) was not written with this model version: \(problems.joined(separator: "; ")).",
                fileURL: url, details: problems.map { StrataError(.incompatibleSchema, $0, fileURL: url) })
        }
    }

    static func read<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
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

    // MARK: Layout

    static func tableName(_ entity: Entity) -> String { "Z" + entity.rootEntity.name.uppercased() }
    static func columnName(_ property: String) -> String { "Z" + property.uppercased() }

    /// The join table of a many-to-many relationship and its two key columns (this side's,
    /// the destination's), trying the name each side would give it.
    func joinTable(of relationship: RelationshipDescription, in entity: Entity) -> (table: String, source: String, destination: String)? {
        guard let destination = schema.entity(named: relationship.destinationEntityName),
            let inverseName = relationship.inverseName,
            let sourceNumber = entityNumbers[StoreLayout.declaringEntity(ofRelationship: relationship.name, in: entity).name],
            let destinationNumber = entityNumbers[StoreLayout.declaringEntity(ofRelationship: inverseName, in: destination).name]
        else { return nil }
        let source = "Z_\(sourceNumber)\(inverseName.uppercased())"
        // A relationship that is its own inverse names its second column REFLEXIVE.
        let isOwnInverse = inverseName == relationship.name && destination.name == entity.name
        let target = isOwnInverse ? "REFLEXIVE" : "Z_\(destinationNumber)\(relationship.name.uppercased())"
        for table in ["Z_\(sourceNumber)\(relationship.name.uppercased())", "Z_\(destinationNumber)\(inverseName.uppercased())"] {
            if let columns = columnsByTable[table], columns.contains(source), columns.contains(target) {
                return (table, source, target)
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
                if !relationship.isToMany {
                    if !columns.contains(Self.columnName(relationship.name)) {
                        problems.append("no column \(Self.columnName(relationship.name)) for \(entity.name).\(relationship.name)")
                    }
                } else if relationship.isOrdered {
                    problems.append("\(entity.name).\(relationship.name) is ordered, which Strata does not import from Core Data yet")
                } else if let inverse = relationship.inverseName.flatMap({ schema.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }) {
                    if inverse.isToMany, joinTable(of: relationship, in: entity) == nil {
                        problems.append("no join table for \(entity.name).\(relationship.name)")
                    }
                } else {
                    problems.append("\(entity.name).\(relationship.name) has no inverse, which Strata does not import from Core Data")
                }
            }
        }
        return Array(Set(problems)).sorted()
    }

    // MARK: Rows

    /// Every object of the store, root table by root table.
    public func rows() throws -> [ImportedObject] {
        let entityNames = Dictionary(entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        return try Self.read(url) { db in
            var rows: [ImportedObject] = []
            for root in schema.entities where root.superentity == nil {
                let table = Self.tableName(root)
                let kinds = schema.entities.filter { $0.rootEntity.name == root.name }
                var columns: [String] = []
                for entity in kinds {
                    for attribute in entity.declaration.attributes where !attribute.isTransient {
                        columns.append(Self.columnName(attribute.name))
                    }
                    for relationship in entity.declaration.relationships where !relationship.isTransient && !relationship.isToMany {
                        columns.append(Self.columnName(relationship.name))
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
                            fileURL: url)
                    }
                    var row = ImportedObject(entityName: name, primaryKey: key)
                    for attribute in entity.attributes where !attribute.isTransient {
                        guard let index = position[Self.columnName(attribute.name)] else { continue }
                        row.values[attribute.name] = try decode(
                            stored[index] as DatabaseValue, attribute: attribute, entity: entity, key: key)
                    }
                    for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                        guard let index = position[Self.columnName(relationship.name)], let target: Int64 = stored[index],
                            let destination = schema.entity(named: relationship.destinationEntityName)
                        else { continue }
                        row.toOne[relationship.name] = ImportedReference(rootEntity: destination.rootEntity.name, primaryKey: target)
                    }
                    rows.append(row)
                }
            }
            return rows
        }
    }

    /// The links of every many-to-many relationship, once per pair of inverse relationships.
    public func manyToManyLinks() throws -> [ImportedLinks] {
        var seen: Set<String> = []
        var result: [ImportedLinks] = []
        try Self.read(url) { db in
            for entity in schema.entities {
                for relationship in entity.declaration.relationships where relationship.isToMany && !relationship.isTransient {
                    guard let (table, source, destination) = joinTable(of: relationship, in: entity),
                        seen.insert(table).inserted
                    else { continue }
                    var links = ImportedLinks(entityName: entity.name, relationship: relationship.name)
                    for row in try GRDB.Row.fetchAll(db, sql: "SELECT \(quoted(source)), \(quoted(destination)) FROM \(quoted(table))") {
                        if let a: Int64 = row[0], let b: Int64 = row[1] { links.pairs.append(ImportedLinkPair(source: a, destination: b)) }
                    }
                    result.append(links)
                }
            }
        }
        return result
    }

    /// A stored value in Core Data's encoding, as Strata's.
    private func decode(_ value: DatabaseValue, attribute: AttributeDescription, entity: Entity, key: Int64) throws -> AttributeValue {
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
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw mismatch() }
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
            throw StrataError(
                .unrepresentableValue,
                "\(entity.name).\(attribute.name) of the object with Z_PK \(key) holds a transformable value that is not JSON (Core Data archives them with NSKeyedArchiver); Strata cannot read it. Import that attribute in a custom stage, or make it binary data in the model.",
                entityName: entity.name, propertyName: attribute.name, fileURL: url)
        case (.codable, _):
            throw StrataError(
                .unrepresentableValue,
                "\(entity.name).\(attribute.name) of the object with Z_PK \(key) holds a transformable value that is not JSON (Core Data archives them with NSKeyedArchiver); Strata cannot read it. Import that attribute in a custom stage, or make it binary data in the model.",
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

extension StoreDescription {
    /// The objects and many-to-many links of the Core Data store at `url`, written with
    /// `schema` (see ``CoreDataStoreReader``).
    static func readCoreDataStore(at url: URL, schema: Schema) throws -> (objects: [ImportedObject], links: [ImportedLinks]) {
        let reader = try CoreDataStoreReader(url: url, schema: schema)
        return (try reader.rows(), try reader.manyToManyLinks())
    }

    /// Throws unless the Core Data store at `url` has the layout `schema` gives.
    static func checkCoreDataStore(at url: URL, schema: Schema) throws {
        _ = try CoreDataStoreReader(url: url, schema: schema)
    }
}
