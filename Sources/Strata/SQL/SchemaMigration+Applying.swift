import Foundation

extension SchemaMigration {
    // MARK: Applying

    /// Where the links of one relationship live: a foreign-key column of the owner's table, the
    /// inverse's foreign-key column in the destination's table, or a join table.
    enum LinkStorage: Hashable {
        case column(table: String, column: String, kinds: [String])
        case inverseColumn(table: String, column: String, kinds: [String])
        case joinTable(table: String, source: String, target: String)
    }

    static func linkStorage(of relationshipIndex: Int, in entity: Entity, layout: StoreLayout, schema: Schema) -> LinkStorage? {
        guard let own = layout.entities[entity.name] else { return nil }
        if let column = own.toOneColumns[relationshipIndex] {
            return .column(table: own.table, column: column, kinds: own.kindNames)
        }
        switch own.toMany[relationshipIndex] {
        case .inverseColumn(let table, let column, _)?:
            let destination = schema.entity(named: entity.relationships[relationshipIndex].destinationEntityName)
            return .inverseColumn(table: table, column: column, kinds: destination.map { $0.kindNames.sorted() } ?? [])
        case .joinTable(let table, let source, let target, _)?:
            return .joinTable(table: table, source: source, target: target)
        case nil:
            return nil
        }
    }

    /// A relationship whose links move to storage of another kind.
    struct MovedLinks {
        var entity: String
        var relationship: String
        var old: LinkStorage
        var new: LinkStorage
        var temporaryTable: String
    }

    /// The relationships whose storage changes kind (to-one ↔ to-many, or an inverse that
    /// becomes or stops being to-one).
    private func movedLinks() -> [MovedLinks] {
        var moved: [MovedLinks] = []
        for entity in new.entities {
            guard let oldName = entityOrigin[entity.name], let oldEntity = old.entity(named: oldName) else { continue }
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
                // Inherited relationships are the declaring entity's.
                guard entity.superentity?.relationship(named: relationship.name) == nil,
                    let previousName = origin(ofProperty: relationship.name, renamingIdentifier: relationship.renamingIdentifier, in: entity),
                    let oldIndex = oldEntity.relationships.firstIndex(where: { $0.name == previousName }),
                    !oldEntity.relationships[oldIndex].isTransient,
                    let before = Self.linkStorage(of: oldIndex, in: oldEntity, layout: oldLayout, schema: old),
                    let after = Self.linkStorage(of: index, in: entity, layout: newLayout, schema: new)
                else { continue }
                let sameKind: Bool
                switch (before, after) {
                case (.column, .column), (.inverseColumn, .inverseColumn), (.joinTable, .joinTable): sameKind = true
                default: sameKind = false
                }
                guard !sameKind else { continue }
                moved.append(
                    MovedLinks(
                        entity: entity.name, relationship: relationship.name, old: before, new: after,
                        temporaryTable: "_strata_links_\(moved.count)"))
            }
        }
        return moved
    }

    /// Copies the links of `moved` into a temporary table of (owner key, destination key).
    ///
    /// - Returns: How statements name the temporary table.
    private func captureLinks(_ db: some SchemaMigrationDatabase, _ moved: MovedLinks) throws -> String {
        let links = try db.createLinkTable(moved.temporaryTable)
        let select: String
        switch moved.old {
        case .column(let table, let column, let kinds):
            select = "SELECT \(quoted(StoreLayout.primaryKeyColumn)), \(quoted(column)) FROM \(quoted(table)) WHERE \(quoted(column)) IS NOT NULL\(Self.kindsClause(kinds))"
        case .inverseColumn(let table, let column, let kinds):
            select = "SELECT \(quoted(column)), \(quoted(StoreLayout.primaryKeyColumn)) FROM \(quoted(table)) WHERE \(quoted(column)) IS NOT NULL\(Self.kindsClause(kinds))"
        case .joinTable(let table, let source, let target):
            select = "SELECT \(quoted(source)), \(quoted(target)) FROM \(quoted(table))"
        }
        try db.execute("INSERT INTO \(links) (a, b) \(select)", [])
        return links
    }

    /// Writes the captured links of `moved` into their new storage; refuses links a to-one
    /// side cannot hold (an object linked to several).
    private func restoreLinks(_ db: some SchemaMigrationDatabase, _ moved: MovedLinks, links: String) throws -> Int {
        defer { _ = try? db.execute("DROP TABLE \(links)", []) }
        func refuseSeveral(_ side: String) throws {
            let keys = try db.integers("SELECT \(side) FROM \(links) GROUP BY \(side) HAVING COUNT(*) > 1 LIMIT 5")
            guard keys.isEmpty else {
                throw StrataError(
                    .unsupportedMigration,
                    "\(moved.entity).\(moved.relationship) becomes to-one, but stored objects (rows \(keys.map(String.init).joined(separator: ", "))) are related to more than one object; keep one link each in a custom stage first. The store\(db.storeLocation) was not modified.",
                    entityName: moved.entity, propertyName: moved.relationship, fileURL: db.fileURL)
            }
        }
        let key = quoted(StoreLayout.primaryKeyColumn)
        switch moved.new {
        case .column(let table, let column, _):
            try refuseSeveral("a")
            return try db.execute(
                "UPDATE \(quoted(table)) SET \(quoted(column)) = (SELECT b FROM \(links) WHERE a = \(quoted(table)).\(key)) WHERE \(key) IN (SELECT a FROM \(links))", [])
        case .inverseColumn(let table, let column, _):
            try refuseSeveral("b")
            return try db.execute(
                "UPDATE \(quoted(table)) SET \(quoted(column)) = (SELECT a FROM \(links) WHERE b = \(quoted(table)).\(key)) WHERE \(key) IN (SELECT b FROM \(links))", [])
        case .joinTable(let table, let source, let target):
            return try db.execute(
                "INSERT INTO \(quoted(table)) (\(quoted(source)), \(quoted(target))) SELECT a, b FROM \(links) l WHERE NOT EXISTS (SELECT 1 FROM \(quoted(table)) j WHERE j.\(quoted(source)) = l.a AND j.\(quoted(target)) = l.b)", [])
        }
    }

    static func kindsClause(_ kinds: [String]) -> String {
        kinds.isEmpty ? "" : " AND \(quoted(StoreLayout.entityColumn)) IN (" + entityNameList(kinds) + ")"
    }

    /// Applies the step in `db`'s open transaction; returns the number of rows it changed.
    package func apply(_ db: some SchemaMigrationDatabase) throws -> Int {
        var rows = 0
        // Links whose storage changes kind are read before their old storage goes.
        let moved = movedLinks()
        var linkTables: [String] = []
        for links in moved { linkTables.append(try captureLinks(db, links)) }
        let oldTables = Dictionary(oldLayout.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let existingIndexes = try db.storedIndexes(onTables: Set(oldLayout.tables.map(\.name)))
        // Indexes are rebuilt from the new layout at the end; dropping them first frees the
        // columns they cover to be renamed or dropped. An index that stays as it is survives.
        let keptIndexNames = Set(newLayout.indexes.map(\.name))
        var droppedIndexes: Set<String> = []
        func dropIndex(_ name: String) throws {
            if droppedIndexes.insert(name).inserted { try db.execute("DROP INDEX IF EXISTS \(quoted(name))", []) }
        }
        for index in existingIndexes where !keptIndexNames.contains(index.name) { try dropIndex(index.name) }

        // Entity tables: each continues, in place, the table of the old hierarchy whose root it
        // holds (its own root's, or the one a new parent took in). The rows of entities that
        // left their hierarchy move to their new table first, while the old one has its old shape.
        var matchedOldTables: Set<String> = []
        var inPlace: [String: StoreLayout.Table] = [:]
        for table in newLayout.tables where !table.isJoinTable {
            if let oldRootName = inPlaceOrigin(ofTable: table.name), let oldTable = oldTables[oldRootName], !oldTable.isJoinTable {
                inPlace[table.name] = oldTable
            } else {
                try db.createTable(table)
            }
        }
        rows += try moveRowsBetweenTables(db, inPlace: inPlace)
        for table in newLayout.tables where !table.isJoinTable {
            guard let oldTable = inPlace[table.name] else { continue }
            matchedOldTables.insert(oldTable.name)
            if oldTable.name != table.name {
                try db.renameTable(oldTable.name, to: table.name)
            }
            rows += try migrateColumns(db, table: table, oldTable: oldTable, indexes: existingIndexes, dropIndex: dropIndex)
        }
        // Join tables: matched through the relationship they store.
        var joinOrigins: [String: (old: String, swapped: Bool)] = [:]
        for entity in new.entities {
            guard let oldName = entityOrigin[entity.name], let oldEntity = old.entity(named: oldName),
                let layout = newLayout.entities[entity.name], let oldEntityLayout = oldLayout.entities[oldName]
            else { continue }
            for (index, relationship) in entity.relationships.enumerated() {
                guard case .joinTable(let table, let source, _, _) = layout.toMany[index],
                    let previousName = origin(
                        ofProperty: relationship.name, renamingIdentifier: relationship.renamingIdentifier, in: entity),
                    let oldIndex = oldEntity.relationships.firstIndex(where: { $0.name == previousName }),
                    case .joinTable(let oldTable, let oldSource, _, _) = oldEntityLayout.toMany[oldIndex]
                else { continue }
                joinOrigins[table] = (oldTable, source != oldSource)
            }
        }
        for table in newLayout.tables where table.isJoinTable {
            guard let origin = joinOrigins[table.name], oldTables[origin.old] != nil, !matchedOldTables.contains(origin.old)
            else {
                try db.createTable(table)
                continue
            }
            matchedOldTables.insert(origin.old)
            if origin.old != table.name {
                try db.renameTable(origin.old, to: table.name)
            }
            if origin.swapped {
                let pairs = [
                    (StoreLayout.joinSourceColumn, StoreLayout.joinTargetColumn),
                    (StoreLayout.joinPositionColumn, StoreLayout.joinInversePositionColumn),
                ]
                for index in existingIndexes where index.table == origin.old || index.table == table.name {
                    try dropIndex(index.name)
                }
                for (first, second) in pairs {
                    try db.execute("ALTER TABLE \(quoted(table.name)) RENAME COLUMN \(quoted(first)) TO \"_swapping\"", [])
                    try db.execute("ALTER TABLE \(quoted(table.name)) RENAME COLUMN \(quoted(second)) TO \(quoted(first))", [])
                    try db.execute("ALTER TABLE \(quoted(table.name)) RENAME COLUMN \"_swapping\" TO \(quoted(second))", [])
                }
            }
        }
        for table in oldLayout.tables where !matchedOldTables.contains(table.name) {
            try db.dropTable(table.name)
        }

        // Rows of removed subentities go.
        for entity in old.entities {
            let continued = new.entities.first { entityOrigin[$0.name] == entity.name }
            let table = new.entity(named: entityOrigin.first { $0.value == entity.rootEntity.name }?.key ?? "")?.rootEntity.name
            guard let table else { continue }
            if continued == nil {
                // What points at the removed objects lets go of them first (nullify).
                let removed = "SELECT \(quoted(StoreLayout.primaryKeyColumn)) FROM \(quoted(table)) WHERE \(quoted(StoreLayout.entityColumn)) = \(db.placeholder(1))"
                for other in new.entities {
                    guard let layout = newLayout.entities[other.name] else { continue }
                    for (index, relationship) in other.relationships.enumerated() {
                        guard let column = layout.toOneColumns[index],
                            new.entity(named: relationship.destinationEntityName)?.rootEntity.name == table
                        else { continue }
                        let entityColumn = layout.toOneEntityColumns[index].map { ", \(quoted($0)) = NULL" } ?? ""
                        rows += try update(
                            db, "UPDATE \(quoted(layout.table)) SET \(quoted(column)) = NULL\(entityColumn) WHERE \(quoted(column)) IN (\(removed))",
                            [.string(entity.name)])
                    }
                }
                for (joinTable, column) in newLayout.joinColumnsByTable[table] ?? [] {
                    rows += try update(
                        db, "DELETE FROM \(quoted(joinTable)) WHERE \(quoted(column)) IN (\(removed))", [.string(entity.name)])
                }
                rows += try update(
                    db, "DELETE FROM \(quoted(table)) WHERE \(quoted(StoreLayout.entityColumn)) = \(db.placeholder(1))", [.string(entity.name)])
            }
        }

        // After removed entities' rows went (a removed entity's name may be a new name now),
        // renamed entities keep their rows under their new names: one mapping for all of them
        // at once, so that a chain of renames (Long → Short, Short → Brief) renames each row once.
        let renames = new.entities.compactMap { entity -> (old: String, new: String)? in
            guard let previous = entityOrigin[entity.name], previous != entity.name else { return nil }
            return (previous, entity.name)
        }
        if !renames.isEmpty {
            let cases = renames.map { " WHEN '\($0.old)' THEN '\($0.new)'" }.joined()
            let olds = renames.map { "'\($0.old)'" }.joined(separator: ", ")
            for table in newLayout.tables where !table.isJoinTable {
                for column in table.columns where column.name.hasPrefix("_") && column.name.hasSuffix("_entity") {
                    let name = quoted(column.name)
                    rows += try update(
                        db, "UPDATE \(quoted(table.name)) SET \(name) = CASE \(name)\(cases) END WHERE \(name) IN (\(olds))", [])
                }
            }
        }
        // Values every row of an entity must have now: defaults for new attributes (optional
        // ones too, as Core Data fills them) and for newly required ones.
        for entity in new.entities {
            // Rows that are this entity's now: of its kinds that existed (a new parent over an
            // existing entity has some), and of the kinds it gained (an entity moved under it).
            guard let layout = newLayout.entities[entity.name], entity.kindNames.contains(where: { entityOrigin[$0] != nil })
            else { continue }
            let oldEntity = old.entity(named: entityOrigin[entity.name] ?? "")
            let gainedKinds = entity.kindNames.filter { kind in
                guard let origin = entityOrigin[kind] else { return false }
                return oldEntity?.kindNames.contains(origin) != true
            }
            for (index, attribute) in entity.attributes.enumerated()
            where !attribute.isOptional || attribute.defaultValue != .null {
                guard let column = layout.attributeColumns[index],
                    entity.superentity?.attribute(named: attribute.name) == nil  // the declaring entity fills it
                else { continue }
                let previousName = origin(ofProperty: attribute.name, renamingIdentifier: attribute.renamingIdentifier, in: entity)
                let previous = previousName.flatMap { oldEntity?.attribute(named: $0) }
                var kinds = entity.kindNames
                if let previous, !previous.isTransient, !previous.isOptional || attribute.isOptional {
                    // Rows that had it keep their values (an optional one its missing values
                    // too); rows of kinds new to the entity need one.
                    guard !gainedKinds.isEmpty else { continue }
                    kinds = Set(gainedKinds)
                }
                let scope =
                    " AND \(quoted(StoreLayout.entityColumn)) IN (" + entityNameList(kinds.sorted())
                    + ")"
                if attribute.defaultValue == .null {
                    let missing =
                        try db.integers("SELECT COUNT(*) FROM \(quoted(layout.table)) WHERE \(quoted(column)) IS NULL\(scope)").first ?? 0
                    guard missing == 0 else {
                        throw StrataError(
                            .unsupportedMigration,
                            "\(entity.name).\(attribute.name) is required now and has no default value, and \(missing) stored \(entity.name) object\(missing == 1 ? " has" : "s have") none; give it a default value or fill it in a custom stage.",
                            entityName: entity.name, propertyName: attribute.name)
                    }
                    continue
                }
                rows += try update(
                    db, "UPDATE \(quoted(layout.table)) SET \(quoted(column)) = \(db.placeholder(1)) WHERE \(quoted(column)) IS NULL\(scope)",
                    [attribute.defaultValue])
            }
        }

        for (links, table) in zip(moved, linkTables) { rows += try restoreLinks(db, links, links: table) }
        rows += try releaseLinksToDepartedKinds(db)
        // To-one columns that name their target's entity (added when the destination gained
        // subentities, or when links moved into the column) are filled from the targets.
        for entity in new.entities {
            guard let layout = newLayout.entities[entity.name] else { continue }
            for (index, relationship) in entity.relationships.enumerated() {
                guard let column = layout.toOneColumns[index], let entityColumn = layout.toOneEntityColumns[index],
                    let destination = new.entity(named: relationship.destinationEntityName)
                else { continue }
                let table = quoted(layout.table)
                let destinationTable = quoted(destination.rootEntity.name)
                rows += try update(
                    db,
                    "UPDATE \(table) SET \(quoted(entityColumn)) = (SELECT \(quoted(StoreLayout.entityColumn)) FROM \(destinationTable) WHERE \(destinationTable).\(quoted(StoreLayout.primaryKeyColumn)) = \(table).\(quoted(column))) WHERE \(quoted(column)) IS NOT NULL AND \(quoted(entityColumn)) IS NULL",
                    [])
            }
        }

        // Indexes and uniqueness constraints of the new layout; data that breaks a new
        // uniqueness constraint is named.
        let stored = try db.storedIndexes(onTables: Set(newLayout.tables.map(\.name)))
        let storedNames = Set(stored.map(\.name))
        let current = Dictionary(stored.compactMap { index in index.sql.map { (index.name, $0) } }, uniquingKeysWith: { first, _ in first })
        for index in newLayout.indexes where current[index.name] != index.sql {
            if storedNames.contains(index.name) { try db.execute("DROP INDEX \(quoted(index.name))", []) }
            guard try db.createIndex(index) else { throw try duplicateError(db, index: index) }
        }
        return rows
    }

    func update(_ db: some SchemaMigrationDatabase, _ sql: String, _ arguments: [AttributeValue]) throws -> Int {
        try db.execute(sql, arguments)
    }

    /// The error for a uniqueness constraint the stored rows break, naming some of them.
    private func duplicateError(_ db: some SchemaMigrationDatabase, index: StoreLayout.Index) throws -> StrataError {
        let scope = index.scope.isEmpty ? "" : " WHERE" + index.scope.dropFirst(" WHERE".count)
        let groups = try db.texts(
            "SELECT \(db.commaSeparated(quoted(StoreLayout.primaryKeyColumn))) FROM \(quoted(index.table))\(scope) "
                + "GROUP BY \(index.columns) HAVING COUNT(*) > 1 LIMIT 5")
        return StrataError(
            .constraintConflict,
            "The store\(db.storeLocation) holds rows of \(index.table) that share values of (\(index.columns)), which the new schema requires to be unique: \(groups.map { "rows \($0)" }.joined(separator: "; ")). Remove or change the duplicates (in a custom stage, or before migrating). The store was not modified.",
            entityName: index.table, fileURL: db.fileURL)
    }
}
