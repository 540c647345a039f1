import Foundation

extension SchemaMigration {
    // MARK: Hierarchy changes

    /// The old root entity whose table the new table `name` continues in place: the one old
    /// root that an entity of the new hierarchy continues (``check()`` refuses two).
    func inPlaceOrigin(ofTable name: String) -> String? {
        for entity in new.entities where entity.rootEntity.name == name {
            if let originName = entityOrigin[entity.name], let previous = old.entity(named: originName), previous.superentity == nil {
                return originName
            }
        }
        return nil
    }

    /// The old name of every kind of `entity` (itself and its subentities) in the old schema.
    private func oldKinds(of entity: Entity) -> Set<String> {
        guard let originName = entityOrigin[entity.name], let previous = old.entity(named: originName) else { return [] }
        return previous.kindNames
    }

    /// Moves the rows of entities whose table changes (an entity that left its hierarchy, or
    /// joined a new one apart from its old root) from their old table into their new one, and
    /// deletes them from the old; keys stay, so object IDs and links stay valid.
    func moveRowsBetweenTables(_ db: some SchemaMigrationDatabase, inPlace: [String: StoreLayout.Table]) throws -> Int {
        var rows = 0
        for table in newLayout.tables where !table.isJoinTable && inPlace[table.name] == nil {
            // Entities of the new table that existed: all come from one old table (check()).
            let movers = new.entities.filter { $0.rootEntity.name == table.name && entityOrigin[$0.name] != nil }
            guard let first = movers.first, let firstOrigin = entityOrigin[first.name],
                let source = old.entity(named: firstOrigin)?.rootEntity.name
            else { continue }
            let oldColumns = Set(oldLayout.tables.first { $0.name == source }?.columns.map(\.name) ?? [])
            var targets: [String] = []
            var values: [String] = []
            for column in table.columns {
                let name = column.name
                var origin: String?
                if [StoreLayout.primaryKeyColumn, StoreLayout.versionColumn].contains(name) {
                    origin = name
                } else if name == StoreLayout.entityColumn {
                    origin = name  // renamed entities take their new names with all the others, later
                } else {
                    var property = name
                    var suffix = ""
                    for marker in ["_entity", "_order"] where name.hasPrefix("_") && name.hasSuffix(marker) {
                        property = String(name.dropFirst().dropLast(marker.count))
                        suffix = marker
                    }
                    for mover in movers where mover.attribute(named: property) != nil || mover.relationship(named: property) != nil {
                        let renaming = mover.attribute(named: property)?.renamingIdentifier ?? mover.relationship(named: property)?.renamingIdentifier
                        if let previous = self.origin(ofProperty: property, renamingIdentifier: renaming, in: mover) {
                            origin = suffix.isEmpty ? previous : "_\(previous)\(suffix)"
                            break
                        }
                    }
                }
                guard let origin, oldColumns.contains(origin) else { continue }
                targets.append(quoted(name))
                values.append(quoted(origin))
            }
            let kinds = entityNameList(movers.compactMap { entityOrigin[$0.name] }.sorted())
            // Keys never come back: the new table counts on from the highest key the old one
            // ever gave (its objects' IDs, deleted ones' included, stay unique).
            rows += try db.execute(
                "INSERT INTO \(quoted(table.name)) (\(targets.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(quoted(source)) WHERE \(quoted(StoreLayout.entityColumn)) IN (\(kinds))",
                [])
            try db.continueKeys(of: table.name, from: source)
            try db.execute("DELETE FROM \(quoted(source)) WHERE \(quoted(StoreLayout.entityColumn)) IN (\(kinds))", [])
        }
        return rows
    }

    /// Lets go of links to objects that are no longer of a relationship's destination (their
    /// entity left the destination's hierarchy), as a nullify delete rule would: to-one keys
    /// become NULL and join rows go. Only relationships whose ends lost kinds are looked at.
    func releaseLinksToDepartedKinds(_ db: some SchemaMigrationDatabase) throws -> Int {
        func lostKinds(_ entity: Entity) -> Bool {
            let now = Set(entity.kindNames.compactMap { entityOrigin[$0] })
            return !oldKinds(of: entity).isSubset(of: now)
        }
        func keys(of entity: Entity) -> String {
            "SELECT \(quoted(StoreLayout.primaryKeyColumn)) FROM \(quoted(entity.rootEntity.name)) WHERE \(quoted(StoreLayout.entityColumn)) IN ("
                + entityNameList(entity.kindNames.sorted()) + ")"
        }
        var rows = 0
        var seenJoinTables: Set<String> = []
        for entity in new.entities {
            guard let layout = newLayout.entities[entity.name] else { continue }
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
                guard entity.superentity?.relationship(named: relationship.name) == nil,  // the declaring entity's
                    let destination = new.entity(named: relationship.destinationEntityName)
                else { continue }
                if let column = layout.toOneColumns[index], lostKinds(destination) {
                    let dangling = "\(quoted(column)) IS NOT NULL AND \(quoted(column)) NOT IN (\(keys(of: destination)))\(Self.kindsClause(layout.kindNames))"
                    if !relationship.isOptional {
                        let count = try db.integers("SELECT COUNT(*) FROM \(quoted(layout.table)) WHERE \(dangling)").first ?? 0
                        guard count == 0 else {
                            throw StrataError(
                                .unsupportedMigration,
                                "\(entity.name).\(relationship.name) is required, and \(count) stored \(entity.name) object\(count == 1 ? " points" : "s point") at objects that are no longer \(destination.name)s; point them elsewhere in a custom stage. The store was not modified.",
                                entityName: entity.name, propertyName: relationship.name)
                        }
                    }
                    let entityColumn = layout.toOneEntityColumns[index].map { ", \(quoted($0)) = NULL" } ?? ""
                    rows += try update(
                        db,
                        "UPDATE \(quoted(layout.table)) SET \(quoted(column)) = NULL\(entityColumn) WHERE \(quoted(column)) IS NOT NULL AND \(quoted(column)) NOT IN (\(keys(of: destination)))\(Self.kindsClause(layout.kindNames))",
                        [])
                }
                if case .joinTable(let table, let source, let target, _)? = layout.toMany[index], seenJoinTables.insert(table).inserted {
                    if lostKinds(entity) {
                        rows += try update(db, "DELETE FROM \(quoted(table)) WHERE \(quoted(source)) NOT IN (\(keys(of: entity)))", [])
                    }
                    if lostKinds(destination) {
                        rows += try update(db, "DELETE FROM \(quoted(table)) WHERE \(quoted(target)) NOT IN (\(keys(of: destination)))", [])
                    }
                }
            }
        }
        return rows
    }

    /// Renames, adds and drops the columns of one entity table.
    func migrateColumns(
        _ db: some SchemaMigrationDatabase, table: StoreLayout.Table, oldTable: StoreLayout.Table, indexes: [StoredIndex],
        dropIndex: (String) throws -> Void
    ) throws -> Int {
        let oldColumns = Set(oldTable.columns.map(\.name))
        var origins: [String: String] = [:]  // new column → old column
        let entities = new.entities.filter { $0.rootEntity.name == table.name }
        func originOfProperty(_ name: String) -> String? {
            for entity in entities {
                let renaming =
                    entity.attribute(named: name)?.renamingIdentifier ?? entity.relationship(named: name)?.renamingIdentifier
                guard entity.attribute(named: name) != nil || entity.relationship(named: name) != nil else { continue }
                if let previous = origin(ofProperty: name, renamingIdentifier: renaming, in: entity) { return previous }
            }
            return nil
        }
        for column in table.columns {
            let name = column.name
            if [StoreLayout.primaryKeyColumn, StoreLayout.entityColumn, StoreLayout.versionColumn].contains(name) {
                origins[name] = name
            } else if name.hasPrefix("_"), name.hasSuffix("_entity") {
                let relationship = String(name.dropFirst().dropLast("_entity".count))
                origins[name] = originOfProperty(relationship).map { "_\($0)_entity" }
            } else if name.hasPrefix("_"), name.hasSuffix("_order") {
                let relationship = String(name.dropFirst().dropLast("_order".count))
                origins[name] = originOfProperty(relationship).map { "_\($0)_order" }
            } else {
                origins[name] = originOfProperty(name)
            }
        }
        for (column, origin) in origins where !oldColumns.contains(origin) { origins[column] = nil }
        let renamed = origins.filter { $0.key != $0.value }
        let kept = Set(origins.values)
        let dropped = oldColumns.subtracting(kept)
        // Columns an index covers cannot be dropped (in SQLite); renamed ones carry their
        // indexes along, so those indexes stay and are not rebuilt. An index whose statement
        // is not recorded goes (and is rebuilt if the new layout has it).
        for index in indexes where index.table == oldTable.name || index.table == table.name {
            if dropped.contains(where: { index.sql?.contains(quoted($0)) ?? true }) { try dropIndex(index.name) }
        }
        for column in dropped.sorted() {
            try db.execute("ALTER TABLE \(quoted(table.name)) DROP COLUMN \(quoted(column))", [])
        }
        // Two passes, so that names may be swapped.
        for (number, (_, origin)) in renamed.sorted(by: { $0.key < $1.key }).enumerated() {
            try db.execute("ALTER TABLE \(quoted(table.name)) RENAME COLUMN \(quoted(origin)) TO \"_renaming_\(number)\"", [])
        }
        for (number, (column, _)) in renamed.sorted(by: { $0.key < $1.key }).enumerated() {
            try db.execute("ALTER TABLE \(quoted(table.name)) RENAME COLUMN \"_renaming_\(number)\" TO \(quoted(column))", [])
        }
        for column in table.columns where origins[column.name] == nil {
            try db.addColumn(column.name, to: table.name)
        }
        return 0
    }
}
