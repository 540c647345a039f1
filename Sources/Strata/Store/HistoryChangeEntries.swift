import Foundation

/// The history entries of one save: one per object, in the order every store writes them —
/// deletions, then updates (with the names of the properties that changed, to-many
/// relationships included), then insertions.
package struct HistoryChangeEntries {
    /// One entry: an object and what happened to it (0 insert, 1 update, 2 delete).
    package struct Entry {
        package var entity: String
        package var key: Int64
        package var kind: Int
        /// The changed properties, sorted and joined with commas, for updates.
        package var properties: String?

        /// An entry.
        package init(entity: String, key: Int64, kind: Int, properties: String? = nil) {
            self.entity = entity
            self.key = key
            self.kind = kind
            self.properties = properties
        }
    }

    /// The entries, in writing order.
    package var entries: [Entry] = []

    /// The entries of a change set just applied, whose new objects got `permanentIDs`.
    package init(_ changes: StoreChangeSet, permanentIDs: [ObjectID: ObjectID], schema: Schema) {
        entries.reserveCapacity(changes.inserts.count + changes.updates.count + changes.deletes.count)
        for delete in changes.deletes {
            entries.append(Entry(entity: delete.objectID.entityName, key: delete.objectID.primaryKey ?? 0, kind: 2))
        }
        var properties: [ObjectID: Set<String>] = [:]
        var order: [ObjectID] = []
        for update in changes.updates {
            guard let entity = schema.entity(named: update.objectID.entityName) else { continue }
            var names = Set<String>()
            for number in update.attributes.keys where number < entity.attributes.count { names.insert(entity.attributes[number].name) }
            for number in update.toOne.keys where number < entity.relationships.count { names.insert(entity.relationships[number].name) }
            if properties[update.objectID] == nil { order.append(update.objectID) }
            properties[update.objectID, default: []].formUnion(names)
        }
        for change in changes.toManyUpdates where !change.objectID.isTemporaryID {
            guard let entity = schema.entity(named: change.objectID.entityName),
                change.relationshipNumber < entity.relationships.count
            else { continue }
            if properties[change.objectID] == nil { order.append(change.objectID) }
            properties[change.objectID, default: []].insert(entity.relationships[change.relationshipNumber].name)
        }
        for objectID in order {
            entries.append(
                Entry(
                    entity: objectID.entityName, key: objectID.primaryKey ?? 0, kind: 1,
                    properties: (properties[objectID] ?? []).sorted().joined(separator: ",")))
        }
        for insert in changes.inserts {
            guard let permanent = permanentIDs[insert.objectID] else { continue }
            entries.append(Entry(entity: permanent.entityName, key: permanent.primaryKey ?? 0, kind: 0))
        }
    }
}
