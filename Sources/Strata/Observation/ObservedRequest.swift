import Foundation

/// A fetch request resolved against the schema once, for every refresh of the live query or
/// subscription that runs it: the query each refresh runs, and the entities whose commits can
/// change its answer.
///
/// Resolving a request checks its keys and types and compiles its predicate; a live query that
/// refreshes after every relevant save does it once, when it is made, instead of on every
/// refresh.
struct ObservedRequest: Sendable {
    /// The resolved query, or why the request does not resolve: then every refresh fails with
    /// that error, as a fetch of the request would.
    private let query: Result<ObjectQuery, any Error>

    /// The entities whose commits can change the answer; nil when any commit can (the
    /// predicate or sort reaches related objects, or the request does not resolve).
    let relevantEntities: Set<String>?

    /// Resolves `request` against `schema`.
    init<Model: ManagedObject>(_ request: FetchRequest<Model>, in schema: Schema) {
        query = Result { try ObjectQuery(request, in: schema) }
        relevantEntities = Self.relevantEntities(of: query, named: request.entityName, in: schema)
    }

    /// The objects the request matches in `context`.
    func fetch<Model: ManagedObject>(_: Model.Type, in context: ObjectContext) throws -> [Model] {
        try context.execute(query(in: context)).ofType(Model.self)
    }

    /// The number of objects the request matches in `context`.
    func count(in context: ObjectContext) throws -> Int {
        try context.count(query(in: context))
    }

    /// One aggregate of the attribute named `key` over the saved objects the request matches.
    func aggregateValue(_ function: AggregateFunction, key: String, in context: ObjectContext) throws
        -> AttributeValue
    {
        try context.aggregateValue(function, key: key, of: query(in: context))
    }

    /// The query, after what every query does first in `context` (as ``ObjectContext/query(for:)``
    /// does for a request).
    private func query(in context: ObjectContext) throws -> ObjectQuery {
        try context.prepareToQuery()
        return try query.get()
    }

    private static func relevantEntities(
        of query: Result<ObjectQuery, any Error>, named entityName: String, in schema: Schema
    ) -> Set<String>? {
        guard let entity = schema.entity(named: entityName) else { return [] }
        // A request that does not resolve fails when it runs; until then, any change may matter.
        guard case .success(let query) = query, !query.plan.reachesRelatedObjects else { return nil }
        return query.plan.includesSubentities ? entity.kindNames : [entity.name]
    }
}
