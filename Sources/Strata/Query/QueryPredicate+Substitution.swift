import Foundation

// MARK: - Substitution

extension QueryPredicate {
    func substituting(_ values: [String: QueryExpression], bound: Set<String>) throws -> QueryPredicate {
        switch self {
        case .constant:
            return self
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituting(values, bound: bound)
            comparison.right = try comparison.right.substituting(values, bound: bound)
            return .comparison(comparison)
        case .and(let parts):
            return .and(try parts.map { try $0.substituting(values, bound: bound) })
        case .or(let parts):
            return .or(try parts.map { try $0.substituting(values, bound: bound) })
        case .not(let part):
            return .not(try part.substituting(values, bound: bound))
        }
    }
}

extension QueryExpression {
    func substituting(_ values: [String: QueryExpression], bound: Set<String>) throws -> QueryExpression {
        switch self {
        case .value, .objectID, .keyPath, .evaluatedObject:
            return self
        case .variable(let name):
            guard !bound.contains(name), let value = values[name] else { return self }
            return value
        case .keyPathOn(.variable(let name), let path) where !bound.contains(name) && values[name] != nil:
            switch values[name] {
            case .keyPath(let base)?:
                return .keyPath(base + "." + path)
            case .evaluatedObject?:
                return .keyPath(path)
            case let value? where value.isConstant:
                throw StrataError(
                    .invalidPredicate,
                    "$\(name) is followed by the key path '\(path)', so it must stand for an object or a key path; got the constant \(value). Substitute an object or key path for $\(name)."
                )
            case let value?:
                return .keyPathOn(value, path)
            case nil:
                return self
            }
        case .keyPathOn(let base, let path):
            return .keyPathOn(try base.substituting(values, bound: bound), path)
        case .list(let elements):
            return .list(try elements.map { try $0.substituting(values, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(
                collection: try collection.substituting(values, bound: bound),
                variable: variable,
                predicate: try predicate.substituting(values, bound: bound.union([variable])))
        }
    }

    /// Whether the expression is a constant value or list, which has no properties.
    fileprivate var isConstant: Bool {
        switch self {
        case .value, .list: true
        default: false
        }
    }
}
