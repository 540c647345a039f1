import Foundation

/// How a batch insert treats a row that has the same values for a uniqueness constraint as a
/// stored object: chosen from the executing context's merge policy, as Core Data does.
public enum BatchInsertConflictResolution: Sendable, Hashable {
    /// The request fails and writes nothing (``MergePolicy/error``).
    case fail
    /// The stored object stays as it is; the row is dropped (``MergePolicy/mergeByPropertyStoreTrump``,
    /// ``MergePolicy/rollback``).
    case keepStored
    /// The stored object takes the row's values (``MergePolicy/mergeByPropertyObjectTrump``,
    /// ``MergePolicy/overwrite``): an upsert.
    case replaceStored
}

/// A batch insert as a store runs it: rows of attribute values of one entity.
public struct StoreBatchInsert: Sendable {
    /// The entity of every row (not abstract).
    public var entityName: String
    /// What to do with rows that break a uniqueness constraint.
    public var conflictResolution: BatchInsertConflictResolution
    /// What to report.
    public var resultType: BatchResultType
    /// The author history records.
    public var author: String?
    /// The context name history records.
    public var contextName: String?

    /// Creates a batch insert.
    public init(
        entityName: String, conflictResolution: BatchInsertConflictResolution = .fail,
        resultType: BatchResultType = .statusOnly, author: String? = nil, contextName: String? = nil
    ) {
        self.entityName = entityName
        self.conflictResolution = conflictResolution
        self.resultType = resultType
        self.author = author
        self.contextName = contextName
    }
}
