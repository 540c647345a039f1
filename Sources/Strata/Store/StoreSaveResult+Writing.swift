import Foundation

extension StoreSaveResult {
    /// The permanent form of an ID while a store applies a change set: saved objects keep
    /// theirs, objects inserted earlier in the same save get the one just assigned.
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` for a new object that is not part of the
    ///   save.
    package func permanent(_ objectID: ObjectID) throws -> ObjectID {
        if !objectID.isTemporaryID { return objectID }
        guard let assigned = permanentIDs[objectID] else {
            throw StrataError(
                .objectNotFound,
                "The save refers to \(objectID), a new object that is not part of the save. Insert it into the same context.",
                entityName: objectID.entityName, objectID: objectID)
        }
        return assigned
    }
}

extension StrataError {
    /// The error of a save that found `objectID`'s row changed (or `deleted`) since its context
    /// read it: every store words it the same.
    package static func lockingFailure(_ objectID: ObjectID, entity: String, deleted: Bool) -> StrataError {
        StrataError(
            .optimisticLockingFailure,
            deleted
                ? "\(objectID) was deleted by another context since it was read. Nothing was saved; refresh the object."
                : "\(objectID) was changed by another context since it was read. Nothing was saved; refresh the object and apply the change again, or choose a merge policy.",
            entityName: entity, objectID: objectID)
    }
}
