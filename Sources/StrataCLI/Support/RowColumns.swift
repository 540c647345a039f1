import Foundation
import Strata

/// The columns the tool shows for an entity's objects, and each row's values in them:
///
/// - `_id`: the object's primary key in its store;
/// - `_entity`: the object's entity, when the entity has subentities;
/// - every stored attribute of the entity, then those its subentities add;
/// - every to-one relationship, as the primary key of the object it holds.
///
/// `strata export` writes these columns and `strata import` reads them back (it skips `_id`,
/// `_entity` and relationships).
struct RowColumns {
    /// A column's source in a row.
    private enum Slot {
        case primaryKey
        case entityName
        case attribute(Int)
        case toOne(Int)
        case absent
    }

    /// The column names.
    let names: [String]
    private let schema: Schema
    private var slotsByEntity: [String: [Slot]] = [:]

    static let primaryKeyName = "_id"
    static let entityName = "_entity"

    /// The columns of `entity`'s objects; `_entity` is among them when the entity has
    /// subentities, or when `includingEntityName` asks for it.
    init(entity: Entity, schema: Schema, includingEntityName: Bool = false) {
        self.schema = schema
        var names = [Self.primaryKeyName]
        if includingEntityName || !entity.subentityNames.isEmpty { names.append(Self.entityName) }
        var seen = Set(names)
        let kinds = [entity] + Self.subentities(of: entity, in: schema)
        for kind in kinds {
            for attribute in kind.attributes where !attribute.isTransient && seen.insert(attribute.name).inserted {
                names.append(attribute.name)
            }
        }
        for kind in kinds {
            for relationship in kind.relationships
            where !relationship.isToMany && !relationship.isTransient && seen.insert(relationship.name).inserted {
                names.append(relationship.name)
            }
        }
        self.names = names
    }

    /// Every entity below `entity`, depth first.
    static func subentities(of entity: Entity, in schema: Schema) -> [Entity] {
        entity.subentityNames.compactMap { schema.entity(named: $0) }.flatMap { [$0] + subentities(of: $0, in: schema) }
    }

    /// The values of `row` in the columns (`nil` where the row's entity has no such property).
    mutating func values(of row: StoreRow) -> [AttributeValue?] {
        let entityName = row.objectID.entityName
        let slots = slotsByEntity[entityName] ?? makeSlots(for: entityName)
        return slots.map { slot in
            switch slot {
            case .primaryKey: row.objectID.primaryKey.map { .integer($0) } ?? .null
            case .entityName: .string(entityName)
            case .attribute(let number): number < row.attributes.count ? row.attributes[number] : .null
            case .toOne(let number):
                number < row.toOne.count ? (row.toOne[number]?.primaryKey).map { .integer($0) } ?? .null : .null
            case .absent: nil
            }
        }
    }

    private mutating func makeSlots(for entityName: String) -> [Slot] {
        let entity = schema.entity(named: entityName)
        let slots = names.map { name -> Slot in
            if name == Self.primaryKeyName { return .primaryKey }
            if name == Self.entityName { return .entityName }
            if let number = entity?.attributeNumber(named: name) { return .attribute(number) }
            if let number = entity?.relationshipNumber(named: name) { return .toOne(number) }
            return .absent
        }
        slotsByEntity[entityName] = slots
        return slots
    }
}
