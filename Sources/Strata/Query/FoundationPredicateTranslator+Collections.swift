import Foundation

extension FoundationPredicateTranslator {
    // MARK: Collections

    /// `collection.contains { body }`: `ANY` for a single comparison on the member, otherwise a
    /// counted subquery.
    func anyMember(of collection: QueryExpression, variable: String, body: QueryPredicate) -> QueryPredicate {
        if let simple = Self.quantifiedComparison(collection, variable: variable, body: body, modifier: .any) {
            return simple
        }
        return .comparison(
            .keyPathOn(
                .subquery(collection: collection, variable: variable, predicate: body),
                CollectionOperator.count.rawValue),
            .greaterThan, .value(.integer(0)))
    }

    /// `collection.allSatisfy { body }`: `ALL` for a single comparison on the member, otherwise
    /// "no member fails" (true for an empty collection).
    func everyMember(of collection: QueryExpression, variable: String, body: QueryPredicate) -> QueryPredicate {
        if let simple = Self.quantifiedComparison(collection, variable: variable, body: body, modifier: .all) {
            return simple
        }
        return .comparison(
            .keyPathOn(
                .subquery(collection: collection, variable: variable, predicate: Self.not(body)),
                CollectionOperator.count.rawValue),
            .equalTo, .value(.integer(0)))
    }

    /// `ANY collection.path op value` (or `ALL`, or `collection CONTAINS object`) when `body` is
    /// one comparison of the member's key path with something that does not involve the member.
    private static func quantifiedComparison(
        _ collection: QueryExpression, variable: String, body: QueryPredicate, modifier: ComparisonModifier
    ) -> QueryPredicate? {
        guard case .comparison(var comparison) = body, comparison.modifier == .direct else { return nil }
        if !refers(to: variable, comparison.left), refers(to: variable, comparison.right),
            let mirrored = comparison.comparisonOperator.mirrored
        {
            comparison = QueryComparison(comparison.right, mirrored, comparison.left, options: comparison.options)
        }
        guard !refers(to: variable, comparison.right) else { return nil }
        switch comparison.left {
        case .variable(variable):
            // `$0.objectID == id` on the member: `collection CONTAINS id`.
            guard modifier == .any, comparison.comparisonOperator == .equalTo, case .objectID = comparison.right else {
                return nil
            }
            return .comparison(collection, .contains, comparison.right)
        case .keyPathOn(.variable(variable), let path) where !path.contains("@"):
            guard let memberPath = appending(path, to: collection) else { return nil }
            return .comparison(
                memberPath, comparison.comparisonOperator, comparison.right, options: comparison.options,
                modifier: modifier)
        default:
            return nil
        }
    }

    /// Whether an expression mentions `$variable`.
    private static func refers(to variable: String, _ expression: QueryExpression) -> Bool {
        switch expression {
        case .variable(let name): name == variable
        case .keyPathOn(let base, _): refers(to: variable, base)
        case .list(let elements): elements.contains { refers(to: variable, $0) }
        case .subquery(let collection, _, let predicate):
            refers(to: variable, collection) || refers(to: variable, predicate)
        case .value, .objectID, .keyPath, .evaluatedObject: false
        }
    }

    private static func refers(to variable: String, _ predicate: QueryPredicate) -> Bool {
        switch predicate {
        case .constant: false
        case .comparison(let comparison):
            refers(to: variable, comparison.left) || refers(to: variable, comparison.right)
        case .and(let parts), .or(let parts): parts.contains { refers(to: variable, $0) }
        case .not(let part): refers(to: variable, part)
        }
    }

    /// The key path `path` followed from `base`: `director` + `name` is `director.name`.
    static func appending(_ path: String, to base: QueryExpression) -> QueryExpression? {
        switch base {
        case .evaluatedObject: .keyPath(path)
        case .keyPath(let basePath): .keyPath(basePath + "." + path)
        case .variable, .subquery: .keyPathOn(base, path)
        case .keyPathOn(let inner, let basePath): .keyPathOn(inner, basePath + "." + path)
        case .value, .objectID, .list: nil
        }
    }
}
