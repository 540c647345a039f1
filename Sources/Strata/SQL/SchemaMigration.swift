import Foundation

/// What a lightweight migration step needs from an SQL store's database, inside the
/// transaction the step runs in: statements, a few reads, and the places where SQL dialects
/// differ (column types, key sequences, temporary tables, how indexes are recorded).
package protocol SchemaMigrationDatabase {
    /// Where the store is, for messages: " at PATH" or " in SCHEMA of SERVER" (with the space).
    var storeLocation: String { get }
    /// The store's file, for errors; `nil` for stores that are not files.
    var fileURL: URL? { get }
    /// The placeholder of the `number`th bound value (from 1): `?` or `$1`.
    func placeholder(_ number: Int) -> String
    /// Runs one statement with `arguments` bound to its placeholders.
    ///
    /// - Returns: The number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [AttributeValue]) throws -> Int
    /// The integers in the first column of the rows `sql` returns.
    func integers(_ sql: String) throws -> [Int64]
    /// The text in the first column of the rows `sql` returns.
    func texts(_ sql: String) throws -> [String]
    /// The store's indexes on `tables` (not those that back a primary key), each with the
    /// statement that created it when known.
    func storedIndexes(onTables tables: Set<String>) throws -> [StoredIndex]
    /// Creates `index`; returns `false`, creating nothing and leaving the transaction usable,
    /// when stored rows break its uniqueness.
    func createIndex(_ index: StoreLayout.Index) throws -> Bool
    /// Creates a table of the new layout (and what it needs to give keys).
    func createTable(_ table: StoreLayout.Table) throws
    /// Renames a table (and what gives its keys).
    func renameTable(_ name: String, to newName: String) throws
    /// Drops a table of the old layout, if it is there (and what gave its keys).
    func dropTable(_ name: String) throws
    /// Adds a column of the new layout to `table`, with the type that layout gives it.
    func addColumn(_ column: String, to table: String) throws
    /// Makes the keys of `table` count on from the highest key `oldTable` ever gave.
    func continueKeys(of table: String, from oldTable: String) throws
    /// Creates a temporary table of two integer columns, `a` and `b`, for the step's duration.
    ///
    /// - Returns: How statements name it.
    func createLinkTable(_ name: String) throws -> String
    /// An aggregate of a column's values joined by commas.
    func commaSeparated(_ expression: String) -> String
}

/// An index as the store records it.
package struct StoredIndex: Sendable {
    package var name: String
    package var table: String
    /// The statement that made it (``StoreLayout/Index/sql``), or `nil` when the store does
    /// not record it (the index is then rebuilt).
    package var sql: String?

    package init(name: String, table: String, sql: String?) {
        self.name = name
        self.table = table
        self.sql = sql
    }
}

/// One lightweight migration step of an SQL store, from the schema it was written with to the
/// next, inferred from the two schemas (renames by renaming identifiers) and applied as
/// `ALTER TABLE` statements and updates inside the caller's transaction: tables and columns are
/// renamed, added and dropped in place, so the cost follows what changed, not the store's size.
/// The SQLite and PostgreSQL stores run the same steps through ``SchemaMigrationDatabase``.
///
/// What cannot be inferred throws ``StrataError/Code/unsupportedMigration`` naming the change,
/// before anything is written.
package struct SchemaMigration {
    package let old: Schema
    package let new: Schema
    package let oldLayout: StoreLayout
    package let newLayout: StoreLayout
    /// New entity name → the old entity it continues.
    private(set) var entityOrigin: [String: String] = [:]

    package init(from old: Schema, to new: Schema) throws {
        self.old = old
        self.new = new
        oldLayout = StoreLayout(schema: old)
        newLayout = StoreLayout(schema: new)
        // As in Core Data, a renaming identifier wins over a name the old schema also has.
        for entity in new.entities {
            if let previous = entity.declaration.renamingIdentifier, old.entity(named: previous) != nil {
                entityOrigin[entity.name] = previous
            } else if old.entity(named: entity.name) != nil {
                entityOrigin[entity.name] = entity.name
            }
        }
        let claimed = Dictionary(grouping: entityOrigin, by: \.value).filter { $0.value.count > 1 }
        if let (oldName, claims) = claimed.min(by: { $0.key < $1.key }) {
            throw StrataError(
                .unsupportedMigration,
                "Entities \(claims.map(\.key).sorted().joined(separator: " and ")) both continue \(oldName) (by name or renaming identifier); give only one of them \(oldName)'s identity.")
        }
        try check()
    }

    /// The property of the old entity that `property` of `entity` continues, if any.
    private func origin(ofProperty property: String, renamingIdentifier: String?, in entity: Entity) -> String? {
        guard let oldName = entityOrigin[entity.name], let oldEntity = old.entity(named: oldName) else { return nil }
        if let previous = renamingIdentifier,
            oldEntity.attribute(named: previous) != nil || oldEntity.relationship(named: previous) != nil
        {
            return previous
        }
        if oldEntity.attribute(named: property) != nil || oldEntity.relationship(named: property) != nil { return property }
        return nil
    }

    private func unsupported(_ change: String) -> StrataError {
        StrataError(
            .unsupportedMigration,
            "The change \(change) cannot be inferred by a lightweight migration; migrate it in a custom stage (code before and after the schema change).")
    }

    /// Refuses the changes a lightweight step cannot make.
    private func check() throws {
        for entity in new.entities {
            var claims: [String: [String]] = [:]
            for property in entity.attributes.map({ ($0.name, $0.renamingIdentifier) })
                + entity.relationships.map({ ($0.name, $0.renamingIdentifier) })
            {
                if let previous = origin(ofProperty: property.0, renamingIdentifier: property.1, in: entity) {
                    claims[previous, default: []].append(property.0)
                }
            }
            if let (previous, names) = claims.first(where: { $0.value.count > 1 }) {
                throw unsupported(
                    "\"\(names.sorted().joined(separator: " and ")) of \(entity.name) both continue \(previous)\" (by name or renaming identifier)")
            }
        }
        // Sibling subentities share a table, and a column per property name: each column must
        // keep one meaning for all of them.
        var originsByColumn: [String: Set<String>] = [:]  // "table.new" → old columns
        var targetsByColumn: [String: Set<String>] = [:]  // "table.old" → new columns
        for entity in new.entities {
            guard let layout = newLayout.entities[entity.name] else { continue }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let previous = origin(ofProperty: attribute.name, renamingIdentifier: attribute.renamingIdentifier, in: entity)
                else { continue }
                originsByColumn["\(layout.table).\(attribute.name)", default: []].insert(previous)
                targetsByColumn["\(layout.table).\(previous)", default: []].insert(attribute.name)
            }
        }
        if let (column, origins) = originsByColumn.first(where: { $0.value.count > 1 }) {
            throw unsupported("\"\(column) would continue several columns (\(origins.sorted().joined(separator: ", "))) of sibling entities\"")
        }
        if let (column, targets) = targetsByColumn.first(where: { $0.value.count > 1 }) {
            throw unsupported("\"\(column) would split into \(targets.sorted().joined(separator: ", ")) for sibling entities\"")
        }
        // Hierarchies may gain a new parent, lose entities, and move entities within them (as
        // Core Data infers); two existing hierarchies cannot become one (their keys would clash).
        for root in new.entities where root.superentity == nil {
            let sources = Set(
                new.entities.filter { $0.rootEntity.name == root.name }.compactMap { entity in
                    entityOrigin[entity.name].flatMap { old.entity(named: $0)?.rootEntity.name }
                })
            if sources.count > 1 {
                throw unsupported(
                    "\"\(root.name)'s hierarchy would merge the hierarchies of \(sources.sorted().joined(separator: " and "))\" (entities of two hierarchies cannot come to share a parent)")
            }
        }
        let oldTableNames = Set(old.entities.filter { $0.superentity == nil }.map(\.name))
        for root in new.entities where root.superentity == nil {
            let inPlace = inPlaceOrigin(ofTable: root.name)
            // The new table would be created while the old one of that name is still there.
            if inPlace != root.name, oldTableNames.contains(root.name) {
                throw unsupported("\"\(root.name) takes the table of the old \(root.name) hierarchy for other objects\"")
            }
        }
        for entity in new.entities {
            guard let oldName = entityOrigin[entity.name], let oldEntity = old.entity(named: oldName) else { continue }
            // An entity that changes table takes its rows along; to-many links it inherited
            // live outside its rows (a join table or the destination's column of the old
            // declaring entity), and moving them is not inferred.
            if oldEntity.rootEntity.name != (inPlaceOrigin(ofTable: entity.rootEntity.name) ?? "") {
                for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                    guard let previousName = origin(ofProperty: relationship.name, renamingIdentifier: relationship.renamingIdentifier, in: entity),
                        oldEntity.relationship(named: previousName) != nil
                    else { continue }
                    let declaredBefore = StoreLayout.declaringEntity(ofRelationship: previousName, in: oldEntity).name
                    let declaredNow = StoreLayout.declaringEntity(ofRelationship: relationship.name, in: entity).name
                    if entityOrigin[declaredNow] != declaredBefore {
                        throw unsupported(
                            "\"\(entity.name).\(relationship.name), which \(entity.name) inherited from \(declaredBefore), moves with \(entity.name) out of its hierarchy\" (its links are stored with \(declaredBefore))")
                    }
                }
            }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let previousName = origin(ofProperty: attribute.name, renamingIdentifier: attribute.renamingIdentifier, in: entity)
                else { continue }
                if oldEntity.relationship(named: previousName) != nil {
                    throw unsupported("\"\(entity.name).\(attribute.name) becomes an attribute (it was a relationship)\"")
                }
                guard let previous = oldEntity.attribute(named: previousName), !previous.isTransient else { continue }
                if previous.type != attribute.type && !Self.widens(previous.type, to: attribute.type) {
                    throw unsupported(
                        "\"\(entity.name).\(attribute.name) changes type from \(previous.type) to \(attribute.type)\"")
                }
            }
            for relationship in entity.relationships where !relationship.isTransient {
                guard
                    let previousName = origin(
                        ofProperty: relationship.name, renamingIdentifier: relationship.renamingIdentifier, in: entity)
                else { continue }
                if oldEntity.attribute(named: previousName) != nil {
                    throw unsupported("\"\(entity.name).\(relationship.name) becomes a relationship (it was an attribute)\"")
                }
                guard let previous = oldEntity.relationship(named: previousName), !previous.isTransient else { continue }
                if entityOrigin[relationship.destinationEntityName] != previous.destinationEntityName {
                    throw unsupported(
                        "\"\(entity.name).\(relationship.name) changes destination from \(previous.destinationEntityName) to \(relationship.destinationEntityName)\"")
                }
                let oldInverse = previous.inverseName.flatMap { old.entity(named: previous.destinationEntityName)?.relationship(named: $0) }
                let newInverse = relationship.inverseName.flatMap {
                    new.entity(named: relationship.destinationEntityName)?.relationship(named: $0)
                }
                let storageChanges =
                    previous.isToMany != relationship.isToMany
                    || (relationship.isToMany && (oldInverse?.isToMany == false) != (newInverse?.isToMany == false))
                if storageChanges, previous.isOrdered || relationship.isOrdered {
                    throw unsupported(
                        "\"\(entity.name).\(relationship.name) changes how an ordered relationship is stored\"")
                }
                if previous.isOrdered != relationship.isOrdered {
                    throw unsupported("\"\(entity.name).\(relationship.name) becomes \(relationship.isOrdered ? "ordered" : "unordered")\"")
                }
            }
        }
    }

    /// Whether `old` values keep their meaning as `new` values (integer widening).
    static func widens(_ old: AttributeType, to new: AttributeType) -> Bool {
        let order: [AttributeType] = [.integer16, .integer32, .integer64]
        guard let from = order.firstIndex(of: old), let to = order.firstIndex(of: new) else { return false }
        return from <= to
    }

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

    // MARK: Hierarchy changes

    /// The old root entity whose table the new table `name` continues in place: the one old
    /// root that an entity of the new hierarchy continues (``check()`` refuses two).
    private func inPlaceOrigin(ofTable name: String) -> String? {
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
    private func moveRowsBetweenTables(_ db: some SchemaMigrationDatabase, inPlace: [String: StoreLayout.Table]) throws -> Int {
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
    private func releaseLinksToDepartedKinds(_ db: some SchemaMigrationDatabase) throws -> Int {
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
    private func migrateColumns(
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

    private func update(_ db: some SchemaMigrationDatabase, _ sql: String, _ arguments: [AttributeValue]) throws -> Int {
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
