import Foundation

/// A predicate checked against an entity: every key path resolved to attribute and
/// relationship numbers, every constant converted to the type it is compared with.
///
/// Both executors — the SQL compiler and the in-memory evaluator — work from this form, so a
/// predicate means the same thing to both, and every error (unknown key, type mismatch,
/// misplaced operator) is found before either runs.
package indirect enum ResolvedPredicate: Sendable {
    case constant(Bool)
    case and([ResolvedPredicate])
    case or([ResolvedPredicate])
    case not(ResolvedPredicate)
    /// A comparison of two scalar operands of one value kind.
    case compare(ResolvedOperand, ComparisonOperator, ResolvedOperand, ComparisonOptions, ValueKind)
    /// `value IN list` / `value BETWEEN {low, high}` with constants.
    case member(ResolvedOperand, [AttributeValue], ComparisonOptions, ValueKind)
    case between(ResolvedOperand, AttributeValue, AttributeValue, ValueKind)
    /// Object identity: the object an operand reaches is (not) one of these IDs.
    case objectIn(ResolvedOperand, [ObjectID], negated: Bool)
    /// A Codable attribute's JSON array (or object) has an element equal to the value.
    case jsonContains(ResolvedOperand, AttributeValue, ComparisonOptions)
    /// The operand reaches no object (an empty to-one relationship along the way).
    case objectIsNil(ResolvedOperand)
    /// `ANY`/`ALL` over the members of a to-many relationship; `body` is evaluated with the
    /// member bound to the next scope.
    case quantified(all: Bool, ResolvedCollection, body: ResolvedPredicate)
}

/// Where a key path starts: the fetched object (scope 0) or a member bound by an enclosing
/// quantifier or subquery (scope 1, 2, ...).
package struct ResolvedCollection: Sendable {
    package var scope: Int
    /// To-one relationships followed from the scope's object before the to-many one.
    package var steps: [RelationshipStep]
    /// The to-many relationship.
    package var relationship: RelationshipStep
    /// The destination entity's name (the entity of the bound member).
    package var memberEntity: String
}

/// One relationship followed in a key path.
package struct RelationshipStep: Sendable, Hashable {
    /// The entity the relationship belongs to.
    package var entityName: String
    package var number: Int
    package var name: String
    package var destinationEntityName: String
}

/// What a comparison compares.
package indirect enum ResolvedOperand: Sendable {
    case constant(AttributeValue)
    /// An attribute reached from a scope through to-one relationships.
    case attribute(scope: Int, steps: [RelationshipStep], number: Int, type: AttributeType)
    /// The object reached from a scope through to-one relationships (the scope's own object
    /// when `steps` is empty).
    case object(scope: Int, steps: [RelationshipStep])
    /// A collection operator over a to-many relationship, optionally over the members a
    /// subquery keeps; `attribute` is the member's attribute path for `@sum` and friends.
    case aggregate(
        CollectionOperator, ResolvedCollection,
        attribute: (steps: [RelationshipStep], number: Int, type: AttributeType)?,
        filter: ResolvedPredicate?)

    package var isConstant: Bool {
        if case .constant = self { return true }
        return false
    }
}

/// The kinds of value comparisons know how to order.
package enum ValueKind: Sendable, Hashable {
    case integer, double, decimal, string, boolean, date, data, uuid, url, codable

    package init(_ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64: self = .integer
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .boolean: self = .boolean
        case .date: self = .date
        case .binaryData: self = .data
        case .uuid: self = .uuid
        case .uri: self = .url
        case .codable: self = .codable
        }
    }

    package var isNumeric: Bool { self == .integer || self == .double || self == .decimal }
    package var isTextual: Bool { self == .string || self == .url }
    package var isOrdered: Bool { self != .codable }
}
