import Foundation

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
    func origin(ofProperty property: String, renamingIdentifier: String?, in entity: Entity) -> String? {
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
}
