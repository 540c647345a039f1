import Foundation

extension PredicateResolver {
    /// Resolves a sort key: an attribute, directly or through to-one relationships.
    package mutating func resolveSort(_ descriptor: QuerySortDescriptor, allowsUnordered: Bool = false) throws -> ResolvedSort {
        let components = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard case .attribute(let steps, let number, let type) = try keyPathTerm(components) else {
            throw StrataError(
                .invalidPredicate,
                "Cannot sort \(rootEntity.name) by '\(descriptor.key)': a sort key must reach an attribute through to-one relationships.",
                entityName: rootEntity.name, propertyName: descriptor.key)
        }
        if ValueKind(type) == .codable && !allowsUnordered {
            throw StrataError(
                .typeMismatch, "Cannot sort by '\(descriptor.key)': Codable attributes have no order.",
                entityName: rootEntity.name,
                propertyName: descriptor.key)
        }
        return ResolvedSort(
            steps: steps, number: number, type: type, ascending: descriptor.ascending, comparison: descriptor.comparison
        )
    }

    static func resolveSorts(_ descriptors: [QuerySortDescriptor], for entity: Entity, in schema: Schema) throws
        -> [ResolvedSort]
    {
        var resolver = PredicateResolver(schema: schema, entity: entity)
        return try descriptors.map { try resolver.resolveSort($0) }
    }
}
