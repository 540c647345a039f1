import Foundation

extension PredicateResolver {
    private func operand(_ term: Term) -> (ResolvedOperand, ValueKind?)? {
        switch term {
        case .constant(let value): return (.constant(value), nil)
        case .attribute(let scope, let steps, let number, let type):
            return (.attribute(scope: scope, steps: steps, number: number, type: type), ValueKind(type))
        case .aggregate(let operand, let kind): return (operand, kind)
        case .object(let scope, let steps): return (.object(scope: scope, steps: steps), nil)
        default: return nil
        }
    }

    private func describe(_ term: Term) -> String {
        switch term {
        case .constant(let value): "the value \(value)"
        case .objects: "an object"
        case .list: "a list"
        case .attribute(_, let steps, let number, let type):
            "\(steps.map(\.name).map { $0 + "." }.joined())\(attributeName(steps, number)) (\(type))"
        case .object(_, let steps): steps.isEmpty ? "SELF" : steps.map(\.name).joined(separator: ".")
        case .toMany(let collection, _): collection.relationship.name
        case .aggregate: "a collection operator"
        }
    }

    private func attributeName(_ steps: [RelationshipStep], _ number: Int) -> String {
        let entityName = steps.last?.destinationEntityName
        let entity = entityName.flatMap { schema.entity(named: $0) } ?? rootEntity
        return number < entity.attributes.count ? entity.attributes[number].name : "#\(number)"
    }

    private func mismatch(_ left: Term, _ comparisonOperator: ComparisonOperator, _ right: Term) -> StrataError {
        var key: String?
        if case .attribute(_, let steps, let number, _) = left { key = attributeName(steps, number) }
        return StrataError(
            .typeMismatch, "Cannot compare \(describe(left)) \(comparisonOperator.rawValue) \(describe(right)).",
            entityName: rootEntity.name, propertyName: key)
    }

    func compare(
        _ left: Term, _ comparisonOperator: ComparisonOperator, _ right: Term, options: ComparisonOptions
    ) throws -> ResolvedPredicate {
        do {
            return try compareStrictly(left, comparisonOperator, right, options: options)
        } catch let error as StrataError where error.code == .typeMismatch && typeMismatchMatchesNothing {
            // A builder's value that cannot equal the left side (a number for a string, a
            // string for a relationship): Core Data finds no match.
            switch comparisonOperator {
            case .equalTo, .in: return .constant(false)
            case .notEqualTo: return .constant(true)
            default: throw error
            }
        }
    }

    private func compareStrictly(
        _ left: Term, _ comparisonOperator: ComparisonOperator, _ right: Term, options: ComparisonOptions
    ) throws -> ResolvedPredicate {
        // Objects: identity and nil checks.
        if case .object = left {
            guard let (leftOperand, _) = operand(left) else { throw mismatch(left, comparisonOperator, right) }
            switch (comparisonOperator, right) {
            case (.equalTo, .constant(.null)): return .objectIsNil(leftOperand)
            case (.notEqualTo, .constant(.null)): return .not(.objectIsNil(leftOperand))
            case (.equalTo, .objects(let ids)), (.in, .objects(let ids)), (.in, .list([], let ids)):
                return .objectIn(leftOperand, ids, negated: false)
            case (.notEqualTo, .objects(let ids)):
                return .objectIn(leftOperand, ids, negated: true)
            case (.in, .list(let values, _)) where values.isEmpty:
                return .constant(false)
            case (.in, .list(_, let ids)) where typeMismatchMatchesNothing:
                // A builder's mixed list: the objects in it; its values match nothing.
                return ids.isEmpty ? .constant(false) : .objectIn(leftOperand, ids, negated: false)
            default:
                throw mismatch(left, comparisonOperator, right)
            }
        }
        guard let (leftOperand, leftKindOrNil) = operand(left) else { throw mismatch(left, comparisonOperator, right) }
        switch comparisonOperator {
        case .between:
            guard case .list(let bounds, let objects) = right, objects.isEmpty, bounds.count == 2,
                let kind = leftKindOrNil
            else {
                throw problem("BETWEEN needs a list of two values, as in BETWEEN {1, 10}.")
            }
            guard kind.isOrdered else { throw mismatch(left, comparisonOperator, right) }
            let low = try convert(bounds[0], to: kind, left: left, comparisonOperator)
            let high = try convert(bounds[1], to: kind, left: left, comparisonOperator)
            return .between(
                leftOperand, low.value, high.value, low.kind == .double || high.kind == .double ? .double : kind)
        case .in:
            if case .list(let values, let objects) = right {
                // A builder's mixed list: its values; its objects match no attribute.
                guard objects.isEmpty || typeMismatchMatchesNothing, let kind = leftKindOrNil else {
                    throw mismatch(left, comparisonOperator, right)
                }
                var converted: [AttributeValue] = []
                var listKind = kind
                for value in values {
                    // Builders' values that cannot equal the attribute match nothing (Core Data).
                    guard let result = try lenient({ try convert(value, to: kind, left: left, comparisonOperator) })
                    else { continue }
                    if result.kind == .double && kind == .integer { listKind = .double }
                    converted.append(options.isEmpty || !kind.isTextual ? result.value : folded(result.value, options))
                }
                if converted.isEmpty && (!values.isEmpty || !objects.isEmpty) { return .constant(false) }
                return .member(leftOperand, converted, kind.isTextual ? options : [], listKind)
            }
            // `title IN "some text"`: the title is a substring of the text.
            guard case .constant(.string(let text)) = right, leftKindOrNil?.isTextual == true else {
                throw mismatch(left, comparisonOperator, right)
            }
            return .compare(.constant(folded(.string(text), options)), .contains, leftOperand, options, .string)
        case .contains where leftKindOrNil == .codable:
            // `tags CONTAINS "x"` on a Codable array (or the values of a Codable struct).
            guard case .constant(let value) = right, !value.isNull else {
                throw mismatch(left, comparisonOperator, right)
            }
            switch value {
            case .string, .integer, .double, .float, .boolean:
                return .jsonContains(leftOperand, folded(value, options), options)
            default:
                throw mismatch(left, comparisonOperator, right)
            }
        case .contains, .beginsWith, .endsWith, .like, .matches:
            guard let leftKind = leftKindOrNil, leftKind.isTextual, let (rightOperand, rightKind) = operand(right)
            else {
                throw mismatch(left, comparisonOperator, right)
            }
            if case .constant(let value) = rightOperand {
                guard case .string(let text) = value else {
                    if value.isNull { return .constant(false) }
                    throw mismatch(left, comparisonOperator, right)
                }
                if comparisonOperator == .matches {
                    do {
                        _ = try RegularExpressionCache.shared.expression(for: text, options: options)
                    } catch {
                        throw problem(
                            "MATCHES has an invalid regular expression '\(text)': \(error.localizedDescription)")
                    }
                }
                // A regular expression is not folded: `\D` must not become `\d`.
                let pattern = comparisonOperator == .matches ? value : folded(value, options)
                return .compare(leftOperand, comparisonOperator, .constant(pattern), options, .string)
            }
            guard rightKind?.isTextual == true, comparisonOperator != .like, comparisonOperator != .matches else {
                throw mismatch(left, comparisonOperator, right)
            }
            return .compare(leftOperand, comparisonOperator, rightOperand, options, .string)
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            let isOrdering = comparisonOperator != .equalTo && comparisonOperator != .notEqualTo
            if case .constant(let value) = right {
                guard let kind = leftKindOrNil else { throw mismatch(left, comparisonOperator, right) }
                if value.isNull {
                    return isOrdering
                        ? .constant(false) : .compare(leftOperand, comparisonOperator, .constant(.null), [], kind)
                }
                if isOrdering && !kind.isOrdered { throw mismatch(left, comparisonOperator, right) }
                // A builder's mismatch is answered by `compare`, which catches it.
                let converted = try convert(value, to: kind, left: left, comparisonOperator)
                let textOptions = kind.isTextual ? options : []
                return .compare(
                    leftOperand, comparisonOperator, .constant(folded(converted.value, textOptions)), textOptions,
                    converted.kind)
            }
            guard let (rightOperand, rightKindOrNil) = operand(right), let leftKind = leftKindOrNil,
                let rightKind = rightKindOrNil
            else {
                throw mismatch(left, comparisonOperator, right)
            }
            var kind = leftKind
            if leftKind != rightKind {
                guard leftKind.isNumeric && rightKind.isNumeric && leftKind != .decimal && rightKind != .decimal else {
                    throw mismatch(left, comparisonOperator, right)
                }
                kind = .double
            }
            if isOrdering && !kind.isOrdered { throw mismatch(left, comparisonOperator, right) }
            return .compare(leftOperand, comparisonOperator, rightOperand, kind.isTextual ? options : [], kind)
        }
    }

    /// Converts a constant for comparison with a value of `kind`; returns the kind to compare as
    /// (``ValueKind/double`` when an integer is compared with a fraction).
    /// `convert`'s answer, or `nil` when it finds a type mismatch in a comparison built by a
    /// builder, which then matches nothing instead of failing.
    private func lenient(
        _ convert: () throws -> (value: AttributeValue, kind: ValueKind)
    ) throws -> (value: AttributeValue, kind: ValueKind)? {
        do {
            return try convert()
        } catch let error as StrataError where error.code == .typeMismatch && typeMismatchMatchesNothing {
            return nil
        }
    }

    private func convert(
        _ value: AttributeValue, to kind: ValueKind, left: Term, _ comparisonOperator: ComparisonOperator
    ) throws -> (value: AttributeValue, kind: ValueKind) {
        if value.isNull { return (.null, kind) }
        switch (kind, value) {
        case (.integer, .integer), (.double, .double), (.decimal, .decimal), (.string, .string), (.boolean, .boolean),
            (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url), (.codable, .codable):
            return (value, kind)
        case (.integer, .double(let number)):
            if let exact = Int64(exactly: number) { return (.integer(exact), .integer) }
            return (value, .double)
        case (.integer, .float(let number)):
            if let exact = Int64(exactly: number) { return (.integer(exact), .integer) }
            return (.double(Double(number)), .double)
        case (.integer, .decimal(let number)):
            let double = NSDecimalNumber(decimal: number).doubleValue
            if let exact = Int64(exactly: double), Decimal(exact) == number { return (.integer(exact), .integer) }
            return (.double(double), .double)
        case (.integer, .boolean(let flag)):
            return (.integer(flag ? 1 : 0), .integer)
        case (.double, .integer(let number)):
            return (.double(Double(number)), .double)
        case (.double, .float(let number)):
            return (.double(Double(number)), .double)
        case (.double, .decimal(let number)):
            return (.double(NSDecimalNumber(decimal: number).doubleValue), .double)
        case (.decimal, .integer), (.decimal, .double), (.decimal, .float):
            if let converted = value.converted(to: .decimal) { return (converted, .decimal) }
        case (.boolean, .integer(let number)) where number == 0 || number == 1:
            return (.boolean(number == 1), .boolean)
        case (.date, .integer(let number)):
            return (.date(Date(timeIntervalSinceReferenceDate: Double(number))), .date)
        case (.date, .double(let number)):
            return (.date(Date(timeIntervalSinceReferenceDate: number)), .date)
        case (.uuid, .string(let text)):
            if let uuid = UUID(uuidString: text) { return (.uuid(uuid), .uuid) }
        case (.url, .string(let text)):
            if let url = URL(string: text) { return (.url(url), .url) }
        case (.string, .url(let url)):
            return (.string(url.absoluteString), .string)
        default:
            break
        }
        throw mismatch(left, comparisonOperator, .constant(value))
    }

    private func folded(_ value: AttributeValue, _ options: ComparisonOptions) -> AttributeValue {
        guard !options.isEmpty else { return value }
        switch value {
        case .string(let text): return .string(StringFolding.fold(text, options))
        case .url(let url): return .string(StringFolding.fold(url.absoluteString, options))
        default: return value
        }
    }
}
