import Foundation

/// Evaluates a having predicate on the rows of a grouped dictionary fetch: key paths name
/// fetched properties, the other side is a constant.
enum HavingEvaluator {
    static func evaluate(_ predicate: QueryPredicate, on row: [String: AttributeValue]) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts): return try parts.allSatisfy { try evaluate($0, on: row) }
        case .or(let parts): return try parts.contains { try evaluate($0, on: row) }
        case .not(let part): return try !evaluate(part, on: row)
        case .comparison(let comparison):
            guard case .keyPath(let key) = comparison.left else {
                throw StrataError(
                    .invalidPredicate, "A having predicate compares a fetched property (by its name) with a value.")
            }
            guard let value = row[key] else {
                throw StrataError(
                    .unknownKey,
                    "The having predicate names '\(key)', which is not a fetched property."
                        + didYouMean(key, in: row.keys),
                    propertyName: key)
            }
            let kind = kind(of: value)
            func constant(_ expression: QueryExpression) throws -> AttributeValue {
                guard case .value(let constant) = expression else {
                    throw StrataError(
                        .invalidPredicate, "A having predicate compares \(key) with a constant.", propertyName: key)
                }
                return constant
            }
            switch comparison.comparisonOperator {
            case .in:
                guard case .list(let items) = comparison.right else {
                    throw StrataError(.invalidPredicate, "IN needs a list.")
                }
                return try items.contains { ValueComparison.compare(value, try constant($0), as: kind) == 0 }
            case .between:
                guard case .list(let items) = comparison.right, items.count == 2 else {
                    throw StrataError(.invalidPredicate, "BETWEEN needs a list of two values.")
                }
                guard let low = ValueComparison.compare(value, try constant(items[0]), as: kind),
                    let high = ValueComparison.compare(value, try constant(items[1]), as: kind)
                else { return false }
                return low >= 0 && high <= 0
            default:
                let other = try constant(comparison.right)
                let order = ValueComparison.compare(value, other, as: kind)
                switch comparison.comparisonOperator {
                case .equalTo: return value.isNull ? other.isNull : order == 0
                case .notEqualTo: return value.isNull ? !other.isNull : order != 0
                case .lessThan: return order.map { $0 < 0 } ?? false
                case .lessThanOrEqualTo: return order.map { $0 <= 0 } ?? false
                case .greaterThan: return order.map { $0 > 0 } ?? false
                case .greaterThanOrEqualTo: return order.map { $0 >= 0 } ?? false
                default:
                    throw StrataError(
                        .invalidPredicate, "A having predicate supports ==, !=, <, <=, >, >=, IN and BETWEEN.",
                        propertyName: key)
                }
            }
        }
    }

    private static func kind(of value: AttributeValue) -> ValueKind {
        switch value {
        case .decimal: .decimal
        case .string, .url: .string
        case .data, .codable: .data
        case .uuid: .uuid
        default: .double
        }
    }
}
