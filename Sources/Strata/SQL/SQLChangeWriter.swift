import Foundation

/// Writes a change set into an SQL store's tables, inside the save's transaction, in the one
/// order every SQL store keeps.
///
/// A store supplies the five steps (each with its own statements and batching);
/// ``apply(_:)`` runs them in order: deletions first and new rows last, so that a save may
/// remove or change a unique value and give it to a new object; to-one references to objects
/// the same save inserts once those rows have keys; to-many relationships (join rows and
/// orders) once every row exists.
package protocol SQLChangeWriter {
    /// A to-one reference from an updated object to an object the same save inserts, written
    /// by ``writeReferences(_:)`` once the target has its key.
    typealias DeferredReference = (objectID: ObjectID, number: Int, target: ObjectID)

    /// Deletes objects, checking their versions, with the join rows that mention them.
    mutating func deleteRows(_ deletes: [(objectID: ObjectID, expectedVersion: Int64)]) throws

    /// Updates objects, checking their versions.
    ///
    /// - Returns: The to-one references to new objects, for ``writeReferences(_:)``.
    mutating func updateRows(_ updates: [StoreChangeSet.Update]) throws -> [DeferredReference]

    /// Inserts new objects, giving them their keys.
    mutating func insertRows(_ inserts: [StoreChangeSet.Insert]) throws

    /// Writes the to-one references ``updateRows(_:)`` deferred.
    mutating func writeReferences(_ references: [DeferredReference]) throws

    /// Writes to-many relationships: join rows, inverse columns and orders.
    mutating func writeToManyRelationships(_ toManyUpdates: [StoreChangeSet.ToManyUpdate]) throws
}

extension SQLChangeWriter {
    /// Applies a change set: deletions, updates, insertions, deferred references, to-many
    /// relationships.
    package mutating func apply(_ changes: StoreChangeSet) throws {
        try deleteRows(changes.deletes)
        let deferred = try updateRows(changes.updates)
        try insertRows(changes.inserts)
        try writeReferences(deferred)
        try writeToManyRelationships(changes.toManyUpdates)
    }
}

extension StoreSaveResult {
    /// Records the permanent ID of every new object of a save, at the first version: its
    /// reserved key when it has one, else the key `nextKey` gives for its entity name (the
    /// store's rule: the next of the table's sequence, or above the highest key ever used).
    package mutating func recordPermanentIDs(
        of inserts: [StoreChangeSet.Insert], storeIdentifier: String, nextKey: (_ entityName: String) throws -> Int64
    ) rethrows {
        permanentIDs.reserveCapacity(permanentIDs.count + inserts.count)
        versions.reserveCapacity(versions.count + inserts.count)
        for insert in inserts {
            let entityName = insert.objectID.entityName
            let objectID = ObjectID(
                entityName: entityName, entityNameHash: insert.objectID.entityNameHash, storeIdentifier: storeIdentifier,
                primaryKey: try insert.objectID.primaryKey ?? nextKey(entityName))
            permanentIDs[insert.objectID] = objectID
            versions[objectID] = StoreLayout.initialVersion
        }
    }
}
