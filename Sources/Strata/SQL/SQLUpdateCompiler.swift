import Foundation

/// Compiles a batch update's new values to SQL for one entity, for every SQL store.
///
/// Every value is checked before anything is written, with the same codes on every store: a
/// constant must convert to its attribute's type and be representable; a copied attribute must
/// be of a type the destination holds; arithmetic takes numbers (integers only for an integer
/// attribute) and never decimals, whose arithmetic SQLite cannot do exactly. Values computed row
/// by row are checked by the statement (``SQLDialect/checkedUpdateValue(_:for:)``): a result out
/// of range, not an integer, or `NULL` from a division by zero fails the whole request.
package struct SQLUpdateCompiler<Dialect: SQLDialect> {
    package let entity: Entity
    package let layout: StoreLayout.EntityLayout
    /// The values bound so far, in placeholder order.
    package private(set) var arguments: Dialect.Arguments

    package init(entity: Entity, layout: StoreLayout.EntityLayout, arguments: Dialect.Arguments) {
        self.entity = entity
        self.layout = layout
        self.arguments = arguments
    }

    /// The `SET` list of a batch update — each property's new value, then the version column
    /// incremented — and the names of the properties it sets, sorted.
    ///
    /// - Throws: ``StrataError`` when a property cannot be updated or a value cannot be stored,
    ///   and ``StrataError/Code/unknownKey`` when there is nothing to update.
    package mutating func assignments(for properties: [String: BatchUpdateExpression]) throws
        -> (sql: String, names: [String])
    {
        var assignments: [String] = []
        let names = properties.keys.sorted()
        for name in names {
            guard let expression = properties[name] else { continue }
            let (number, attribute) = try BatchUpdateRules.updatableAttribute(name, of: entity)
            guard let column = layout.attributeColumns[number] else { continue }
            assignments.append("\(quoted(column)) = \(try compile(expression, for: attribute))")
        }
        guard !assignments.isEmpty else {
            throw StrataError(
                .unknownKey, "A batch update of \(entity.name) needs at least one property to update.",
                entityName: entity.name)
        }
        assignments.append("\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1")
        return (assignments.joined(separator: ", "), names)
    }

    /// The SQL of one attribute's new value.
    package mutating func compile(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws
        -> String
    {
        switch expression {
        case .value(let value):
            return try bind(value, for: attribute)
        case .key(let name):
            let source = try sourceAttribute(name, for: attribute)
            guard BatchUpdateRules.canCopy(source.type, to: attribute.type) else {
                throw mismatch(attribute, "cannot take the value of \(name), a \(source.type) attribute")
            }
            return Dialect.copiedUpdateValue(try column(name), from: source, to: attribute)
        case .add, .subtract, .multiply, .divide:
            guard attribute.type.isNumeric || attribute.type == .date else {
                throw mismatch(attribute, "cannot take the result of arithmetic")
            }
            guard attribute.type != .decimal else {
                throw mismatch(
                    attribute,
                    "is a Decimal; batch updates set decimals to constants only, as in every store (SQLite's arithmetic is not exact for decimals)")
            }
            return Dialect.checkedUpdateValue(try arithmetic(expression, for: attribute), for: attribute)
        }
    }

    private mutating func arithmetic(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws
        -> String
    {
        let (lhs, rhs, symbol): (BatchUpdateExpression, BatchUpdateExpression, String)
        switch expression {
        case .add(let left, let right): (lhs, rhs, symbol) = (left, right, "+")
        case .subtract(let left, let right): (lhs, rhs, symbol) = (left, right, "-")
        case .multiply(let left, let right): (lhs, rhs, symbol) = (left, right, "*")
        case .divide(let left, let right): (lhs, rhs, symbol) = (left, right, "/")
        default: return try operand(expression, for: attribute)
        }
        let left = try operand(lhs, for: attribute)
        let right = try operand(rhs, for: attribute)
        if symbol == "/" { return Dialect.quotient(left, right, integer: attribute.type.isInteger) }
        return "(\(left) \(symbol) \(right))"
    }

    /// One side of arithmetic: a number or a numeric (or date) attribute; only integers when
    /// the result is an integer attribute.
    private mutating func operand(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws
        -> String
    {
        switch expression {
        case .value(let value):
            switch value {
            case .integer:
                break
            case .double, .float:
                guard !attribute.type.isInteger else {
                    throw mismatch(attribute, "is an integer attribute; arithmetic on it takes integers, not \(value)")
                }
            default:
                throw mismatch(attribute, "cannot use \(value) in arithmetic")
            }
            return Dialect.arithmeticOperand(Dialect.bind(value, as: nil, to: &arguments), for: attribute)
        case .key(let name):
            let source = try sourceAttribute(name, for: attribute)
            guard BatchUpdateRules.canUseInArithmetic(source.type, for: attribute.type) else {
                throw mismatch(attribute, "cannot use \(name), a \(source.type) attribute, in its arithmetic")
            }
            return Dialect.arithmeticOperand(try column(name), for: attribute)
        default:
            return try arithmetic(expression, for: attribute)
        }
    }

    private func sourceAttribute(_ name: String, for attribute: AttributeDescription) throws -> AttributeDescription {
        try BatchUpdateRules.sourceAttribute(name, for: attribute, of: entity, layout: layout)
    }

    private func column(_ name: String) throws -> String {
        guard let number = entity.attributeNumber(named: name), let column = layout.attributeColumns[number] else {
            throw StrataError(
                .unknownKey, "\(entity.name) has no stored attribute named '\(name)'.", entityName: entity.name)
        }
        return quoted(column)
    }

    private mutating func bind(_ value: AttributeValue, for attribute: AttributeDescription) throws -> String {
        if value.isNull {
            guard attribute.isOptional else {
                throw StrataError(
                    .missingValue,
                    "\(entity.name).\(attribute.name) is not optional; a batch update cannot set it to nil.",
                    entityName: entity.name, propertyName: attribute.name)
            }
            return Dialect.bind(.null, as: nil, to: &arguments)
        }
        guard let converted = value.converted(to: attribute.type) else {
            throw mismatch(attribute, "cannot hold \(value)")
        }
        try BatchUpdateRules.checkRepresentable(converted, for: attribute, of: entity)
        return Dialect.bind(converted, as: nil, to: &arguments)
    }

    private func mismatch(_ attribute: AttributeDescription, _ problem: String) -> StrataError {
        BatchUpdateRules.mismatch(attribute, of: entity, problem)
    }
}
