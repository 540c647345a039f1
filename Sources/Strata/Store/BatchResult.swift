import Foundation

/// What a batch request reports (Core Data's `NSBatchInsertRequestResultType`,
/// `NSBatchUpdateRequestResultType` and `NSBatchDeleteRequestResultType`).
public enum BatchResultType: Sendable, Hashable {
    /// Whether the request succeeded (it throws when it does not).
    case statusOnly
    /// The number of objects the request inserted, updated or deleted.
    case count
    /// The IDs of those objects.
    case objectIDs
}

/// What a batch request did.
///
/// ```swift
/// let result = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.year < 1950)))
/// print("deleted", result.count)
/// ```
public struct BatchResult: Sendable, Hashable {
    /// Which kind of request ran.
    public enum Kind: Sendable, Hashable {
        /// A batch insert.
        case insert
        /// A batch update.
        case update
        /// A batch delete.
        case delete
    }

    /// Which kind of request ran.
    public var kind: Kind
    /// What the request asked to report.
    public var resultType: BatchResultType
    /// The number of objects of the request's entity the request inserted (or, resolving a
    /// uniqueness conflict, updated), updated or deleted. Objects a delete rule cascaded to or
    /// nullified are not counted (they are in the commit and in history).
    public var count: Int
    /// The IDs of those objects, when ``resultType`` is ``BatchResultType/objectIDs`` (Core
    /// Data's result).
    public var objectIDs: [ObjectID]?
    /// Every object the request inserted, when ``resultType`` is ``BatchResultType/objectIDs``.
    public var insertedObjectIDs: [ObjectID]?
    /// Every object the request updated — set by the request, given a stored row's place by a
    /// uniqueness conflict, or cleared by a nullify rule — when ``resultType`` is
    /// ``BatchResultType/objectIDs``.
    public var updatedObjectIDs: [ObjectID]?
    /// Every object the request deleted, cascades included, when ``resultType`` is
    /// ``BatchResultType/objectIDs``.
    public var deletedObjectIDs: [ObjectID]?
    /// The request's transaction in persistent history, when the store records it.
    public var historyToken: HistoryToken?

    /// Creates a result.
    public init(
        kind: Kind, resultType: BatchResultType, count: Int, objectIDs: [ObjectID]? = nil,
        historyToken: HistoryToken? = nil
    ) {
        self.kind = kind
        self.resultType = resultType
        self.count = count
        self.objectIDs = objectIDs
        self.historyToken = historyToken
    }
}

extension BatchResult {
    /// The result of a batch update that changed `count` rows: with their IDs, made by
    /// `objectIDs`, when the request asks for them.
    package init(updated count: Int, by request: StoreBatchUpdate, objectIDs: () -> [ObjectID]) {
        self.init(
            kind: .update, resultType: request.resultType, count: count,
            objectIDs: request.resultType == .objectIDs ? objectIDs() : nil)
    }
}
