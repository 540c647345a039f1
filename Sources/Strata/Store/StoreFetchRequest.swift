import Foundation

/// What a store fetch asks for, by name: the unresolved form of a ``FetchPlan``.
public struct StoreFetchRequest: Sendable, Hashable {
    /// The entity whose rows are wanted.
    public var entityName: String
    /// Whether rows of subentities are included.
    public var includesSubentities: Bool
    /// Only rows with these primary keys, when set.
    public var primaryKeys: [Int64]?
    /// Only rows whose properties equal these values (attribute values, or for a to-one
    /// relationship the target's ``AttributeValue/integer(_:)`` primary key; ``AttributeValue/null``
    /// matches no value), when set.
    public var matching: [String: AttributeValue]?
    /// Only rows that satisfy this predicate, when set.
    public var predicate: QueryPredicate?
    /// The order of the rows; ties (and everything, when empty) in primary-key order.
    public var sortDescriptors: [QuerySortDescriptor]
    /// At most this many rows, when set.
    public var fetchLimit: Int?
    /// Rows to skip before the first one returned.
    public var fetchOffset: Int

    /// Creates a fetch request for `entityName`.
    public init(
        entityName: String, includesSubentities: Bool = true, primaryKeys: [Int64]? = nil,
        matching: [String: AttributeValue]? = nil, predicate: QueryPredicate? = nil,
        sortDescriptors: [QuerySortDescriptor] = [], fetchLimit: Int? = nil, fetchOffset: Int = 0
    ) {
        self.entityName = entityName
        self.includesSubentities = includesSubentities
        self.primaryKeys = primaryKeys
        self.matching = matching
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }
}
