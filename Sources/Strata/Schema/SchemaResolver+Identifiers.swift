import Foundation

// SQLite compares the names of tables, columns and indexes ignoring the case of ASCII letters
// (`Thing` and `thing` are one table; `name` and `Name` are one column), and reserves names that
// start with `sqlite_` in any case. Stores make their tables, columns and indexes from the
// schema's names, so the schema refuses names that would meet in SQL:
//
// - entity names (an entity's name names its table if it is a root, and prefixes its indexes
//   and join tables in any case);
// - the stored attributes and to-one relationships of all the entities that share a table (a
//   root and every subentity: single-table inheritance), which become its columns;
// - the many-to-many relationships (and to-many ones without an inverse) of one entity, which
//   name their join tables;
// - the index names of one entity, declared or added for an indexed attribute.
//
// Each collision is one problem naming every name involved. A collision that follows from
// another one (the columns of `Thing` and `thing` once those two entities collide) is not
// reported again: renaming the entity fixes both.

extension SchemaResolver {
    /// Reports names that differ only in ASCII letter case where SQL would treat them as one,
    /// and entity names SQLite reserves.
    ///
    /// - Complexity: Linear in the number of entities and properties.
    mutating func reportIdentifierCollisions(in entities: [Entity]) {
        // Entities, in declaration order.
        var entityNames = CaseCollisions()
        for entity in entities {
            entityNames.add(entity.name, as: entity.name, owner: entity.name)
            if entity.name.utf8.starts(with: "sqlite_".utf8, by: { asciiLowercased($0) == $1 }) {
                problem(
                    .reservedName,
                    "Entity name '\(entity.name)' starts with 'sqlite_', which SQLite reserves for its own tables and "
                        + "indexes (in any letter case); rename the entity.",
                    entity: entity.name)
            }
        }
        for collision in entityNames.collisions {
            problem(
                .identifierCollision,
                "Entities \(collision.spellings) differ only in letter case. SQLite ignores the case of letters in "
                    + "names, so their tables, indexes and join tables would be the same; \(collision.advice)",
                entity: collision.later.owner)
        }

        // Columns of each table: the attributes and to-one relationships its entities declare.
        var entitiesByTable: [String: [Entity]] = [:]
        var tables: [String] = []
        for entity in entities {
            let table = entity.rootEntity.name
            if entitiesByTable[table] == nil { tables.append(table) }
            entitiesByTable[table, default: []].append(entity)
        }
        for table in tables {
            var columns = CaseCollisions()
            for entity in entitiesByTable[table] ?? [] {
                for attribute in entity.declaration.attributes where !attribute.isTransient {
                    columns.add(
                        attribute.name, as: "\(entity.name).\(attribute.name)", owner: entity.name,
                        property: attribute.name)
                }
                let inherited = entity.superentity?.relationships.count ?? 0
                for relationship in entity.relationships.dropFirst(inherited)
                where !relationship.isToMany && !relationship.isTransient {
                    columns.add(
                        relationship.name, as: "\(entity.name).\(relationship.name)", owner: entity.name,
                        property: relationship.name)
                }
            }
            for collision in columns.collisions {
                var owners: [String] = []
                for occurrence in collision.occurrences where !owners.contains(occurrence.owner) {
                    owners.append(occurrence.owner)
                }
                let place =
                    owners.count == 1
                    ? "they would be columns of the table \(table)"
                    : "they would be columns of the table \(table), which \(listed(owners)) share"
                problem(
                    .identifierCollision,
                    "\(collision.spellings) differ only in letter case. SQLite ignores the case of letters in column "
                        + "names, and \(place); \(collision.advice)",
                    entity: collision.later.owner, property: collision.later.property)
            }
        }

        // Join tables, named after the relationship that owns them (of the pair, the side that
        // sorts first) and its entity.
        var joinTables = CaseCollisions()
        var byName: [String: Entity] = [:]
        for entity in entities { byName[entity.name] = entity }
        for entity in entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let inverse = relationship.inverseName.flatMap {
                    byName[relationship.destinationEntityName]?.relationship(named: $0)
                }
                if let inverse, !inverse.isToMany { continue }
                let here = "\(entity.name).\(relationship.name)"
                let there = inverse.map { "\(relationship.destinationEntityName).\($0.name)" }
                let owner = there.map { min(here, $0) } ?? here
                let ownerEntity = String(owner.prefix(while: { $0 != "." }))
                joinTables.add(
                    owner, as: owner, owner: ownerEntity, property: String(owner.drop(while: { $0 != "." }).dropFirst())
                )
            }
        }
        // The join tables of two entities whose names collide collide too; that is reported
        // with the entities.
        for collision in joinTables.collisions
        where collision.occurrences.allSatisfy({ $0.owner == collision.later.owner }) {
            problem(
                .identifierCollision,
                "\(collision.spellings) differ only in letter case. SQLite ignores the case of letters in table names, "
                    + "and each of these to-many relationships is kept in a join table named after it; \(collision.advice)",
                entity: collision.later.owner, property: collision.later.property)
        }

        // Index names of each entity: the ones it adds to what it inherits.
        for entity in entities where entity.indexes.count > entity.superentity?.indexes.count ?? 0 {
            let inherited = Set(entity.superentity?.indexes.map(\.name) ?? [])
            let declared = Set(entity.declaration.indexes.map(\.name))
            var indexes = CaseCollisions()
            for index in entity.indexes where !inherited.contains(index.name) {
                let spelling =
                    declared.contains(index.name)
                    ? "'\(index.name)'"
                    : "'\(index.name)' (added for the indexed attribute \(index.elements.first?.propertyName ?? ""))"
                indexes.add(index.name, as: spelling, owner: entity.name)
            }
            for collision in indexes.collisions {
                problem(
                    .identifierCollision,
                    "\(entity.name) has the indexes \(collision.spellings), whose names differ only in "
                        + "letter case. SQLite ignores the case of letters in index names; \(collision.advice)",
                    entity: entity.name)
            }
        }
    }
}

/// Names gathered in order, grouped by their ASCII-lowercased form.
private struct CaseCollisions {
    struct Occurrence {
        /// The name exactly as declared.
        var name: String
        /// How a message shows it (`Movie.title`, `'byTitle'`).
        var spelling: String
        /// The entity the name belongs to.
        var owner: String
        /// The property the name belongs to, if any.
        var property: String?
    }

    /// Names that SQL would take for one: the first occurrence of each spelling, in the order
    /// they were added.
    struct Collision {
        var occurrences: [Occurrence]
        var spellings: String { listed(occurrences.map(\.spelling)) }
        /// How to fix it.
        var advice: String { occurrences.count == 2 ? "rename one of them." : "rename all but one." }
        /// The first name that collides with an earlier one, which problems are reported at.
        var later: Occurrence { occurrences[occurrences.count > 1 ? 1 : 0] }
    }

    private var groups: [String: [Occurrence]] = [:]
    private var order: [String] = []

    mutating func add(_ name: String, as spelling: String, owner: String, property: String? = nil) {
        let key = asciiLowercased(name)
        if groups[key] == nil { order.append(key) }
        // Repeats of one spelling (siblings sharing a column, say) are one name to SQL.
        guard groups[key]?.contains(where: { $0.name == name }) != true else { return }
        groups[key, default: []].append(Occurrence(name: name, spelling: spelling, owner: owner, property: property))
    }

    /// The groups of more than one spelling, in the order their first names were added.
    var collisions: [Collision] {
        order.compactMap { key in
            guard let group = groups[key], group.count > 1 else { return nil }
            return Collision(occurrences: group)
        }
    }
}

/// `name` with ASCII letters lowercased, as SQLite compares identifiers (other letters keep
/// their case: SQLite tells `Ä` from `ä`).
func asciiLowercased(_ name: String) -> String {
    guard name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return name }
    return String(decoding: name.utf8.map(asciiLowercased), as: UTF8.self)
}

private func asciiLowercased(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
}

/// "a", "a and b", "a, b and c".
private func listed(_ items: [String]) -> String {
    guard items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + " and " + (items.last ?? "")
}
