/// How a schema maps onto tables: one table per root entity (subentities share it, told apart
/// by an entity column), a column per stored attribute and per to-one relationship, and join
/// tables for to-many relationships whose inverse is not to-one.
///
/// Every table and column name comes from the schema, whose names are validated identifiers
/// (letters, digits, underscores, starting with a letter); Strata's own names start with an
/// underscore, so they can never collide with a property.
package struct StoreLayout: Sendable {
    /// Column names Strata adds to every entity table.
    package static let primaryKeyColumn = "_pk"
    package static let entityColumn = "_entity"
    package static let versionColumn = "_version"
    /// The optimistic-lock version of a new row. SQLite stores the integers 0 and 1 in no bytes
    /// at all and 2 to 127 in one, so a row written at version 1 grows by a byte on its first
    /// update (which costs a fifth of a batch update's time); from 2 it keeps its size.
    package static let initialVersion: Int64 = 2
    /// Columns of a join table: the owning side's key, the other side's key, and each side's
    /// position in an ordered relationship.
    package static let joinSourceColumn = "_source"
    package static let joinTargetColumn = "_target"
    package static let joinPositionColumn = "_position"
    package static let joinInversePositionColumn = "_inverse_position"
    package static let metadataTable = "_strata_metadata"
    /// Persistent history's tables, the same in every SQL store (their column types, key
    /// generation and index names are each store's own): one row per transaction, per changed
    /// object, per value kept of a deleted object, and per reader author.
    package static let historyTransactionTable = "_strata_history_transaction"
    package static let historyChangeTable = "_strata_history_change"
    package static let historyTombstoneTable = "_strata_history_tombstone"
    package static let historyReaderTable = "_strata_history_reader"
    /// The storage format new stores are written in, recorded in their metadata.
    ///
    /// Format 2 names indexes with dots (`Tag.unique.0`, `Tag.byName`), which no entity,
    /// property or index name can contain, so that no two generated names can be equal. Format 1
    /// joined them with underscores, where an index named `unique_0` took the name of a
    /// uniqueness constraint's index. Format 2 also keeps an inherited many-to-many
    /// relationship in its declaring entity's join table. Opening a format 1 store upgrades it.
    package static let format = "2"
    /// The formats this version reads (and upgrades to ``format``).
    package static let readableFormats: Set<String> = ["1", "2"]

    /// How one to-many relationship is stored.
    package enum ToManyStorage: Sendable, Hashable {
        /// The destination rows point back through the inverse to-one column; an ordered
        /// relationship also keeps each row's position in `orderColumn`.
        case inverseColumn(table: String, column: String, orderColumn: String?)
        /// A join table holds (source, target, position) rows. `sourceColumn` holds this side's
        /// key; for the inverse side of a many-to-many relationship the columns are swapped.
        case joinTable(table: String, sourceColumn: String, targetColumn: String, positionColumn: String?)
    }

    /// The storage of one entity.
    package struct EntityLayout: Sendable {
        package var table: String
        /// This entity and every subentity, for `WHERE _entity IN (...)`.
        package var kindNames: [String]
        /// Column per attribute number; `nil` for transient attributes.
        package var attributeColumns: [String?]
        /// Foreign-key column per relationship number; `nil` for to-many relationships.
        package var toOneColumns: [String?]
        /// The column holding the target's entity, for to-one relationships whose destination
        /// has subentities.
        package var toOneEntityColumns: [String?]
        /// Storage per relationship number; `nil` for to-one relationships.
        package var toMany: [ToManyStorage?]
    }

    /// A table and its columns (name, declared type).
    package struct Table: Sendable {
        package var name: String
        package var columns: [(name: String, type: String)]
        package var isJoinTable: Bool

        /// The statement that creates the table.
        package var sql: String {
            "CREATE TABLE \(quoted(name)) (" + columns.map { "\(quoted($0.name)) \($0.type)" }.joined(separator: ", ") + ")"
        }
    }

    package var entities: [String: EntityLayout] = [:]
    package var tables: [Table] = []
    /// For each entity table, the join-table columns that hold its keys, so that deleting a row
    /// also deletes the join rows that mention it.
    package var joinColumnsByTable: [String: [(table: String, column: String)]] = [:]
    package var indexes: [Index] = []
    /// Join tables that format 1 stores have and format 2 does not, with where their rows go.
    package var formerJoinTables: [FormerJoinTable] = []

    /// A join table of a format 1 store that held an inherited many-to-many relationship apart
    /// from the entity that declares it: format 1 named join tables after the entity at hand,
    /// so a subentity's links were invisible from its superentity and from the other side.
    package struct FormerJoinTable: Sendable, Equatable {
        /// Its name in format 1 stores.
        package var name: String
        /// The join table its rows belong in.
        package var table: String
        /// Pairs of (column in `name`, column in `table`) for the keys and positions.
        package var columns: [Pair]

        package struct Pair: Sendable, Equatable {
            package var from: String
            package var to: String
        }
    }

    /// The entity among `entity` and its ancestors that declares the relationship `name`:
    /// subentities store an inherited relationship where its declaring entity does.
    package static func declaringEntity(ofRelationship name: String, in entity: Entity) -> Entity {
        var declaring = entity
        while let parent = declaring.superentity, parent.relationship(named: name) != nil { declaring = parent }
        return declaring
    }

    /// The join table of a many-to-many relationship `here` (`Entity.relationship`) whose
    /// inverse is `there`, or that has no inverse: named after the side that sorts first.
    package static func joinTable(here: String, there: String?) -> (name: String, owner: String, isOwner: Bool) {
        let owner = there.map { min(here, $0) } ?? here
        // The entity name's length keeps ("A", "b_c") and ("A_b", "c") apart.
        let ownerEntity = owner.prefix(while: { $0 != "." })
        return ("_" + owner.replacingOccurrences(of: ".", with: "_") + "_\(ownerEntity.count)", owner, owner == here)
    }

    /// An index the schema implies: a declared index, a uniqueness constraint, or an index on
    /// a foreign-key or join-table column.
    package struct Index: Sendable, Equatable {
        /// The index's name: the entity (or table) and the index joined with dots.
        package var name: String
        /// Its name in format 1 stores, which opening a format 1 store replaces.
        package var formerName: String
        package var table: String
        package var isUnique: Bool
        /// The quoted column list, with `DESC` where descending.
        package var columns: String
        /// A `WHERE` clause limiting the index to one entity's rows, or nothing.
        package var scope: String

        /// The statement that creates the index, exactly as SQLite records it in
        /// `sqlite_master`, so that an existing index can be compared with it.
        package var sql: String {
            "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(quoted(name)) ON \(quoted(table))(\(columns))\(scope)"
        }
    }

    package init(schema: Schema) {
        var columnsByTable: [String: [(String, String)]] = [:]
        // Each table's column positions by name: a root with thousands of subentities has as
        // many columns, and a search per column would make the layout quadratic.
        var columnPositions: [String: [String: Int]] = [:]
        var tableOrder: [String] = []
        func addColumn(_ table: String, _ name: String, _ type: String) {
            if let index = columnPositions[table]?[name] {
                // Sibling subentities may use one name for values of different types; such a
                // column gets no type affinity, so that SQLite stores each value as given.
                if columnsByTable[table]?[index].1 != type { columnsByTable[table]?[index].1 = "" }
            } else {
                columnPositions[table, default: [:]][name] = columnsByTable[table, default: []].count
                columnsByTable[table, default: []].append((name, type))
            }
        }
        for entity in schema.entities where entity.superentity == nil {
            tableOrder.append(entity.name)
            columnsByTable[entity.name] = [
                (Self.primaryKeyColumn, "INTEGER PRIMARY KEY AUTOINCREMENT"), (Self.entityColumn, "TEXT NOT NULL"),
                (Self.versionColumn, "INTEGER NOT NULL DEFAULT 1"),
            ]
            columnPositions[entity.name] = [Self.primaryKeyColumn: 0, Self.entityColumn: 1, Self.versionColumn: 2]
        }
        var joinTables: [Table] = []
        var joinTableNames: Set<String> = []
        var formerJoinTableNames: Set<String> = []
        for entity in schema.entities {
            let table = entity.rootEntity.name
            var layout = EntityLayout(
                table: table, kindNames: entity.kindNames.sorted(), attributeColumns: [], toOneColumns: [],
                toOneEntityColumns: [], toMany: [])
            for attribute in entity.attributes {
                guard !attribute.isTransient else {
                    layout.attributeColumns.append(nil)
                    continue
                }
                layout.attributeColumns.append(attribute.name)
                addColumn(table, attribute.name, Self.columnType(attribute.type))
            }
            for relationship in entity.relationships {
                if relationship.isTransient {
                    layout.toOneColumns.append(nil)
                    layout.toOneEntityColumns.append(nil)
                    layout.toMany.append(nil)
                    continue
                }
                let destination = schema.entity(named: relationship.destinationEntityName)
                let inverse = relationship.inverseName.flatMap { destination?.relationship(named: $0) }
                if !relationship.isToMany {
                    layout.toOneColumns.append(relationship.name)
                    addColumn(table, relationship.name, "INTEGER")
                    if let destination, destination.kindNames.count > 1 {
                        let column = "_\(relationship.name)_entity"
                        layout.toOneEntityColumns.append(column)
                        addColumn(table, column, "TEXT")
                    } else {
                        layout.toOneEntityColumns.append(nil)
                    }
                    layout.toMany.append(nil)
                    continue
                }
                layout.toOneColumns.append(nil)
                layout.toOneEntityColumns.append(nil)
                if let inverse, !inverse.isToMany, let destination {
                    let orderColumn = relationship.isOrdered ? "_\(inverse.name)_order" : nil
                    if let orderColumn { addColumn(destination.rootEntity.name, orderColumn, "INTEGER") }
                    layout.toMany.append(
                        .inverseColumn(
                            table: destination.rootEntity.name, column: inverse.name, orderColumn: orderColumn))
                    continue
                }
                // Many-to-many relationships share one join table, named after the side that
                // sorts first, as declared (an inherited relationship is stored with its
                // declaring entity's); a relationship without inverse has its own.
                let declaring = Self.declaringEntity(ofRelationship: relationship.name, in: entity)
                let here = "\(declaring.name).\(relationship.name)"
                let there = inverse.map { inverse in
                    let inverseOwner = destination.map { Self.declaringEntity(ofRelationship: inverse.name, in: $0).name }
                    return "\(inverseOwner ?? relationship.destinationEntityName).\(inverse.name)"
                }
                let (joinTable, owner, isOwner) = Self.joinTable(here: here, there: there)
                let ownerEntity = String(owner.prefix(while: { $0 != "." }))
                let positionHere = relationship.isOrdered ? (isOwner ? Self.joinPositionColumn : Self.joinInversePositionColumn) : nil
                let former = Self.joinTable(
                    here: "\(entity.name).\(relationship.name)",
                    there: inverse.map { "\(relationship.destinationEntityName).\($0.name)" })
                if former.name != joinTable, formerJoinTableNames.insert(former.name).inserted {
                    // Keys and positions keep their side: this entity's, and the other's.
                    func side(_ isOwner: Bool) -> [String] {
                        isOwner ? [Self.joinSourceColumn, Self.joinTargetColumn, Self.joinPositionColumn, Self.joinInversePositionColumn] : [Self.joinTargetColumn, Self.joinSourceColumn, Self.joinInversePositionColumn, Self.joinPositionColumn]
                    }
                    formerJoinTables.append(
                        FormerJoinTable(
                            name: former.name, table: joinTable,
                            columns: zip(side(former.isOwner), side(isOwner)).map { FormerJoinTable.Pair(from: $0, to: $1) }))
                }
                layout.toMany.append(
                    .joinTable(
                        table: joinTable, sourceColumn: isOwner ? Self.joinSourceColumn : Self.joinTargetColumn,
                        targetColumn: isOwner ? Self.joinTargetColumn : Self.joinSourceColumn, positionColumn: positionHere))
                if joinTableNames.insert(joinTable).inserted {
                    let ownerRoot = schema.entity(named: ownerEntity)?.rootEntity.name ?? table
                    let ownerRelationship = schema.entity(named: ownerEntity)?.relationship(
                        named: String(owner.drop(while: { $0 != "." }).dropFirst()))
                    let targetRoot =
                        ownerRelationship.flatMap { schema.entity(named: $0.destinationEntityName)?.rootEntity.name }
                        ?? table
                    joinColumnsByTable[ownerRoot, default: []].append((joinTable, Self.joinSourceColumn))
                    joinColumnsByTable[targetRoot, default: []].append((joinTable, Self.joinTargetColumn))
                    joinTables.append(
                        Table(
                            name: joinTable,
                            columns: [
                                (Self.joinSourceColumn, "INTEGER NOT NULL"), (Self.joinTargetColumn, "INTEGER NOT NULL"),
                                (Self.joinPositionColumn, "INTEGER"), (Self.joinInversePositionColumn, "INTEGER"),
                            ],
                            isJoinTable: true))
                    for column in [Self.joinSourceColumn, Self.joinTargetColumn] {
                        indexes.append(
                            Index(
                                name: "\(joinTable).\(column.dropFirst())", formerName: "\(joinTable)\(column)", table: joinTable,
                                isUnique: false, columns: quoted(column), scope: ""))
                    }
                }
            }
            entities[entity.name] = layout
        }
        tables = tableOrder.map { Table(name: $0, columns: columnsByTable[$0] ?? [], isJoinTable: false) } + joinTables
        // A former name that is a join table now too holds rows that belong there.
        formerJoinTables.removeAll { joinTableNames.contains($0.name) }

        // Indexes and uniqueness constraints, scoped to the entity and its subentities.
        for entity in schema.entities {
            guard let layout = entities[entity.name] else { continue }
            let ownIndexes = entity.indexes.filter { index in
                !(entity.superentity?.indexes.contains(where: { $0.name == index.name }) ?? false)
            }
            let scope = Self.scopeClause(for: layout, schemaEntity: entity)
            for index in ownIndexes {
                let columns = index.elements.map { quoted($0.propertyName) + ($0.isAscending ? "" : " DESC") }
                indexes.append(
                    Index(
                        name: "\(entity.name).\(index.name)", formerName: "\(entity.name)_\(index.name)", table: layout.table,
                        isUnique: false, columns: columns.joined(separator: ", "), scope: scope))
            }
            let ownConstraints = entity.declaration.uniquenessConstraints
            for (number, constraint) in ownConstraints.enumerated() {
                indexes.append(
                    Index(
                        name: "\(entity.name).unique.\(number)", formerName: "\(entity.name)_unique_\(number)", table: layout.table,
                        isUnique: true, columns: constraint.map(quoted).joined(separator: ", "), scope: scope))
            }
        }
        // A to-one column is looked up whenever the inverse to-many relationship is read.
        var foreignKeyIndexNames: Set<String> = []
        let entitiesByTable = Dictionary(grouping: schema.entities, by: { $0.rootEntity.name })
        for table in tables where !table.isJoinTable {
            for entity in entitiesByTable[table.name] ?? [] {
                for relationship in entity.declaration.relationships where !relationship.isToMany {
                    let name = "\(table.name).fk.\(relationship.name)"
                    if foreignKeyIndexNames.insert(name).inserted {
                        indexes.append(
                            Index(
                                name: name, formerName: "\(table.name)_fk_\(relationship.name)", table: table.name,
                                isUnique: false, columns: quoted(relationship.name), scope: ""))
                    }
                }
            }
        }
    }

    /// ` WHERE "_entity" IN ('A', 'B')` for an entity with siblings in its table, or nothing.
    /// Entity names are validated identifiers, so quoting them as literals is safe; DDL takes no
    /// bound parameters.
    package static func scopeClause(for layout: EntityLayout, schemaEntity entity: Entity) -> String {
        guard entity.superentity != nil || entity.rootEntity.kindNames.count != layout.kindNames.count else {
            return ""
        }
        return " WHERE \"\(entityColumn)\" IN (" + entityNameList(layout.kindNames) + ")"
    }

    package static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float, .date: "REAL"
        case .decimal, .string, .uri, .codable: "TEXT"
        case .binaryData, .uuid: "BLOB"
        }
    }

    /// The SQL that creates every table and index of a new store. No `IF NOT EXISTS`: in a new
    /// store an existing object would be a name collision, which must fail, not be skipped.
    package var creationStatements: [String] {
        tables.map(\.sql) + indexes.map(\.sql)
    }
}

/// Quotes an identifier for SQL. Identifiers come from validated schemas (no quotes inside);
/// doubling any quote keeps even an unexpected one harmless.
package func quoted(_ identifier: String) -> String {
    // No Foundation here: this runs for every statement a save builds.
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
}
