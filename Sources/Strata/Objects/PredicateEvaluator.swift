import Foundation

/// Evaluates a ``ResolvedPredicate`` on managed objects, in memory, with the meaning the SQL
/// compiler gives it.
///
/// Objects are read in their current state: unsaved edits count, faults are fired and to-many
/// relationships loaded as needed.
struct PredicateEvaluator {
    let predicate: ResolvedPredicate

    func evaluate(_ object: ManagedObject) -> Bool {
        var scopes = [object]
        return Self.evaluate(predicate, &scopes)
    }

    static func evaluate(_ predicate: ResolvedPredicate, _ scopes: inout [ManagedObject]) -> Bool {
        switch predicate {
        case .constant(let value):
            return value
        case .and(let parts):
            for part in parts where !evaluate(part, &scopes) { return false }
            return true
        case .or(let parts):
            for part in parts where evaluate(part, &scopes) { return true }
            return false
        case .not(let part):
            return !evaluate(part, &scopes)
        case .compare(let left, let comparisonOperator, let right, let options, let kind):
            return compare(
                value(left, scopes, options), comparisonOperator, value(right, scopes, options), options, kind)
        case .member(let operand, let values, let options, let kind):
            let value = value(operand, scopes, options)
            if value.isNull { return false }
            return values.contains { ValueComparison.compare(value, $0, as: kind) == 0 }
        case .between(let operand, let low, let high, let kind):
            let value = value(operand, scopes, [])
            guard let above = ValueComparison.compare(value, low, as: kind),
                let below = ValueComparison.compare(value, high, as: kind)
            else { return false }
            return above >= 0 && below <= 0
        case .objectIn(let operand, let ids, let negated):
            let id = object(operand, scopes)?.objectID
            let found = id.map { ids.contains($0) } ?? false
            return negated ? !found : found
        case .jsonContains(let operand, let wanted, let options):
            guard case .codable(let json) = value(operand, scopes, []) else { return false }
            return JSONElements.elements(of: json).contains { JSONElements.matches($0, wanted, options) }
        case .objectIsNil(let operand):
            return object(operand, scopes) == nil
        case .quantified(let all, let collection, let body):
            for member in members(collection, scopes) {
                scopes.append(member)
                let holds = evaluate(body, &scopes)
                scopes.removeLast()
                if all && !holds { return false }
                if !all && holds { return true }
            }
            return all
        }
    }

    private static func compare(
        _ left: AttributeValue, _ comparisonOperator: ComparisonOperator, _ right: AttributeValue,
        _ options: ComparisonOptions,
        _ kind: ValueKind
    ) -> Bool {
        switch comparisonOperator {
        case .equalTo:
            if left.isNull || right.isNull { return left.isNull && right.isNull }
            return ValueComparison.compare(left, right, as: kind) == 0
        case .notEqualTo:
            if left.isNull || right.isNull { return left.isNull != right.isNull }
            return ValueComparison.compare(left, right, as: kind) != 0
        case .lessThan: return ValueComparison.compare(left, right, as: kind).map { $0 < 0 } ?? false
        case .lessThanOrEqualTo: return ValueComparison.compare(left, right, as: kind).map { $0 <= 0 } ?? false
        case .greaterThan: return ValueComparison.compare(left, right, as: kind).map { $0 > 0 } ?? false
        case .greaterThanOrEqualTo: return ValueComparison.compare(left, right, as: kind).map { $0 >= 0 } ?? false
        case .contains, .beginsWith, .endsWith, .like, .matches:
            guard let text = ValueComparison.text(left), let pattern = ValueComparison.text(right) else { return false }
            switch comparisonOperator {
            case .contains: return StringMatching.contains(text, pattern)
            case .beginsWith: return StringMatching.beginsWith(text, pattern)
            case .endsWith: return StringMatching.endsWith(text, pattern)
            case .like: return StringMatching.like(text, pattern)
            default: return (try? StringMatching.matches(text, pattern, options: options)) ?? false
            }
        case .between, .in:
            return false  // resolved into .between and .member
        }
    }

    /// The value of an operand; strings folded when `options` ask for it (constants are
    /// folded by the resolver already).
    static func value(_ operand: ResolvedOperand, _ scopes: [ManagedObject], _ options: ComparisonOptions)
        -> AttributeValue
    {
        switch operand {
        case .constant(let value):
            return value
        case .attribute(let scope, let steps, let number, _):
            guard let object = follow(steps, from: scopes[scope]) else { return .null }
            let value = attribute(number, of: object)
            // MATCHES folds inside the regular expression match.
            if options.isEmpty { return value }
            guard let text = ValueComparison.text(value) else { return value }
            return .string(StringFolding.fold(text, options))
        case .object:
            return .null
        case .aggregate(let collectionOperator, let collection, let attributePath, let filter):
            var objects = members(collection, scopes)
            if let filter {
                var inner = scopes
                objects = objects.filter { member in
                    inner.append(member)
                    defer { inner.removeLast() }
                    return evaluate(filter, &inner)
                }
            }
            guard collectionOperator != .count else { return .integer(Int64(objects.count)) }
            guard let attributePath else { return .null }
            // Members whose value is nil do not count, as SQL aggregates skip NULL. (Not
            // `value.isNull ? nil : value`: that `nil` is an AttributeValue literal, `.null`.)
            let values = objects.compactMap { member -> AttributeValue? in
                guard let target = follow(attributePath.steps, from: member) else { return nil }
                let value = attribute(attributePath.number, of: target)
                guard !value.isNull else { return Optional.none }
                return value
            }
            let result = aggregate(collectionOperator, values, type: attributePath.type)
            guard !options.isEmpty, let text = ValueComparison.text(result) else { return result }
            return .string(StringFolding.fold(text, options))
        }
    }

    static func aggregate(_ collectionOperator: CollectionOperator, _ values: [AttributeValue], type: AttributeType)
        -> AttributeValue
    {
        let kind = ValueKind(type)
        switch collectionOperator {
        case .count:
            return .integer(Int64(values.count))
        case .sum, .average:
            let isAverage = collectionOperator == .average
            if isAverage && values.isEmpty { return .null }
            switch kind {
            case .decimal:
                let total = values.compactMap(ValueComparison.decimal).reduce(Decimal(0), +)
                return .decimal(isAverage ? total / Decimal(values.count) : total)
            case .integer:
                var sum = IntegerSum()
                for case .integer(let number) in values { sum.add(number) }
                return isAverage ? sum.average : sum.sum
            default:
                var sum = DoubleSum()
                for value in values {
                    switch value {
                    case .double(let number): sum.add(number)
                    case .float(let number): sum.add(Double(number))
                    case .integer(let number): sum.add(Double(number))
                    default: break
                    }
                }
                return isAverage ? sum.average : sum.sum
            }
        case .min, .max:
            var best: AttributeValue?
            for value in values {
                guard let current = best else {
                    best = value
                    continue
                }
                let order = ValueComparison.compare(value, current, as: kind) ?? 0
                if (collectionOperator == .min && order < 0) || (collectionOperator == .max && order > 0) {
                    best = value
                }
            }
            return best ?? .null
        }
    }

    static func object(_ operand: ResolvedOperand, _ scopes: [ManagedObject]) -> ManagedObject? {
        guard case .object(let scope, let steps) = operand else { return nil }
        return follow(steps, from: scopes[scope])
    }

    static func follow(_ steps: [RelationshipStep], from object: ManagedObject) -> ManagedObject? {
        var current = object
        for step in steps {
            if current._isFault { current._fireFault() }
            guard step.number < current._relationships.count,
                case .toOne(let next) = current.relationshipValue(at: step.number), let next
            else { return nil }
            current = next
        }
        return current
    }

    static func attribute(_ number: Int, of object: ManagedObject) -> AttributeValue {
        if object._isFault { object._fireFault() }
        return number < object._values.count ? object._values[number] : .null
    }

    static func members(_ collection: ResolvedCollection, _ scopes: [ManagedObject]) -> [ManagedObject] {
        guard let owner = follow(collection.steps, from: scopes[collection.scope]) else { return [] }
        if owner._isFault { owner._fireFault() }
        guard collection.relationship.number < owner._relationships.count else { return [] }
        return owner.relationshipValue(at: collection.relationship.number).objects.filter { !$0.isDeleted }
    }
}
