import Foundation

extension FoundationPredicateTranslator {
    // MARK: Constants

    /// The fragment for a constant value captured by, or written in, the predicate.
    static func constant(_ value: Any) throws -> Part {
        switch value {
        case let result as ComparisonResult:
            return .ordering(result)
        case let character as Character:
            return .value(.value(.string(String(character))))
        case let argument as any PredicateArgument:
            return .value(argument.predicateExpression)
        case let optional as any FoundationPredicateOptional where optional.isNone:
            return .value(.null)
        case let optional as any FoundationPredicateOptional:
            return try constant(optional.wrappedValue as Any)
        case let integer as any BinaryInteger:
            guard let exact = Int64(exactly: integer) else {
                throw StrataError(
                    .unsupportedPredicate,
                    "#Predicate uses the constant \(integer), which does not fit a 64-bit integer.")
            }
            return .value(.value(.integer(exact)))
        case let range as any FoundationPredicateRange:
            let bounds = range.bounds
            return .range(
                lower: try bounds.lower.map { try constantExpression($0) },
                upper: try bounds.upper.map { try constantExpression($0) },
                includesUpper: bounds.includesUpper)
        case let sequence as any Sequence:
            var elements: [QueryExpression] = []
            for element in sequence {
                elements.append(try constantExpression(element))
            }
            return .value(.list(elements))
        default:
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate uses a constant of type \(type(of: value)), which Strata cannot translate; use a value that conforms to PredicateArgument."
            )
        }
    }

    private static func constantExpression(_ value: Any) throws -> QueryExpression {
        guard case .value(let expression) = try constant(value) else {
            throw StrataError(
                .unsupportedPredicate,
                "#Predicate uses a constant of type \(type(of: value)) in a collection or range, which Strata cannot translate."
            )
        }
        return expression
    }

    static func isConstant(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .value, .objectID: true
        case .list(let elements): elements.allSatisfy(isConstant)
        case .keyPath, .evaluatedObject, .variable, .keyPathOn, .subquery: false
        }
    }

    /// Compares two constants, or returns `nil` when either side is not constant (or the values
    /// cannot be ordered here).
    static func fold(
        _ left: QueryExpression, _ comparisonOperator: ComparisonOperator, _ right: QueryExpression
    ) -> Bool? {
        guard isConstant(left), isConstant(right) else { return nil }
        switch comparisonOperator {
        case .equalTo: return left == right
        case .notEqualTo: return left != right
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard case .value(let first) = left, case .value(let second) = right, let order = order(first, second)
            else { return nil }
            switch comparisonOperator {
            case .lessThan: return order < 0
            case .lessThanOrEqualTo: return order <= 0
            case .greaterThan: return order > 0
            default: return order >= 0
            }
        default:
            return nil
        }
    }

    private static func order(_ first: AttributeValue, _ second: AttributeValue) -> Int? {
        func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
        switch (first, second) {
        case (.integer(let a), .integer(let b)): return sign(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.float(let a), .float(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.decimal(let a), .decimal(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.string(let a), .string(let b)): return sign(a, b)
        case (.date(let a), .date(let b)): return sign(a, b)
        default: return nil
        }
    }

    /// Arithmetic between two constants; `nil` when the operands are not numbers of one type.
    static func arithmetic(
        _ left: AttributeValue, _ right: AttributeValue, _ operation: ArithmeticOperation
    ) -> AttributeValue? {
        switch (left, right) {
        case (.integer(let a), .integer(let b)):
            let result: (partialValue: Int64, overflow: Bool)
            switch operation {
            case .add: result = a.addingReportingOverflow(b)
            case .subtract: result = a.subtractingReportingOverflow(b)
            case .multiply: result = a.multipliedReportingOverflow(by: b)
            case .divide: result = b == 0 ? (0, true) : a.dividedReportingOverflow(by: b)
            case .remainder: result = b == 0 ? (0, true) : a.remainderReportingOverflow(dividingBy: b)
            }
            return result.overflow ? nil : .integer(result.partialValue)
        case (.double(let a), .double(let b)):
            return floatingPoint(a, b, operation).map { .double($0) }
        case (.float(let a), .float(let b)):
            return floatingPoint(a, b, operation).map { .float($0) }
        case (.decimal(let a), .decimal(let b)):
            switch operation {
            case .add: return .decimal(a + b)
            case .subtract: return .decimal(a - b)
            case .multiply: return .decimal(a * b)
            case .divide: return b == 0 ? nil : .decimal(a / b)
            case .remainder: return nil
            }
        default:
            return nil
        }
    }

    private static func floatingPoint<T: FloatingPoint>(_ a: T, _ b: T, _ operation: ArithmeticOperation) -> T? {
        switch operation {
        case .add: a + b
        case .subtract: a - b
        case .multiply: a * b
        case .divide: a / b
        case .remainder: nil
        }
    }

    enum ArithmeticOperation: String {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
        case remainder = "%"
    }
}

// MARK: - Helper protocols

/// `Optional`, seen through `Any`.
private protocol FoundationPredicateOptional {
    var isNone: Bool { get }
    var wrappedValue: Any? { get }
}

extension Optional: FoundationPredicateOptional {
    var isNone: Bool { self == nil }
    var wrappedValue: Any? { self.map { $0 } }
}

/// A constant range, seen through `Any`.
private protocol FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { get }
}

extension ClosedRange: FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, upperBound, true) }
}

extension Range: FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, upperBound, false) }
}

extension PartialRangeFrom: FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, nil, false) }
}

extension PartialRangeThrough: FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (nil, upperBound, true) }
}

extension PartialRangeUpTo: FoundationPredicateRange {
    var bounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (nil, upperBound, false) }
}
