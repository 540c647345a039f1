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

/// A new value of one attribute in a batch update: a constant, another attribute of the same
/// object, or arithmetic on them (what Core Data expresses with `NSExpression`).
///
/// ```swift
/// let raise: BatchUpdateExpression = .key("rating") + 1
/// let scaled: BatchUpdateExpression = .key("boxOffice") * 1.1
/// ```
public indirect enum BatchUpdateExpression: Sendable, Hashable, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A constant.
    case value(AttributeValue)
    /// The current value of an attribute of the object being updated.
    case key(String)
    /// The sum of two expressions.
    case add(BatchUpdateExpression, BatchUpdateExpression)
    /// The difference of two expressions.
    case subtract(BatchUpdateExpression, BatchUpdateExpression)
    /// The product of two expressions.
    case multiply(BatchUpdateExpression, BatchUpdateExpression)
    /// The quotient of two expressions (integer division when both are integers).
    case divide(BatchUpdateExpression, BatchUpdateExpression)

    /// An integer constant.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A floating-point constant.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A string constant.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// A Boolean constant.
    public init(booleanLiteral value: Bool) { self = .value(.boolean(value)) }
    /// No value.
    public init(nilLiteral: ()) { self = .value(.null) }

    /// `lhs + rhs`.
    public static func + (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .add(lhs, rhs)
    }
    /// `lhs - rhs`.
    public static func - (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .subtract(lhs, rhs)
    }
    /// `lhs * rhs`.
    public static func * (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .multiply(lhs, rhs)
    }
    /// `lhs / rhs`.
    public static func / (lhs: BatchUpdateExpression, rhs: BatchUpdateExpression) -> BatchUpdateExpression {
        .divide(lhs, rhs)
    }

    /// The attribute names the expression reads.
    public var keys: [String] {
        switch self {
        case .value: []
        case .key(let name): [name]
        case .add(let lhs, let rhs), .subtract(let lhs, let rhs), .multiply(let lhs, let rhs), .divide(let lhs, let rhs):
            lhs.keys + rhs.keys
        }
    }
}

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

/// A batch update as a store runs it: the rows a plan matches get new attribute values.
public struct StoreBatchUpdate: Sendable {
    /// Which rows.
    public var plan: FetchPlan
    /// The new values, by attribute name.
    public var propertiesToUpdate: [String: BatchUpdateExpression]
    /// What to report.
    public var resultType: BatchResultType
    /// The author history records.
    public var author: String?
    /// The context name history records.
    public var contextName: String?

    /// Creates a batch update.
    public init(
        plan: FetchPlan, propertiesToUpdate: [String: BatchUpdateExpression], resultType: BatchResultType = .statusOnly,
        author: String? = nil, contextName: String? = nil
    ) {
        self.plan = plan
        self.propertiesToUpdate = propertiesToUpdate
        self.resultType = resultType
        self.author = author
        self.contextName = contextName
    }
}

/// A batch delete as a store runs it: the rows a plan matches, or rows by object ID.
public struct StoreBatchDelete: Sendable {
    /// Which rows.
    public enum Selection: Sendable {
        /// The rows a plan matches (its limit, offset and order apply).
        case plan(FetchPlan)
        /// These objects (IDs of other stores and of missing rows are skipped).
        case objectIDs([ObjectID])
    }

    /// Which rows.
    public var selection: Selection
    /// What to report.
    public var resultType: BatchResultType
    /// The author history records.
    public var author: String?
    /// The context name history records.
    public var contextName: String?

    /// Creates a batch delete.
    public init(
        selection: Selection, resultType: BatchResultType = .statusOnly, author: String? = nil, contextName: String? = nil
    ) {
        self.selection = selection
        self.resultType = resultType
        self.author = author
        self.contextName = contextName
    }
}
