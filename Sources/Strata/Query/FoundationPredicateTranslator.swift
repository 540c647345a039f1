import Foundation

// MARK: - Translator

/// Walks a Foundation predicate expression and builds a ``QueryPredicate``.
struct FoundationPredicateTranslator {
    typealias Part = FoundationPredicatePart

    /// What a closure parameter stands for.
    private struct Binding {
        var expression: QueryExpression
        /// Whether the expression is relative to the predicate's object; such expressions mean
        /// something else inside a subquery, where key paths start at the member.
        var isRootRelative: Bool
    }

    private var bindings: [PredicateExpressions.VariableID: Binding]
    private var subqueryDepth = 0
    private var variableCount = 0
    /// The model class's name, for messages.
    let modelName: String

    init(root: PredicateExpressions.VariableID, modelName: String) {
        bindings = [root: Binding(expression: .evaluatedObject, isRootRelative: true)]
        self.modelName = modelName
    }

    // MARK: Dispatch

    /// Translates any predicate expression.
    mutating func fragment(for expression: any PredicateExpression) throws -> Part {
        guard let translatable = expression as? any FoundationTranslatableExpression else {
            throw Self.unsupported(expression)
        }
        return try translatable.translate(with: &self)
    }

    /// Translates an expression that must produce a value (not a condition).
    mutating func value(for expression: any PredicateExpression) throws -> QueryExpression {
        let part = try fragment(for: expression)
        guard case .value(let value) = part else {
            throw Self.unsupported(expression, "its result cannot be used as a value here")
        }
        return value
    }

    // MARK: Variables

    func expression(for variable: PredicateExpressions.VariableID) throws -> QueryExpression {
        guard let binding = bindings[variable] else {
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate uses a variable that is not one of its closure parameters, which Strata cannot translate.")
        }
        if binding.isRootRelative && subqueryDepth > 0 {
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate refers to the \(modelName) being tested from inside a contains(where:), allSatisfy or filter "
                    + "closure, which Strata cannot translate; compare with a captured constant instead, or use "
                    + "FetchPredicate(format:) with SUBQUERY.")
        }
        return binding.expression
    }

    /// Makes `variable` stand for `expression` (an optional's unwrapped value in `flatMap`).
    mutating func bind(_ variable: PredicateExpressions.VariableID, to expression: QueryExpression) {
        bindings[variable] = Binding(expression: expression, isRootRelative: Self.isRootRelative(expression))
    }

    mutating func unbind(_ variable: PredicateExpressions.VariableID) {
        bindings[variable] = nil
    }

    /// Translates the body of a closure over the members of a to-many relationship, with the
    /// closure's parameter as a new subquery variable; returns the variable's name and the body.
    mutating func subqueryBody(
        variable: PredicateExpressions.VariableID, body: any PredicateExpression
    ) throws -> (variable: String, predicate: QueryPredicate) {
        variableCount += 1
        let name = "v\(variableCount)"
        bindings[variable] = Binding(expression: .variable(name), isRootRelative: false)
        subqueryDepth += 1
        defer {
            subqueryDepth -= 1
            bindings[variable] = nil
        }
        return (name, try condition(fragment(for: body)))
    }

    private static func isRootRelative(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .evaluatedObject, .keyPath: true
        case .keyPathOn(let base, _): isRootRelative(base)
        case .subquery(let collection, _, _): isRootRelative(collection)
        case .value, .objectID, .variable, .list: false
        }
    }

    // MARK: Errors

    /// `PredicateExpressions.Equal`, without generic arguments or module.
    static func constructName(_ expression: any PredicateExpression) -> String {
        let full = String(reflecting: type(of: expression))
        let outer = full.prefix { $0 != "<" }
        return outer.split(separator: ".").suffix(2).joined(separator: ".")
    }

    static func unsupported(_ expression: any PredicateExpression, _ reason: String? = nil) -> StrataError {
        let name = constructName(expression)
        var message = "#Predicate uses \(name), which Strata cannot translate"
        if let reason = reason ?? hint(for: name) {
            message += ": \(reason)"
        }
        return StrataError(.unsupportedPredicate, message + ".")
    }

    private static func hint(for construct: String) -> String? {
        switch construct {
        case "PredicateExpressions.TypeCheck", "PredicateExpressions.ConditionalCast", "PredicateExpressions.ForceCast":
            "type checks and casts (is, as?, as!) are not supported; fetch the subclass instead"
        case "PredicateExpressions.StringContainsRegex":
            "regular expressions are not supported; use FetchPredicate(format:) with MATCHES"
        case "PredicateExpressions.StringLocalizedCompare":
            "locale-dependent ordering is not supported; use caseInsensitiveCompare or plain comparisons"
        case "PredicateExpressions.CollectionIndexSubscript", "PredicateExpressions.CollectionRangeSubscript",
            "PredicateExpressions.DictionaryKeySubscript", "PredicateExpressions.DictionaryKeyDefaultValueSubscript":
            "subscripts are not supported"
        case "PredicateExpressions.SequenceMaximum", "PredicateExpressions.SequenceMinimum":
            "max() and min() are not supported; use FetchPredicate(format:) with @max or @min"
        case "PredicateExpressions.PredicateEvaluate", "PredicateExpressions.ExpressionEvaluate":
            "evaluating another predicate or expression is not supported; combine FetchPredicates with && and || instead"
        default: nil
        }
    }

    // MARK: Conditions

    /// The condition a fragment stands for when it is used as a Boolean.
    func condition(_ part: Part) throws -> QueryPredicate {
        switch part {
        case .condition(let predicate):
            return predicate
        case .value(.value(.boolean(let flag))):
            return .constant(flag)
        case .value(let expression):
            if Self.isConstant(expression) {
                throw StrataError(
                    .unsupportedPredicate,
                    "#Predicate uses the constant \(expression) as a condition, which Strata cannot translate.")
            }
            return .comparison(expression, .equalTo, .value(.boolean(true)))
        case .optionalCondition(let predicate, let present):
            return Self.and([present, predicate])
        case .conditional(let test, let whenTrue, let whenFalse):
            return Self.or([
                Self.and([test, try condition(whenTrue)]), Self.and([Self.not(test), try condition(whenFalse)]),
            ])
        case .coalesced(let value, let fallback):
            return Self.or([try condition(value), Self.and([try isNil(value), try condition(fallback)])])
        case .filtered, .range, .stringOrdering, .ordering:
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate uses \(Self.describe(part)) as a condition, which Strata cannot translate.")
        }
    }

    /// The condition that a Boolean fragment is `false` (not `nil`).
    private func falseCondition(_ part: Part) throws -> QueryPredicate {
        switch part {
        case .value(let expression) where !Self.isConstant(expression):
            return .comparison(expression, .equalTo, .value(.boolean(false)))
        case .optionalCondition(let predicate, let present):
            return Self.and([present, Self.not(predicate)])
        default:
            return Self.not(try condition(part))
        }
    }

    /// The condition that an optional fragment is `nil`.
    func isNil(_ part: Part) throws -> QueryPredicate {
        switch part {
        case .value(let expression):
            if case .value(let constant) = expression { return .constant(constant.isNull) }
            if Self.isConstant(expression) { return .constant(false) }
            return .comparison(expression, .equalTo, .null)
        case .optionalCondition(_, let present):
            return Self.not(present)
        case .coalesced(let value, let fallback):
            return Self.and([try isNil(value), try isNil(fallback)])
        case .conditional(let test, let whenTrue, let whenFalse):
            return Self.or([Self.and([test, try isNil(whenTrue)]), Self.and([Self.not(test), try isNil(whenFalse)])])
        case .condition, .filtered, .range, .stringOrdering, .ordering:
            return .constant(false)
        }
    }

    // MARK: Comparisons

    /// `left op right`, distributing `??` and `? :` over the comparison.
    func compare(_ left: Part, _ comparisonOperator: ComparisonOperator, _ right: Part) throws -> QueryPredicate {
        switch (left, right) {
        case (.conditional(let test, let whenTrue, let whenFalse), _):
            return Self.or([
                Self.and([test, try compare(whenTrue, comparisonOperator, right)]),
                Self.and([Self.not(test), try compare(whenFalse, comparisonOperator, right)]),
            ])
        case (_, .conditional(let test, let whenTrue, let whenFalse)):
            return Self.or([
                Self.and([test, try compare(left, comparisonOperator, whenTrue)]),
                Self.and([Self.not(test), try compare(left, comparisonOperator, whenFalse)]),
            ])
        case (.coalesced(let value, let fallback), _):
            return try coalescedComparison(value, fallback, other: right) { try compare($0, comparisonOperator, $1) }
        case (_, .coalesced(let value, let fallback)):
            return try coalescedComparison(value, fallback, other: left) { try compare($1, comparisonOperator, $0) }
        case (.stringOrdering(let first, let second, let options), .ordering(let result)):
            return try stringOrdering(first, second, options, comparisonOperator, result)
        case (.ordering(let result), .stringOrdering(let first, let second, let options)):
            return try stringOrdering(first, second, options, comparisonOperator, result)
        case (.condition, _), (_, .condition), (.optionalCondition, _), (_, .optionalCondition):
            return try booleanComparison(left, comparisonOperator, right)
        case (.value(let leftValue), .value(let rightValue)):
            if let folded = Self.fold(leftValue, comparisonOperator, rightValue) { return .constant(folded) }
            return .comparison(leftValue, comparisonOperator, rightValue)
        default:
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate compares \(Self.describe(left)) with \(Self.describe(right)) "
                    + "(\(comparisonOperator.rawValue)), which Strata cannot translate.")
        }
    }

    /// `(value ?? fallback) op other`: `(value op other) OR (value == nil AND fallback op other)`,
    /// with `value != nil` added to the first branch unless `op` is `==` against a non-nil constant.
    private func coalescedComparison(
        _ value: Part, _ fallback: Part, other: Part,
        _ comparison: (Part, Part) throws -> QueryPredicate
    ) throws -> QueryPredicate {
        let valueIsNil = try isNil(value)
        var first = try comparison(value, other)
        let needsGuard: Bool
        if case .comparison(let single) = first, single.comparisonOperator == .equalTo,
            case .value(.value(let constant)) = other,
            !constant.isNull
        {
            needsGuard = false
        } else {
            needsGuard = true
        }
        if needsGuard { first = Self.and([Self.not(valueIsNil), first]) }
        return Self.or([first, Self.and([valueIsNil, try comparison(fallback, other)])])
    }

    /// `a.caseInsensitiveCompare(b) == .orderedAscending` and friends.
    private func stringOrdering(
        _ first: QueryExpression, _ second: QueryExpression, _ options: ComparisonOptions,
        _ comparisonOperator: ComparisonOperator, _ result: ComparisonResult
    ) throws -> QueryPredicate {
        let equal: ComparisonOperator
        let notEqual: ComparisonOperator
        switch result {
        case .orderedAscending: (equal, notEqual) = (.lessThan, .greaterThanOrEqualTo)
        case .orderedSame: (equal, notEqual) = (.equalTo, .notEqualTo)
        case .orderedDescending: (equal, notEqual) = (.greaterThan, .lessThanOrEqualTo)
        }
        switch comparisonOperator {
        case .equalTo: return .comparison(first, equal, second, options: options)
        case .notEqualTo: return .comparison(first, notEqual, second, options: options)
        default:
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate orders ComparisonResult values (\(comparisonOperator.rawValue)), which Strata cannot "
                    + "translate; compare with == or !=.")
        }
    }

    /// Equality of Boolean conditions.
    private func booleanComparison(
        _ left: Part, _ comparisonOperator: ComparisonOperator, _ right: Part
    ) throws -> QueryPredicate {
        guard comparisonOperator == .equalTo || comparisonOperator == .notEqualTo else {
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate orders Boolean conditions (\(comparisonOperator.rawValue)), which Strata cannot translate.")
        }
        let equal: QueryPredicate
        switch (left, right) {
        case (_, .value(.value(.boolean(let flag)))):
            equal = flag ? try condition(left) : try falseCondition(left)
        case (.value(.value(.boolean(let flag))), _):
            equal = flag ? try condition(right) : try falseCondition(right)
        case (_, .value(.value(.null))):
            equal = try isNil(left)
        case (.value(.value(.null)), _):
            equal = try isNil(right)
        default:
            let first = try condition(left)
            let second = try condition(right)
            equal = Self.or([Self.and([first, second]), Self.and([Self.not(first), Self.not(second)])])
        }
        return comparisonOperator == .equalTo ? equal : Self.not(equal)
    }

    // MARK: Building predicates

    /// `AND`, flattened, with constants folded.
    static func and(_ parts: [QueryPredicate]) -> QueryPredicate {
        var result: [QueryPredicate] = []
        for part in parts {
            switch part {
            case .constant(true): continue
            case .constant(false): return .constant(false)
            case .and(let inner): result.append(contentsOf: inner)
            default: result.append(part)
            }
        }
        if result.isEmpty { return .constant(true) }
        return result.count == 1 ? result[0] : .and(result)
    }

    /// `OR`, flattened, with constants folded.
    static func or(_ parts: [QueryPredicate]) -> QueryPredicate {
        var result: [QueryPredicate] = []
        for part in parts {
            switch part {
            case .constant(false): continue
            case .constant(true): return .constant(true)
            case .or(let inner): result.append(contentsOf: inner)
            default: result.append(part)
            }
        }
        if result.isEmpty { return .constant(false) }
        return result.count == 1 ? result[0] : .or(result)
    }

    /// `NOT`, with constants folded; `NOT x == nil` is `x != nil`.
    static func not(_ part: QueryPredicate) -> QueryPredicate {
        switch part {
        case .constant(let flag):
            return .constant(!flag)
        case .comparison(var comparison)
        where comparison.comparisonOperator == .equalTo && comparison.right == .null && comparison.modifier == .direct:
            comparison.comparisonOperator = .notEqualTo
            return .comparison(comparison)
        default:
            return .not(part)
        }
    }

    static func describe(_ part: Part) -> String {
        switch part {
        case .value(let expression): "\(expression)"
        case .condition: "a condition"
        case .optionalCondition: "an optional condition"
        case .coalesced: "a ?? expression"
        case .conditional: "a ? : expression"
        case .filtered: "the result of filter (use its count or isEmpty)"
        case .range: "a range"
        case .stringOrdering: "a string comparison result"
        case .ordering(let result): "ComparisonResult.\(result)"
        }
    }
}
