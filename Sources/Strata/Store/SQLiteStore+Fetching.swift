import Foundation
import GRDB

extension SQLiteStore {
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let (entity, layout) = try resolve(request.entityName)
        let kinds = request.includesSubentities ? layout.kindNames : [entity.name]
        guard let table = self.layout.tables.first(where: { $0.name == layout.table }) else { return [] }
        let columnNames = table.columns.map(\.name)
        var sql = "SELECT " + columnNames.map(quoted).joined(separator: ", ") + " FROM \(quoted(layout.table))"
        var arguments = StatementArguments()
        sql += " WHERE \(quoted(StoreLayout.entityColumn)) IN (" + kinds.map { _ in "?" }.joined(separator: ", ") + ")"
        for kind in kinds { arguments += [kind] }
        if let keys = request.primaryKeys {
            if keys.isEmpty { return [] }
            sql += " AND \(quoted(StoreLayout.primaryKeyColumn)) IN (" + keys.map { _ in "?" }.joined(separator: ", ") + ")"
            for key in keys { arguments += [key] }
        }
        try appendMatching(request, of: entity, to: &sql, &arguments)
        sql += " ORDER BY \(quoted(StoreLayout.primaryKeyColumn))"
        let columnIndex = Dictionary(columnNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        // Per entity: the SELECT positions of its attributes and to-one columns.
        var decoders: [String: RowDecoder] = [:]
        return try read(sql: sql) { db in
            var rows: [StoreRow] = []
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try cursor.next() {
                let primaryKey: Int64 = row[0]
                let entityName: String = row[1]
                let version: Int64 = row[2]
                let decoder: RowDecoder
                if let cached = decoders[entityName] {
                    decoder = cached
                } else {
                    guard let made = RowDecoder(entityName: entityName, store: self, columnIndex: columnIndex) else {
                        continue  // a row of an entity this schema does not know
                    }
                    decoders[entityName] = made
                    decoder = made
                }
                rows.append(decoder.decode(row, primaryKey: primaryKey, version: version, storeIdentifier: identifier))
            }
            return rows
        }
    }

    public func count(_ request: StoreFetchRequest) throws -> Int {
        let (entity, layout) = try resolve(request.entityName)
        let kinds = request.includesSubentities ? layout.kindNames : [entity.name]
        var sql = "SELECT COUNT(*) FROM \(quoted(layout.table)) WHERE \(quoted(StoreLayout.entityColumn)) IN ("
            + kinds.map { _ in "?" }.joined(separator: ", ") + ")"
        var arguments = StatementArguments(kinds)
        if let keys = request.primaryKeys {
            if keys.isEmpty { return 0 }
            sql += " AND \(quoted(StoreLayout.primaryKeyColumn)) IN (" + keys.map { _ in "?" }.joined(separator: ", ") + ")"
            arguments += StatementArguments(keys)
        }
        try appendMatching(request, of: entity, to: &sql, &arguments)
        return try read(sql: sql) { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    public func relatedObjectIDs(of objectID: ObjectID, relationshipNamed name: String) throws -> [ObjectID] {
        let (entity, layout) = try resolve(objectID.entityName)
        guard let number = entity.relationshipNumber(named: name), let primaryKey = objectID.primaryKey else {
            return []
        }
        let relationship = entity.relationships[number]
        guard let destination = schema.entity(named: relationship.destinationEntityName),
            let destinationLayout = self.layout.entities[destination.name]
        else { return [] }
        let sql: String
        var arguments: StatementArguments = [primaryKey]
        switch layout.toMany[number] {
        case .inverseColumn(let table, let column, let orderColumn):
            sql = "SELECT \(quoted(StoreLayout.primaryKeyColumn)), \(quoted(StoreLayout.entityColumn)) FROM \(quoted(table))"
                + " WHERE \(quoted(column)) = ? AND \(quoted(StoreLayout.entityColumn)) IN ("
                + destinationLayout.kindNames.map { _ in "?" }.joined(separator: ", ") + ")"
                + " ORDER BY " + (orderColumn.map { "\(quoted($0)), " } ?? "") + quoted(StoreLayout.primaryKeyColumn)
            arguments += StatementArguments(destinationLayout.kindNames)
        case .joinTable(let table, let sourceColumn, let targetColumn, let positionColumn):
            sql = "SELECT j.\(quoted(targetColumn)), t.\(quoted(StoreLayout.entityColumn)) FROM \(quoted(table)) j"
                + " JOIN \(quoted(destinationLayout.table)) t ON t.\(quoted(StoreLayout.primaryKeyColumn)) = j.\(quoted(targetColumn))"
                + " WHERE j.\(quoted(sourceColumn)) = ?"
                + " ORDER BY " + (positionColumn.map { "j.\(quoted($0)), " } ?? "") + "j.\(quoted(targetColumn))"
        case nil:
            return []
        }
        return try read(sql: sql) { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                ObjectID(entityName: row[1], storeIdentifier: identifier, primaryKey: row[0])
            }
        }
    }

    // MARK: Helpers

    /// Adds the request's property-equality conditions, with bound values.
    func appendMatching(
        _ request: StoreFetchRequest, of entity: Entity, to sql: inout String, _ arguments: inout StatementArguments
    ) throws {
        for (name, value) in (request.matching ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard entity.attribute(named: name) != nil || entity.relationship(named: name)?.isToMany == false else {
                throw StrataError(
                    .unknownKey, "\(entity.name) has no attribute or to-one relationship named '\(name)' to match on.",
                    entityName: entity.name, propertyName: name)
            }
            if value.isNull {
                sql += " AND \(quoted(name)) IS NULL"
            } else {
                sql += " AND \(quoted(name)) = ?"
                arguments += [SQLiteValueCoding.databaseValue(value)]
            }
        }
    }

    func resolve(_ entityName: String) throws -> (Entity, StoreLayout.EntityLayout) {
        guard let entity = schema.entity(named: entityName), let layout = layout.entities[entityName] else {
            throw StrataError(
                .noStore, "The store has no entity named '\(entityName)'." + didYouMean(entityName, in: layout.entities.keys.sorted()),
                entityName: entityName)
        }
        return (entity, layout)
    }

    func read<T>(sql: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try writer.read(body)
        } catch let error as StrataError {
            throw error
        } catch {
            throw storeError(error, sql: sql)
        }
    }

    func storeError(_ error: any Error, sql: String?) -> StrataError {
        if let error = error as? StrataError { return error }
        guard let database = error as? DatabaseError else {
            return StrataError(.storeError, "The store failed: \(error.localizedDescription)", fileURL: url)
        }
        let code: StrataError.Code =
            switch database.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB: .corruptStore
            case .SQLITE_READONLY, .SQLITE_PERM: .storeNotWritable
            case .SQLITE_MISUSE: .storeClosed
            default: .storeError
            }
        var message = "SQLite: \(database.message ?? "\(database.resultCode)")"
        if let sql { message += " (in: \(sql))" }
        return StrataError(code, message, fileURL: url, underlyingError: database)
    }
}

/// Decodes rows of one entity by column position.
struct RowDecoder {
    let attributeTypes: [AttributeType]
    let attributePositions: [Int?]
    let toOnePositions: [Int?]
    let toOneEntityPositions: [Int?]
    let toOneDestinations: [String]
    let entityName: String

    init?(entityName: String, store: SQLiteStore, columnIndex: [String: Int]) {
        guard let entity = store.schema.entity(named: entityName), let layout = store.layout.entities[entityName] else {
            return nil
        }
        self.entityName = entityName
        attributeTypes = entity.attributes.map(\.type)
        attributePositions = layout.attributeColumns.map { $0.flatMap { columnIndex[$0] } }
        toOnePositions = layout.toOneColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneEntityPositions = layout.toOneEntityColumns.map { $0.flatMap { columnIndex[$0] } }
        toOneDestinations = entity.relationships.map(\.destinationEntityName)
    }

    func decode(_ row: Row, primaryKey: Int64, version: Int64, storeIdentifier: String) -> StoreRow {
        var attributes: [AttributeValue] = []
        attributes.reserveCapacity(attributeTypes.count)
        for (number, position) in attributePositions.enumerated() {
            guard let position else {
                attributes.append(.null)
                continue
            }
            let value: DatabaseValue = row[position]
            attributes.append(SQLiteValueCoding.attributeValue(value, type: attributeTypes[number]))
        }
        var toOne: [ObjectID?] = []
        toOne.reserveCapacity(toOnePositions.count)
        for (number, position) in toOnePositions.enumerated() {
            guard let position, let key: Int64 = row[position] else {
                toOne.append(nil)
                continue
            }
            let targetEntity: String? = toOneEntityPositions[number].flatMap { row[$0] }
            toOne.append(ObjectID(entityName: targetEntity ?? toOneDestinations[number], storeIdentifier: storeIdentifier, primaryKey: key))
        }
        return StoreRow(
            objectID: ObjectID(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey),
            version: version, attributes: attributes, toOne: toOne)
    }
}
