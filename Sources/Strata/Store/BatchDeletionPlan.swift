import Foundation

/// A row of an entity, by key: what batch requests work with instead of objects.
package struct RowReference: Hashable, Sendable {
    package var entity: String
    package var key: Int64

    package init(entity: String, key: Int64) {
        self.entity = entity
        self.key = key
    }
}

/// Which rows a batch delete removes and which references it clears, found by following
/// delete rules before anything is written: every store applies the same rules.
///
/// Cascades are followed until no new row turns up; a deny rule refuses the request when an
/// object survives that the relationship holds (a related object a cascade deletes too does
/// not deny); nullify rules record the surviving rows whose inverse reference must be cleared.
package struct BatchDeletionPlan {
    /// Rows to delete, by entity, in the order found.
    package var rows: [String: [Int64]] = [:]
    /// The entities of ``rows`` in the order they were first found.
    package var entityOrder: [String] = []
    /// Every row to delete.
    package var marked: Set<RowReference> = []
    /// Surviving rows whose reference to a deleted row is cleared, with the relationship of
    /// the deleted side.
    package var nullifications: [(relationship: RelationshipDescription, owner: Entity, rows: [RowReference])] = []

    package init() {}

    /// Marks `selected` for deletion and follows their delete rules.
    ///
    /// - Parameters:
    ///   - schema: The store's schema.
    ///   - relatedRows: The rows relationship number `number` of `entity` holds for the rows
    ///     with these keys, read from the store.
    /// - Throws: ``StrataError/Code/deleteDenied`` when a deny rule holds; nothing is written.
    package mutating func delete(
        _ selected: [RowReference], schema: Schema,
        relatedRows: (_ entity: Entity, _ number: Int, _ keys: [Int64]) throws -> [RowReference]
    ) throws {
        var denials: [(entity: String, relationship: String, related: [RowReference])] = []
        var pending = selected.filter { marked.insert($0).inserted }
        while !pending.isEmpty {
            let batch = pending
            pending = []
            var byEntity: [String: [Int64]] = [:]
            for row in batch {
                if rows[row.entity] == nil { entityOrder.append(row.entity) }
                rows[row.entity, default: []].append(row.key)
                byEntity[row.entity, default: []].append(row.key)
            }
            for (entityName, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
                guard let entity = schema.entity(named: entityName) else { continue }
                for (number, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
                    let related = try relatedRows(entity, number, keys)
                    let survivors = related.filter { !marked.contains($0) }
                    switch relationship.deleteRule {
                    case .deny:
                        if !survivors.isEmpty { denials.append((entityName, relationship.name, survivors)) }
                    case .cascade:
                        for row in survivors where marked.insert(row).inserted { pending.append(row) }
                    case .nullify:
                        if !survivors.isEmpty { nullifications.append((relationship, entity, survivors)) }
                    case .noAction:
                        break
                    }
                }
            }
        }
        for (entityName, relationship, related) in denials {
            if let first = related.first(where: { !marked.contains($0) }) {
                throw StrataError(
                    .deleteDenied,
                    "Deleting \(entityName) objects is denied while their \(relationship) holds objects (\(first.entity) \(first.key)). Nothing was deleted.",
                    entityName: entityName, propertyName: relationship)
            }
        }
        // Rows a later cascade deletes are not cleared, only deleted.
        nullifications = nullifications.map { ($0.relationship, $0.owner, $0.rows.filter { !marked.contains($0) }) }
    }

    /// The surviving rows a deletion changes (their inverse reference cleared), each with the
    /// names of the properties that change, in the order found.
    package var updatedRows: [(row: RowReference, properties: [String])] {
        var updated: [RowReference: Set<String>] = [:]
        var order: [RowReference] = []
        for (relationship, _, survivors) in nullifications {
            guard let inverseName = relationship.inverseName else { continue }
            for row in survivors where !marked.contains(row) {
                if updated[row] == nil { order.append(row) }
                updated[row, default: []].insert(inverseName)
            }
        }
        return order.map { ($0, (updated[$0] ?? []).sorted()) }
    }
}
