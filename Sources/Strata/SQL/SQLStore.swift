import Foundation

/// The columns of the current row of a statement, as a store reads them: what the queries
/// ``SQLStore`` shares read rows through. Reading never traps: a column of an unexpected kind
/// (a row another program wrote) reads as `nil` or ``AttributeValue/null``.
package protocol SQLRowReading {
    /// The integer in a column, or `nil` for NULL or another kind of value.
    func int64(at column: Int) -> Int64?
    /// The one of `names` that a text column holds, or `nil` when it holds another value.
    func entityName(at column: Int, among names: [String]) -> String?
    /// A column decoded as an attribute of `type`.
    func attributeValue(at column: Int, type: AttributeType) -> AttributeValue
    /// An integer sum (``SQLValuesColumn/integerSum``): an integer, or a `Double` beyond
    /// `Int64`'s range.
    func integerSum(at column: Int) -> AttributeValue
}

/// A store over an SQL database: its dialect, its compiled selects and a way to read a
/// statement's rows, from which the counts, key and ID fetches and values fetches of every SQL
/// store are written once. Each store keeps its own object fetch (the hot path decodes rows
/// straight from its driver) and forwards its ``PersistentStore`` requirements to these.
package protocol SQLStore: PersistentStore {
    /// The store's SQL spellings.
    associatedtype Dialect: SQLDialect
    /// The rows its statements give.
    associatedtype RowReader: SQLRowReading

    /// Compiles a plan, or returns `nil` when it can match nothing.
    func makeQuery(_ plan: FetchPlan) throws -> SQLSelect<Dialect>?

    /// Runs a query (inside a save's preparation, on the connection that prepares it) and
    /// calls `body` with each row.
    ///
    /// - Throws: ``StrataError`` when the statement fails; what `body` throws.
    func readRows(sql: String, arguments: Dialect.Arguments, _ body: (RowReader) throws -> Void) throws

    /// Where the store keeps each entity: tables, columns, relationship storage.
    var storeLayout: StoreLayout { get }
}

extension SQLStore {
    /// The number of rows a plan matches, its limit and offset applied, counted by the database.
    package func countRows(_ plan: FetchPlan) throws -> Int {
        guard var query = try makeQuery(plan) else { return 0 }
        let sql = query.countSQL()
        var count = 0
        try readRows(sql: sql, arguments: query.arguments) { count = Int($0.int64(at: 0) ?? 0) }
        return count
    }

    /// The IDs of the rows a plan matches, in its order, without reading their values.
    package func objectIDs(_ plan: FetchPlan) throws -> [ObjectID] {
        let (keys, names) = try primaryKeys(plan, includingEntityNames: true)
        return zip(keys, names ?? []).map { ObjectID(entityName: $1, storeIdentifier: identifier, primaryKey: $0) }
    }

    /// The primary keys (and, when asked, entity names) of the rows a plan matches, in its
    /// order, read without making an ID per row. Rows of entities the plan does not fetch (a
    /// damaged store) are skipped; a localized sort the dialect cannot express is done here.
    package func primaryKeys(_ plan: FetchPlan, includingEntityNames: Bool) throws -> (
        keys: [Int64], entityNames: [String]?
    ) {
        guard var query = try makeQuery(plan) else { return ([], includingEntityNames ? [] : nil) }
        let (sql, sortKeyTypes) = query.primaryKeysSQL()
        let kinds = query.kinds
        guard sortKeyTypes.isEmpty else {
            var found: [(key: Int64, name: String, sortValues: [AttributeValue])] = []
            try readRows(sql: sql, arguments: query.arguments) { row in
                guard let key = row.int64(at: 0), let name = row.entityName(at: 1, among: kinds) else { return }
                found.append((key, name, sortKeyTypes.enumerated().map { row.attributeValue(at: 2 + $0, type: $1) }))
            }
            found = query.sortedOnClient(found, key: { $0.sortValues }, primaryKey: { $0.key })
            return (found.map(\.key), includingEntityNames ? found.map(\.name) : nil)
        }
        var keys: [Int64] = []
        var names: [String] = []
        try readRows(sql: sql, arguments: query.arguments) { row in
            guard let key = row.int64(at: 0), let name = row.entityName(at: 1, among: kinds) else { return }
            if includingEntityNames { names.append(name) }
            keys.append(key)
        }
        return (keys, includingEntityNames ? names : nil)
    }

    /// Property values and aggregates computed by the database, one array per row or group
    /// (see ``SQLSelect/valuesSQL(_:distinct:exactIntegerSums:)``).
    package func values(_ request: StoreValuesRequest, exactIntegerSums: Bool) throws -> [[AttributeValue]] {
        guard var query = try makeQuery(request.plan) else { return [] }
        let (sql, columns) = try query.valuesSQL(
            try ResolvedValuesRequest(request, schema: schema), distinct: request.returnsDistinctResults,
            exactIntegerSums: exactIntegerSums)
        var rows: [[AttributeValue]] = []
        try readRows(sql: sql, arguments: query.arguments) { row in
            var values: [AttributeValue] = []
            values.reserveCapacity(columns.count)
            for (index, column) in columns.enumerated() {
                switch column {
                case .integerSum: values.append(row.integerSum(at: index))
                case .value(let type): values.append(row.attributeValue(at: index, type: type))
                }
            }
            rows.append(values)
        }
        return rows
    }

    /// The entity named `entityName` and where the store keeps it.
    ///
    /// - Throws: ``StrataError/Code/unknownEntity`` when the store has no such entity.
    package func resolve(_ entityName: String) throws -> (Entity, StoreLayout.EntityLayout) {
        guard let entity = schema.entity(named: entityName), let entityLayout = storeLayout.entities[entityName] else {
            throw StrataError(
                .unknownEntity,
                "The store has no entity named '\(entityName)'." + didYouMean(entityName, in: storeLayout.entities.keys.sorted()),
                entityName: entityName)
        }
        return (entity, entityLayout)
    }

    /// The members of the to-many relationship `name` of each owner, in the relationship's
    /// order; owners without members map to an empty array, owners not yet saved to none.
    package func relatedMembers(of objectIDs: [ObjectID], relationshipNamed name: String) throws -> [ObjectID: [ObjectID]] {
        var result: [ObjectID: [ObjectID]] = [:]
        // Owners by entity: the relationship's storage is the same for an entity's rows.
        for (entityName, owners) in Dictionary(grouping: objectIDs.filter { $0.primaryKey != nil }, by: \.entityName) {
            let (entity, entityLayout) = try resolve(entityName)
            guard let number = entity.relationshipNumber(named: name),
                let destination = schema.entity(named: entity.relationships[number].destinationEntityName),
                let destinationLayout = storeLayout.entities[destination.name],
                let storage = entityLayout.toMany[number]
            else { continue }
            let ownerByKey = Dictionary(
                owners.compactMap { id in id.primaryKey.map { ($0, id) } }, uniquingKeysWith: { first, _ in first })
            // In chunks, within every database's limit on parameters.
            for start in stride(from: 0, to: owners.count, by: 500) {
                let chunk = owners[start..<Swift.min(start + 500, owners.count)]
                var arguments = Dialect.Arguments()
                let sql = storage.membersQuery(
                    destination: destinationLayout,
                    owners: { Dialect.primaryKeyTest($0, in: chunk.compactMap(\.primaryKey), to: &arguments) },
                    nullsFirst: Dialect.nullsFirst)
                for owner in chunk { result[owner] = [] }
                try readRows(sql: sql, arguments: arguments) { row in
                    guard let ownerKey = row.int64(at: 0), let key = row.int64(at: 1),
                        let memberEntity = row.entityName(at: 2, among: destinationLayout.kindNames),
                        let owner = ownerByKey[ownerKey]
                    else { return }
                    result[owner, default: []].append(ObjectID(entityName: memberEntity, storeIdentifier: identifier, primaryKey: key))
                }
            }
        }
        return result
    }
}
