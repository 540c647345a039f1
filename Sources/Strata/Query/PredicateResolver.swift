import Foundation

/// Checks a ``QueryPredicate`` against an entity and produces its ``ResolvedPredicate``.
package struct PredicateResolver {
    let schema: Schema
    let rootEntity: Entity

    /// The entity and variable name of each scope; scope 0 is the fetched object.
    private var scopes: [(entity: Entity, variable: String?)]
    /// Whether the comparison being resolved came from a builder: values that cannot equal its
    /// left side match nothing (``QueryComparison/typeMismatchMatchesNothing``).
    private(set) var typeMismatchMatchesNothing = false

    package init(schema: Schema, entity: Entity) {
        self.schema = schema
        self.rootEntity = entity
        self.scopes = [(entity, nil)]
    }

    /// Resolves `predicate` for objects of `entity`.
    static func resolve(_ predicate: QueryPredicate, for entity: Entity, in schema: Schema) throws -> ResolvedPredicate
    {
        var resolver = PredicateResolver(schema: schema, entity: entity)
        return try resolver.resolve(predicate)
    }

    mutating func resolve(_ predicate: QueryPredicate) throws -> ResolvedPredicate {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .and(let parts): return .and(try parts.map { try resolve($0) })
        case .or(let parts): return .or(try parts.map { try resolve($0) })
        case .not(let part): return .not(try resolve(part))
        case .comparison(let comparison): return try resolve(comparison, scope: scopes.count - 1)
        }
    }

    // MARK: Operands before type checking

    /// An expression with its key paths resolved, before it is paired with the other side.
    enum Term {
        case constant(AttributeValue)
        case objects([ObjectID])
        case list([AttributeValue], objects: [ObjectID])
        case attribute(scope: Int, steps: [RelationshipStep], number: Int, type: AttributeType)
        case object(scope: Int, steps: [RelationshipStep])
        /// A to-many relationship, and the key path to follow from each member (may be empty).
        case toMany(ResolvedCollection, remainder: [String])
        case aggregate(ResolvedOperand, ValueKind)

        var isConstant: Bool {
            switch self {
            case .constant, .objects, .list: true
            default: false
            }
        }
    }

    func problem(_ message: String, key: String? = nil, entity: Entity? = nil) -> StrataError {
        StrataError(.invalidPredicate, message, entityName: (entity ?? rootEntity).name, propertyName: key)
    }

    private mutating func term(_ expression: QueryExpression, scope: Int) throws -> Term {
        switch expression {
        case .value(let value):
            if !typeMismatchMatchesNothing { try checkComparable(value) }
            return .constant(value)
        case .objectID(let id):
            return .objects([id])
        case .evaluatedObject:
            return .object(scope: scope, steps: [])
        case .keyPath(let path):
            return try keyPath(
                path.split(separator: ".", omittingEmptySubsequences: false).map(String.init), from: scope)
        case .variable(let name):
            return .object(scope: try variableScope(name), steps: [])
        case .keyPathOn(let base, let path):
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch base {
            case .variable(let name):
                return try keyPath(components, from: try variableScope(name))
            case .evaluatedObject:
                return try keyPath(components, from: scope)
            case .subquery(let collection, let variable, let predicate):
                guard components == ["@count"] else {
                    throw problem("A SUBQUERY can only be followed by @count, not '\(path)'.")
                }
                let (resolvedCollection, filter) = try subquery(
                    collection, variable: variable, predicate: predicate, scope: scope)
                return .aggregate(.aggregate(.count, resolvedCollection, attribute: nil, filter: filter), .integer)
            default:
                throw problem("A key path can only follow a variable, SELF or a SUBQUERY.")
            }
        case .list(let elements):
            var values: [AttributeValue] = []
            var objects: [ObjectID] = []
            for element in elements {
                switch element {
                case .value(let value):
                    // A builder's NaN equals nothing: leave it out.
                    if typeMismatchMatchesNothing && value.isNaN { continue }
                    try checkComparable(value)
                    values.append(value)
                case .objectID(let id): objects.append(id)
                case .list: throw problem("A list cannot contain another list.")
                default: throw problem("A list can only hold constants, not \(element).")
                }
            }
            if !values.isEmpty && !objects.isEmpty && !typeMismatchMatchesNothing {
                throw problem("A list cannot mix objects and values.")
            }
            return .list(values, objects: objects)
        case .subquery:
            throw problem("A SUBQUERY is a collection; compare its @count (SUBQUERY(...).@count > 0).")
        }
    }

    /// Refuses NaN: it is unequal to everything, itself included, so SQL (which binds it as
    /// NULL) and the in-memory evaluator would disagree on `!=`; and no store holds one.
    private func checkComparable(_ value: AttributeValue) throws {
        guard value.isNaN else { return }
        throw problem(
            "NaN cannot be compared with: it is unequal to every value, itself included, and stores refuse to save it. Test for a missing value with nil instead."
        )
    }

    private func variableScope(_ name: String) throws -> Int {
        guard let index = scopes.lastIndex(where: { $0.variable == name }) else {
            throw problem(
                "The variable $\(name) has no value; substitute it (substituting(_:)) or bind it in a SUBQUERY.")
        }
        return index
    }

    private func unknownKey(_ name: String, in entity: Entity) -> StrataError {
        StrataError(
            .unknownKey,
            "\(entity.name) has no attribute or relationship named '\(name)'."
                + didYouMean(name, in: entity.propertyNames),
            entityName: entity.name, propertyName: name)
    }

    /// The attribute a key path from the fetched object reaches, for sort descriptors and
    /// fetched properties.
    enum KeyPathTarget {
        case attribute([RelationshipStep], Int, AttributeType)
        case other
    }

    func keyPathTerm(_ components: [String]) throws -> KeyPathTarget {
        if case .attribute(_, let steps, let number, let type) = try keyPath(components, from: 0) {
            return .attribute(steps, number, type)
        }
        return .other
    }

    private func keyPath(_ components: [String], from scope: Int) throws -> Term {
        var entity = scopes[scope].entity
        var steps: [RelationshipStep] = []
        var index = 0
        if components.first == "SELF" || components.first == "self" { index = 1 }
        if index == components.count { return .object(scope: scope, steps: []) }
        while index < components.count {
            let name = components[index]
            let isLast = index == components.count - 1
            if name.hasPrefix("@") {
                throw problem(
                    "The collection operator \(name) must follow a to-many relationship.", key: name, entity: entity)
            }
            if let number = entity.attributeNumber(named: name) {
                if entity.attributes[number].isTransient {
                    throw problem(
                        "\(entity.name).\(name) is transient (not stored), so fetches cannot filter or sort by it.",
                        key: name,
                        entity: entity)
                }
                guard isLast else {
                    throw problem(
                        "\(entity.name).\(name) is an attribute; the key path cannot continue with '\(components[(index + 1)...].joined(separator: "."))'.",
                        key: name, entity: entity)
                }
                return .attribute(scope: scope, steps: steps, number: number, type: entity.attributes[number].type)
            }
            guard let number = entity.relationshipNumber(named: name) else { throw unknownKey(name, in: entity) }
            let relationship = entity.relationships[number]
            if relationship.isTransient {
                throw problem(
                    "\(entity.name).\(name) is transient (not stored), so fetches cannot filter or sort by it.",
                    key: name,
                    entity: entity)
            }
            guard let destination = schema.entity(named: relationship.destinationEntityName) else {
                throw unknownKey(name, in: entity)
            }
            let step = RelationshipStep(
                entityName: entity.name, number: number, name: name, destinationEntityName: destination.name)
            if relationship.isToMany {
                let collection = ResolvedCollection(
                    scope: scope, steps: steps, relationship: step, memberEntity: destination.name)
                let remainder = Array(components[(index + 1)...])
                if let first = remainder.first, let collectionOperator = CollectionOperator(rawValue: first) {
                    return try aggregate(
                        collectionOperator, over: collection, path: Array(remainder.dropFirst()),
                        memberEntity: destination)
                }
                return .toMany(collection, remainder: remainder)
            }
            steps.append(step)
            entity = destination
            index += 1
        }
        return .object(scope: scope, steps: steps)
    }

    private func aggregate(
        _ collectionOperator: CollectionOperator, over collection: ResolvedCollection, path: [String],
        memberEntity: Entity,
        filter: ResolvedPredicate? = nil
    ) throws -> Term {
        if collectionOperator == .count {
            guard path.isEmpty else {
                throw problem("@count ends a key path; found '.\(path.joined(separator: "."))' after it.")
            }
            return .aggregate(.aggregate(.count, collection, attribute: nil, filter: filter), .integer)
        }
        guard !path.isEmpty else {
            throw problem(
                "\(collectionOperator.rawValue) needs an attribute after it, as in \(collectionOperator.rawValue).price."
            )
        }
        // Resolve the attribute path in a temporary scope of the member entity.
        var entity = memberEntity
        var steps: [RelationshipStep] = []
        for (position, name) in path.enumerated() {
            if let number = entity.attributeNumber(named: name), position == path.count - 1 {
                let type = entity.attributes[number].type
                let kind = ValueKind(type)
                let resultKind: ValueKind
                switch collectionOperator {
                case .sum:
                    guard kind.isNumeric else {
                        throw typeProblem(
                            "\(collectionOperator.rawValue) needs a numeric attribute", entity, name, type)
                    }
                    resultKind = kind
                case .average:
                    guard kind.isNumeric else {
                        throw typeProblem("@avg needs a numeric attribute", entity, name, type)
                    }
                    resultKind = kind == .decimal ? .decimal : .double
                default:
                    guard kind.isOrdered else {
                        throw typeProblem(
                            "\(collectionOperator.rawValue) needs an ordered attribute", entity, name, type)
                    }
                    resultKind = kind
                }
                return .aggregate(
                    .aggregate(collectionOperator, collection, attribute: (steps, number, type), filter: filter),
                    resultKind)
            }
            guard let number = entity.relationshipNumber(named: name), !entity.relationships[number].isToMany,
                let destination = schema.entity(named: entity.relationships[number].destinationEntityName)
            else {
                if entity.relationship(named: name) != nil {
                    throw problem(
                        "\(collectionOperator.rawValue) can follow only to-one relationships and one attribute.",
                        key: name, entity: entity)
                }
                throw unknownKey(name, in: entity)
            }
            steps.append(
                RelationshipStep(
                    entityName: entity.name, number: number, name: name, destinationEntityName: destination.name))
            entity = destination
        }
        throw problem(
            "\(collectionOperator.rawValue).\(path.joined(separator: ".")) does not end with an attribute.",
            entity: entity)
    }

    private func typeProblem(_ what: String, _ entity: Entity, _ name: String, _ type: AttributeType) -> StrataError {
        StrataError(
            .typeMismatch, "\(what); \(entity.name).\(name) is a \(type) attribute.", entityName: entity.name,
            propertyName: name)
    }

    private mutating func subquery(
        _ collection: QueryExpression, variable: String, predicate: QueryPredicate, scope: Int
    ) throws -> (ResolvedCollection, ResolvedPredicate) {
        let collectionTerm = try term(collection, scope: scope)
        guard case .toMany(let resolvedCollection, let remainder) = collectionTerm, remainder.isEmpty,
            let member = schema.entity(named: resolvedCollection.memberEntity)
        else {
            throw problem("SUBQUERY needs a to-many relationship as its collection, not \(collection).")
        }
        scopes.append((member, variable))
        defer { scopes.removeLast() }
        return (resolvedCollection, try resolve(predicate))
    }

    // MARK: Comparisons

    private mutating func resolve(_ comparison: QueryComparison, scope: Int) throws -> ResolvedPredicate {
        let outer = typeMismatchMatchesNothing
        typeMismatchMatchesNothing = comparison.typeMismatchMatchesNothing
        defer { typeMismatchMatchesNothing = outer }
        if typeMismatchMatchesNothing, case .value(let value) = comparison.right, value.isNaN {
            return .constant(comparison.comparisonOperator == .notEqualTo)
        }
        var left = try term(comparison.left, scope: scope)
        var right = try term(comparison.right, scope: scope)
        var comparisonOperator = comparison.comparisonOperator
        // Constants go on the right: `30 < age` is `age > 30`, `%@ IN reviews` is `reviews CONTAINS %@`.
        if left.isConstant && !right.isConstant {
            let mirrored = comparisonOperator == .in ? .contains : comparisonOperator.mirrored
            if let mirrored, !(comparisonOperator == .in && isTextual(right)) {
                swap(&left, &right)
                comparisonOperator = mirrored
            }
        }
        if case .toMany(let collection, let remainder) = left {
            return try quantified(
                collection, remainder: remainder, comparisonOperator, right: comparison.right,
                options: comparison.options,
                all: comparison.modifier == .all, scope: scope)
        }
        if comparison.modifier != .direct {
            throw problem(
                "\(comparison.modifier.rawValue) needs a key path through a to-many relationship on the left.")
        }
        return try compare(left, comparisonOperator, right, options: comparison.options)
    }

    private func isTextual(_ term: Term) -> Bool {
        if case .attribute(_, _, _, let type) = term { return ValueKind(type).isTextual }
        return false
    }

    private mutating func quantified(
        _ collection: ResolvedCollection, remainder: [String], _ comparisonOperator: ComparisonOperator,
        right: QueryExpression, options: ComparisonOptions, all: Bool, scope: Int
    ) throws -> ResolvedPredicate {
        guard let member = schema.entity(named: collection.memberEntity) else {
            throw problem("Unknown destination \(collection.memberEntity).")
        }
        let rightTerm = try term(right, scope: scope)
        scopes.append((member, nil))
        defer { scopes.removeLast() }
        let memberScope = scopes.count - 1
        let left: Term
        if remainder.isEmpty {
            // `reviews CONTAINS %@`, `ANY reviews IN %@`, `ANY reviews == %@`.
            left = .object(scope: memberScope, steps: [])
            let memberOperator: ComparisonOperator
            switch comparisonOperator {
            case .contains, .equalTo: memberOperator = .equalTo
            case .in: memberOperator = .in
            case .notEqualTo: memberOperator = .notEqualTo
            default:
                throw problem(
                    "\(collection.relationship.name) is a to-many relationship; compare it with CONTAINS, IN or ==, or use @count.",
                    key: collection.relationship.name)
            }
            let body = try compare(left, memberOperator, rightTerm, options: options)
            return .quantified(all: all, collection, body: body)
        }
        left = try keyPath(remainder, from: memberScope)
        if case .toMany = left {
            throw problem(
                "The key path \(collection.relationship.name).\(remainder.joined(separator: ".")) crosses more than one to-many relationship; use SUBQUERY.",
                key: collection.relationship.name)
        }
        let body = try compare(left, comparisonOperator, rightTerm, options: options)
        return .quantified(all: all, collection, body: body)
    }
}
