import Foundation

/// A fetch resolved once against the schema: the entity, the predicate and sort keys checked
/// and turned into attribute and relationship numbers, the limits.
///
/// Contexts build one plan per fetch and hand the same value to the store, to the in-memory
/// evaluation of unsaved changes, to fetched results controllers and to batched results, so
/// that a key path is looked up and a constant converted once, and every consumer agrees on
/// what the request means. Stores compile a plan into their own dialect.
///
/// ```swift
/// let plan = try FetchPlan(StoreFetchRequest(entityName: "Movie", predicate: predicate), in: store.schema)
/// let rows = try store.fetch(plan)
/// ```
///
/// Building a plan checks everything a store would reject: an unknown entity, an unknown key, a
/// constant of the wrong type, a sort key that is not an ordered attribute.
public struct FetchPlan: Sendable {
    /// The entity whose objects are fetched.
    public let entity: Entity
    /// Whether objects of subentities are included.
    public var includesSubentities: Bool
    /// Only rows with these primary keys, when set.
    public var primaryKeys: [Int64]?
    /// Only rows whose primary key lies in this range, when set: how batched results read a
    /// batch in primary-key order with one range scan instead of one lookup per key.
    public var primaryKeyRange: ClosedRange<Int64>?
    /// Only rows whose properties equal these values, when set (see
    /// ``StoreFetchRequest/matching``); every name is an attribute or to-one relationship of
    /// ``entity``.
    public var matching: [String: AttributeValue]?
    /// The predicate, resolved, when there is one.
    package var predicate: ResolvedPredicate?
    /// The sort keys, resolved; ties (and everything, when empty) in primary-key order.
    package var sorts: [ResolvedSort]
    /// At most this many rows, when set.
    public var fetchLimit: Int?
    /// Rows to skip before the first one returned.
    public var fetchOffset: Int

    /// Resolves a store fetch request against a schema.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/unknownEntity``,
    ///   ``StrataError/Code/unknownKey``, ``StrataError/Code/typeMismatch`` or
    ///   ``StrataError/Code/invalidPredicate``.
    public init(_ request: StoreFetchRequest, in schema: Schema) throws {
        let entity = try schema.existingEntity(named: request.entityName)
        for name in (request.matching ?? [:]).keys.sorted()
        where entity.attribute(named: name) == nil && entity.relationship(named: name)?.isToMany != false {
            throw StrataError(
                .unknownKey,
                "\(entity.name) has no attribute or to-one relationship named '\(name)' to match on."
                    + didYouMean(name, in: entity.attributes.map(\.name) + entity.relationships.map(\.name)),
                entityName: entity.name, propertyName: name)
        }
        self.init(
            entity: entity, includesSubentities: request.includesSubentities, primaryKeys: request.primaryKeys,
            matching: request.matching,
            predicate: try request.predicate.map { try PredicateResolver.resolve($0, for: entity, in: schema) },
            sorts: try PredicateResolver.resolveSorts(request.sortDescriptors, for: entity, in: schema),
            fetchLimit: request.fetchLimit, fetchOffset: request.fetchOffset)
    }

    /// Resolves a fetch request against a schema: its entity, predicate, sort descriptors,
    /// subentity choice, limit and offset (a limit of 0 means none).
    ///
    /// ```swift
    /// let plan = try FetchPlan(FetchRequest<Movie>(predicate: \.year >= 1990), in: container.schema)
    /// ```
    ///
    /// - Throws: As ``init(_:in:)-(StoreFetchRequest,_)``.
    public init<Model: EntityModel>(_ request: FetchRequest<Model>, in schema: Schema) throws {
        let entity = try schema.existingEntity(named: request.entityName)
        self.init(
            entity: entity, includesSubentities: request.includesSubentities,
            predicate: try request.predicate.map { try PredicateResolver.resolve($0.tree, for: entity, in: schema) },
            sorts: try PredicateResolver.resolveSorts(
                request.sortDescriptors.map(\.descriptor), for: entity, in: schema),
            fetchLimit: request.fetchLimit > 0 ? request.fetchLimit : nil, fetchOffset: request.fetchOffset)
    }

    /// A plan from parts already resolved against `entity`.
    init(
        entity: Entity, includesSubentities: Bool = true, primaryKeys: [Int64]? = nil,
        matching: [String: AttributeValue]? = nil, predicate: ResolvedPredicate? = nil, sorts: [ResolvedSort] = [],
        fetchLimit: Int? = nil, fetchOffset: Int = 0
    ) {
        self.entity = entity
        self.includesSubentities = includesSubentities
        self.primaryKeys = primaryKeys
        self.matching = matching
        self.predicate = predicate
        self.sorts = sorts
        self.fetchLimit = fetchLimit
        self.fetchOffset = max(0, fetchOffset)
    }

    /// The name of ``entity``.
    public var entityName: String { entity.name }

    /// Whether the predicate or a sort key reaches past the fetched object's own row (through
    /// relationships, collection operators or quantifiers), so that changes to other objects
    /// can change the result.
    package var reachesRelatedObjects: Bool {
        sorts.contains { !$0.steps.isEmpty } || (predicate?.reachesRelatedObjects ?? false)
    }
}

extension ResolvedPredicate {
    /// Whether deciding the predicate reads anything but the object's own row.
    var reachesRelatedObjects: Bool {
        switch self {
        case .constant: false
        case .and(let parts), .or(let parts): parts.contains { $0.reachesRelatedObjects }
        case .not(let part): part.reachesRelatedObjects
        case .compare(let left, _, let right, _, _): left.reachesRelatedObjects || right.reachesRelatedObjects
        case .member(let operand, _, _, _), .between(let operand, _, _, _), .objectIn(let operand, _, _),
            .jsonContains(let operand, _, _), .objectIsNil(let operand):
            operand.reachesRelatedObjects
        case .quantified: true
        }
    }
}

extension ResolvedOperand {
    /// Whether the operand reads anything but the object's own row. The object a to-one
    /// relationship holds is in the row (its key), so `director == nil` reads the row only.
    var reachesRelatedObjects: Bool {
        switch self {
        case .constant: false
        case .attribute(let scope, let steps, _, _): scope != 0 || !steps.isEmpty
        case .object(let scope, let steps): scope != 0 || steps.count > 1
        case .aggregate: true
        }
    }
}
