import Foundation

/// A values request's columns and groups, resolved against the schema and checked once for
/// every SQL store: which attribute each column reads (through to-one relationships), and
/// whether its aggregate applies to the attribute's type. Each store then writes the SQL of its
/// dialect for the resolved columns.
package struct ResolvedValuesRequest {
    /// One result column.
    package enum Column {
        /// An attribute's value.
        case property(ResolvedSort)
        /// The number of rows (`@count` with no key).
        case countRows
        /// An aggregate of an attribute, checked to apply to its type (`kind`).
        case aggregate(AggregateFunction, ResolvedSort, ValueKind)
    }

    /// The entity whose rows are read.
    package var entityName: String
    /// The result columns, in the request's order.
    package var columns: [Column]
    /// The attributes the rows are grouped by.
    package var groupBy: [ResolvedSort]
    /// Whether the result is aggregated: grouped, or holding an aggregate column.
    package var isAggregate: Bool

    /// Resolves `request`'s columns and groups.
    ///
    /// - Throws: ``StrataError`` with ``StrataError/Code/typeMismatch`` for a sum or average of
    ///   a non-numeric attribute or any aggregate of a Codable one, and
    ///   ``StrataError/Code/invalidPredicate`` for an unknown key or an aggregate other than
    ///   count with no key.
    package init(_ request: StoreValuesRequest, schema: Schema) throws {
        let entity = request.plan.entity
        entityName = entity.name
        var resolver = PredicateResolver(schema: schema, entity: entity)
        columns = []
        for column in request.columns {
            switch column {
            case .property(let key):
                columns.append(.property(try resolver.resolveSort(QuerySortDescriptor(key: key), allowsUnordered: true)))
            case .aggregate(.count, nil):
                columns.append(.countRows)
            case .aggregate(let function, let key?):
                let target = try resolver.resolveSort(QuerySortDescriptor(key: key))
                let kind = ValueKind(target.type)
                if function != .count && function != .min && function != .max && !kind.isNumeric {
                    throw StrataError(
                        .typeMismatch,
                        "\(function.rawValue) needs a numeric attribute; \(entity.name).\(key) is \(target.type).",
                        entityName: entity.name, propertyName: key)
                }
                if kind == .codable {
                    throw StrataError(
                        .typeMismatch, "\(function.rawValue) cannot use the Codable attribute \(entity.name).\(key).",
                        entityName: entity.name, propertyName: key)
                }
                columns.append(.aggregate(function, target, kind))
            case .aggregate(let function, nil):
                throw StrataError(
                    .invalidPredicate, "\(function.rawValue) needs an attribute; only count can count rows.",
                    entityName: entity.name)
            }
        }
        groupBy = try request.groupBy.map {
            try resolver.resolveSort(QuerySortDescriptor(key: $0), allowsUnordered: true)
        }
        isAggregate =
            !groupBy.isEmpty || request.columns.contains { if case .aggregate = $0 { true } else { false } }
    }
}
