import Foundation

/// A Foundation predicate expression that Strata can translate.
protocol FoundationTranslatableExpression: PredicateExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart
}

/// Whether a type is a collection of managed objects (a to-many relationship's value).
private func isModelCollection(_ type: Any.Type) -> Bool {
    func elementIsModel<S: Sequence>(_: S.Type) -> Bool { S.Element.self is any EntityModel.Type }
    guard let sequenceType = type as? any Sequence.Type else { return false }
    return elementIsModel(sequenceType)
}

// MARK: - Leaves

extension PredicateExpressions.Variable: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        .value(try translator.expression(for: key))
    }
}

extension PredicateExpressions.Value: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        try FoundationPredicateTranslator.constant(value)
    }
}

extension PredicateExpressions.NilLiteral: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        .value(.null)
    }
}

extension PredicateExpressions.KeyPath: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let base = try translator.fragment(for: root)
        // A property of a constant (a captured struct's field, a literal's count) is a constant.
        if case .value(let baseExpression) = base, FoundationPredicateTranslator.isConstant(baseExpression) {
            do {
                return try FoundationPredicateTranslator.constant(
                    try root.evaluate(PredicateBindings())[keyPath: keyPath])
            } catch let error as StrataError {
                throw error
            } catch {
                throw FoundationPredicateTranslator.unsupported(
                    self, "a property of a constant could not be read (\(error))")
            }
        }
        if let kind {
            return try collectionProperty(kind, of: base)
        }
        guard case .value(let baseExpression) = base else {
            throw FoundationPredicateTranslator.unsupported(
                self, "a property of \(FoundationPredicateTranslator.describe(base))")
        }
        let rootType = type(of: keyPath).rootType
        guard let modelType = rootType as? any EntityModel.Type else {
            throw FoundationPredicateTranslator.unsupported(
                self, "it reads a property of \(rootType); only stored properties of @Entity classes can be used")
        }
        if let name = modelType.propertyName(for: keyPath) {
            guard let path = FoundationPredicateTranslator.appending(name, to: baseExpression) else {
                throw FoundationPredicateTranslator.unsupported(self)
            }
            return .value(path)
        }
        if isObjectIDKeyPath {
            return .value(baseExpression)
        }
        throw StrataError(
            .unknownKey,
            "#Predicate reads a property of \(rootType) (a \(Output.self)) that is not a stored attribute or "
                + "relationship, such as a computed or @Transient property; predicates can only use stored properties.",
            entityName: modelType.entityDescription?.name ?? "\(rootType)")
    }

    /// Whether the key path reads the object's own ``EntityModel/objectID``, which names the
    /// object itself.
    private var isObjectIDKeyPath: Bool {
        guard Output.self == ObjectID.self, let modelType = Root.Output.self as? any EntityModel.Type else {
            return false
        }
        return modelType._isObjectIDKeyPath(keyPath)
    }

    /// `count`, `isEmpty`, `first` or `last` of a to-many relationship or a `filter` result.
    private func collectionProperty(
        _ kind: CommonKeyPathKind, of base: FoundationPredicatePart
    ) throws -> FoundationPredicatePart {
        if kind == .collectionIsEmpty, Root.Output.self is any StringProtocol.Type, case .value(let text) = base {
            return .condition(.comparison(text, .equalTo, .value(.string(""))))
        }
        let collection: QueryExpression
        switch base {
        case .filtered(let subquery):
            collection = subquery
        case .value(let expression) where isModelCollection(Root.Output.self):
            collection = expression
        default:
            throw FoundationPredicateTranslator.unsupported(
                self, "\(Self.describe(kind)) of a \(Root.Output.self) is not supported, only of a to-many relationship"
            )
        }
        guard let count = FoundationPredicateTranslator.appending(CollectionOperator.count.rawValue, to: collection)
        else {
            throw FoundationPredicateTranslator.unsupported(self)
        }
        switch kind {
        case .collectionCount:
            return .value(count)
        case .collectionIsEmpty:
            return .condition(.comparison(count, .equalTo, .value(.integer(0))))
        case .collectionFirst, .bidirectionalCollectionLast:
            throw FoundationPredicateTranslator.unsupported(
                self, "\(Self.describe(kind)) of a to-many relationship is not supported")
        }
    }

    private static func describe(_ kind: CommonKeyPathKind) -> String {
        switch kind {
        case .collectionCount: "count"
        case .collectionIsEmpty: "isEmpty"
        case .collectionFirst: "first"
        case .bidirectionalCollectionLast: "last"
        }
    }
}

// MARK: - Logic

extension PredicateExpressions.Conjunction: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let first = try translator.condition(translator.fragment(for: lhs))
        let second = try translator.condition(translator.fragment(for: rhs))
        return .condition(FoundationPredicateTranslator.and([first, second]))
    }
}

extension PredicateExpressions.Disjunction: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let first = try translator.condition(translator.fragment(for: lhs))
        let second = try translator.condition(translator.fragment(for: rhs))
        return .condition(FoundationPredicateTranslator.or([first, second]))
    }
}

extension PredicateExpressions.Negation: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        .condition(FoundationPredicateTranslator.not(try translator.condition(translator.fragment(for: wrapped))))
    }
}

extension PredicateExpressions.Conditional: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let test = try translator.condition(translator.fragment(for: self.test))
        let whenTrue = try translator.fragment(for: trueBranch)
        let whenFalse = try translator.fragment(for: falseBranch)
        if If.Output.self == Bool.self {
            return .condition(try translator.condition(.conditional(test, whenTrue, whenFalse)))
        }
        return .conditional(test, whenTrue, whenFalse)
    }
}

// MARK: - Comparisons

extension PredicateExpressions.Equal: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let left = try translator.fragment(for: lhs)
        let right = try translator.fragment(for: rhs)
        return .condition(try translator.compare(left, .equalTo, right))
    }
}

extension PredicateExpressions.NotEqual: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let left = try translator.fragment(for: lhs)
        let right = try translator.fragment(for: rhs)
        return .condition(try translator.compare(left, .notEqualTo, right))
    }
}

extension PredicateExpressions.Comparison: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let left = try translator.fragment(for: lhs)
        let right = try translator.fragment(for: rhs)
        let comparisonOperator: ComparisonOperator =
            switch op {
            case .lessThan: .lessThan
            case .lessThanOrEqual: .lessThanOrEqualTo
            case .greaterThan: .greaterThan
            case .greaterThanOrEqual: .greaterThanOrEqualTo
            }
        return .condition(try translator.compare(left, comparisonOperator, right))
    }
}

// MARK: - Optionals

extension PredicateExpressions.OptionalFlatMap: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let unwrapped = try translator.value(for: wrapped)
        translator.bind(variable.key, to: unwrapped)
        defer { translator.unbind(variable.key) }
        let result = try translator.fragment(for: transform)
        let present = FoundationPredicateTranslator.not(try translator.isNil(.value(unwrapped)))
        switch result {
        case .condition(let predicate):
            return .optionalCondition(predicate, present: present)
        case .optionalCondition(let predicate, let innerPresent):
            return .optionalCondition(predicate, present: FoundationPredicateTranslator.and([present, innerPresent]))
        default:
            // Key paths through a missing object are nil already.
            return result
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        // A key path through a missing object is nil, and nil matches no comparison with a value.
        try translator.fragment(for: inner)
    }
}

extension PredicateExpressions.NilCoalesce: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let value = try translator.fragment(for: lhs)
        let fallback = try translator.fragment(for: rhs)
        if case .value(let expression) = value, FoundationPredicateTranslator.isConstant(expression) {
            return expression == .null ? fallback : value
        }
        return .coalesced(value, fallback: fallback)
    }
}

// MARK: - Strings and sequences

extension PredicateExpressions.CollectionContainsCollection: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        guard Base.Output.self is any StringProtocol.Type else {
            throw FoundationPredicateTranslator.unsupported(
                self, "contains(_:) with a collection argument works only on strings")
        }
        let text = try translator.fragment(for: base)
        let part = try translator.fragment(for: other)
        return .condition(try translator.compare(text, .contains, part))
    }
}

extension PredicateExpressions.SequenceStartsWith: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        guard Base.Output.self is any StringProtocol.Type else {
            throw FoundationPredicateTranslator.unsupported(self, "starts(with:) works only on strings")
        }
        let text = try translator.fragment(for: base)
        let start = try translator.fragment(for: prefix)
        return .condition(try translator.compare(text, .beginsWith, start))
    }
}

extension PredicateExpressions.SequenceContains: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let collection = try translator.fragment(for: sequence)
        let member = try translator.fragment(for: element)
        if LHS.Output.self is any StringProtocol.Type {
            // `title.contains("x")` with a Character.
            return .condition(try translator.compare(collection, .contains, member))
        }
        switch collection {
        case .range(let lower, let upper, let includesUpper):
            return .condition(try rangeCondition(member, lower, upper, includesUpper, translator))
        case .value(let expression) where FoundationPredicateTranslator.isConstant(expression):
            return .condition(try translator.compare(member, .in, collection))
        case .value:
            // A to-many relationship or a collection attribute contains the value.
            return .condition(try translator.compare(collection, .contains, member))
        default:
            throw FoundationPredicateTranslator.unsupported(
                self, "contains(_:) on \(FoundationPredicateTranslator.describe(collection))")
        }
    }
}

extension PredicateExpressions.RangeExpressionContains: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let bounds = try translator.fragment(for: range)
        let member = try translator.fragment(for: element)
        guard case .range(let lower, let upper, let includesUpper) = bounds else {
            throw FoundationPredicateTranslator.unsupported(
                self, "contains(_:) on \(FoundationPredicateTranslator.describe(bounds))")
        }
        return .condition(try rangeCondition(member, lower, upper, includesUpper, translator))
    }
}

/// `member` lies in the range: `BETWEEN` for a closed range of constants, comparisons otherwise.
private func rangeCondition(
    _ member: FoundationPredicatePart, _ lower: QueryExpression?, _ upper: QueryExpression?, _ includesUpper: Bool,
    _ translator: FoundationPredicateTranslator
) throws -> QueryPredicate {
    if let lower, let upper, includesUpper, case .value(let value) = member,
        FoundationPredicateTranslator.isConstant(lower), FoundationPredicateTranslator.isConstant(upper),
        !FoundationPredicateTranslator.isConstant(value)
    {
        return .comparison(value, .between, .list([lower, upper]))
    }
    var parts: [QueryPredicate] = []
    if let lower { parts.append(try translator.compare(member, .greaterThanOrEqualTo, .value(lower))) }
    if let upper {
        parts.append(try translator.compare(member, includesUpper ? .lessThanOrEqualTo : .lessThan, .value(upper)))
    }
    return FoundationPredicateTranslator.and(parts)
}

extension PredicateExpressions.Range: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        .range(lower: try translator.value(for: lower), upper: try translator.value(for: upper), includesUpper: false)
    }
}

extension PredicateExpressions.ClosedRange: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        .range(lower: try translator.value(for: lower), upper: try translator.value(for: upper), includesUpper: true)
    }
}

// MARK: - To-many relationships

/// The to-many relationship a closure runs over.
private func relationshipCollection(
    _ sequence: any PredicateExpression, elementType: Any.Type, of expression: any PredicateExpression,
    _ translator: inout FoundationPredicateTranslator
) throws -> QueryExpression {
    guard elementType is any EntityModel.Type else {
        throw FoundationPredicateTranslator.unsupported(
            expression, "closures can only run over to-many relationships, not over values of type \(elementType)")
    }
    let collection = try translator.fragment(for: sequence)
    guard case .value(let value) = collection, !FoundationPredicateTranslator.isConstant(value) else {
        throw FoundationPredicateTranslator.unsupported(
            expression,
            "closures can only run over to-many relationships, not over \(FoundationPredicateTranslator.describe(collection))"
        )
    }
    return value
}

extension PredicateExpressions.SequenceContainsWhere: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let collection = try relationshipCollection(sequence, elementType: Element.self, of: self, &translator)
        let (name, body) = try translator.subqueryBody(variable: variable.key, body: test)
        return .condition(translator.anyMember(of: collection, variable: name, body: body))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let collection = try relationshipCollection(sequence, elementType: Element.self, of: self, &translator)
        let (name, body) = try translator.subqueryBody(variable: variable.key, body: test)
        return .condition(translator.everyMember(of: collection, variable: name, body: body))
    }
}

extension PredicateExpressions.Filter: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let collection = try relationshipCollection(sequence, elementType: Element.self, of: self, &translator)
        let (name, body) = try translator.subqueryBody(variable: variable.key, body: filter)
        return .filtered(.subquery(collection: collection, variable: name, predicate: body))
    }
}

// MARK: - Arithmetic on constants

/// Computes `left op right` when both sides are constants.
private func constantArithmetic(
    _ lhs: any PredicateExpression, _ rhs: any PredicateExpression,
    _ operation: FoundationPredicateTranslator.ArithmeticOperation,
    of expression: any PredicateExpression, _ translator: inout FoundationPredicateTranslator
) throws -> FoundationPredicatePart {
    let left = try translator.fragment(for: lhs)
    let right = try translator.fragment(for: rhs)
    guard case .value(.value(let first)) = left, case .value(.value(let second)) = right else {
        throw FoundationPredicateTranslator.unsupported(
            expression, "arithmetic (\(operation.rawValue)) is supported only between constants, not on stored values")
    }
    guard let result = FoundationPredicateTranslator.arithmetic(first, second, operation) else {
        throw FoundationPredicateTranslator.unsupported(
            expression, "\(first) \(operation.rawValue) \(second) overflows, divides by zero or mixes types")
    }
    return .value(.value(result))
}

extension PredicateExpressions.Arithmetic: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let operation: FoundationPredicateTranslator.ArithmeticOperation =
            switch op {
            case .add: .add
            case .subtract: .subtract
            case .multiply: .multiply
            }
        return try constantArithmetic(lhs, rhs, operation, of: self, &translator)
    }
}

extension PredicateExpressions.IntDivision: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        try constantArithmetic(lhs, rhs, .divide, of: self, &translator)
    }
}

extension PredicateExpressions.IntRemainder: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        try constantArithmetic(lhs, rhs, .remainder, of: self, &translator)
    }
}

extension PredicateExpressions.FloatDivision: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        try constantArithmetic(lhs, rhs, .divide, of: self, &translator)
    }
}

extension PredicateExpressions.UnaryMinus: FoundationTranslatableExpression {
    func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
        let operand = try translator.fragment(for: wrapped)
        guard case .value(.value(let value)) = operand else {
            throw FoundationPredicateTranslator.unsupported(
                self, "negation (-) is supported only on constants, not on stored values")
        }
        let zero: AttributeValue? =
            switch value {
            case .integer: .integer(0)
            case .double: .double(0)
            case .float: .float(0)
            case .decimal: .decimal(0)
            default: nil
            }
        guard let zero, let result = FoundationPredicateTranslator.arithmetic(zero, value, .subtract) else {
            throw FoundationPredicateTranslator.unsupported(self, "-\(value) cannot be computed")
        }
        return .value(.value(result))
    }
}

// MARK: - Apple-only string comparisons

#if canImport(Darwin)
    extension PredicateExpressions.StringLocalizedStandardContains: FoundationTranslatableExpression {
        func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
            let text = try translator.value(for: root)
            let part = try translator.value(for: other)
            return .condition(.comparison(text, .contains, part, options: [.caseInsensitive, .diacriticInsensitive]))
        }
    }

    extension PredicateExpressions.StringCaseInsensitiveCompare: FoundationTranslatableExpression {
        func translate(with translator: inout FoundationPredicateTranslator) throws -> FoundationPredicatePart {
            .stringOrdering(try translator.value(for: root), try translator.value(for: other), .caseInsensitive)
        }
    }
#endif
