import Foundation
import GRDB

extension SQLiteStore {
    public func batchUpdate(_ request: StoreBatchUpdate) throws -> BatchResult {
        let entity = request.plan.entity
        let (_, layout) = try resolve(entity.name)
        // Every value is checked before anything is written.
        var assignments: [String] = []
        var arguments: [DatabaseValue] = []
        let names = request.propertiesToUpdate.keys.sorted()
        for name in names {
            guard let expression = request.propertiesToUpdate[name] else { continue }
            let (number, attribute) = try BatchUpdateRules.updatableAttribute(name, of: entity)
            guard let column = layout.attributeColumns[number] else { continue }
            var compiled = UpdateExpressionCompiler(entity: entity, layout: layout)
            let sql = try compiled.compile(expression, for: attribute)
            assignments.append("\(quoted(column)) = \(sql)")
            arguments += compiled.arguments
        }
        guard !assignments.isEmpty else {
            throw StrataError(
                .unknownKey, "A batch update of \(entity.name) needs at least one property to update.",
                entityName: entity.name)
        }
        assignments.append("\(quoted(StoreLayout.versionColumn)) = \(quoted(StoreLayout.versionColumn)) + 1")
        let sql =
            "UPDATE \(quoted(layout.table)) SET " + assignments.joined(separator: ", ")
            + " WHERE \(quoted(StoreLayout.primaryKeyColumn)) \(Self.inKeyList)"
        return try runBatch(author: request.author, contextName: request.contextName) { db in
            var changes = BatchChanges()
            // The rows first (from an index, often), then one UPDATE of exactly those rows.
            let rows = try selectRows(request.plan, db: db)
            if !rows.isEmpty {
                try db.execute(sql: sql, arguments: StatementArguments(arguments + [Self.keyList(rows.map(\.key)).databaseValue]))
            }
            changes.updated = rows.map { ($0, names) }
            return (
                changes,
                BatchResult(
                    kind: .update, resultType: request.resultType, count: rows.count,
                    objectIDs: request.resultType == .objectIDs ? rows.map(objectID) : nil)
            )
        }
    }
}

/// Compiles a ``BatchUpdateExpression`` to SQL for one attribute, checking its types.
private struct UpdateExpressionCompiler {
    let entity: Entity
    let layout: StoreLayout.EntityLayout
    var arguments: [DatabaseValue] = []

    init(entity: Entity, layout: StoreLayout.EntityLayout) {
        self.entity = entity
        self.layout = layout
    }

    mutating func compile(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws -> String {
        switch expression {
        case .value(let value):
            return try bind(value, for: attribute)
        case .key(let name):
            let source = try sourceAttribute(name, for: attribute)
            guard BatchUpdateRules.canCopy(source.type, to: attribute.type) else {
                throw mismatch(attribute, "cannot take the value of \(name), a \(source.type) attribute")
            }
            if source.isOptional && !attribute.isOptional {
                return checked(try column(name), for: attribute)
            }
            return try column(name)
        case .add, .subtract, .multiply, .divide:
            guard attribute.type.isNumeric || attribute.type == .date else {
                throw mismatch(attribute, "cannot take the result of arithmetic")
            }
            guard attribute.type != .decimal else {
                throw mismatch(
                    attribute,
                    "is a Decimal; SQLite arithmetic is not exact for decimals, so batch updates set decimals to constants only")
            }
            // Checked row by row as SQLite computes it: range, integer-ness, and NULL from a
            // division by zero fail the whole request.
            return checked(try arithmetic(expression, for: attribute), for: attribute)
        }
    }

    /// `strata_checked(...)` around a computed value, for the attribute's type.
    private func checked(_ sql: String, for attribute: AttributeDescription) -> String {
        let range = attribute.type.integerRange
        let bounds = range.map { "\($0.lowerBound), \($0.upperBound)" } ?? "NULL, NULL"
        return "strata_checked(\(sql), \(attribute.type.isInteger ? 1 : 0), \(attribute.isOptional ? 1 : 0), \(bounds))"
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
        return "(" + (try operand(lhs, for: attribute)) + " \(symbol) " + (try operand(rhs, for: attribute)) + ")"
    }

    /// One side of arithmetic: a number or a numeric (or date) attribute; only integers when
    /// the result is an integer attribute.
    private mutating func operand(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws -> String {
        switch expression {
        case .value(let value):
            switch value {
            case .integer:
                arguments.append(SQLiteValueCoding.databaseValue(value))
                return "?"
            case .double, .float:
                guard !attribute.type.isInteger else {
                    throw mismatch(attribute, "is an integer attribute; arithmetic on it takes integers, not \(value)")
                }
                arguments.append(SQLiteValueCoding.databaseValue(value))
                return "?"
            default:
                throw mismatch(attribute, "cannot use \(value) in arithmetic")
            }
        case .key(let name):
            let source = try sourceAttribute(name, for: attribute)
            guard BatchUpdateRules.canUseInArithmetic(source.type, for: attribute.type) else {
                throw mismatch(attribute, "cannot use \(name), a \(source.type) attribute, in its arithmetic")
            }
            return try column(name)
        default:
            return try arithmetic(expression, for: attribute)
        }
    }

    private func sourceAttribute(_ name: String, for attribute: AttributeDescription) throws -> AttributeDescription {
        try BatchUpdateRules.sourceAttribute(name, for: attribute, of: entity, layout: layout)
    }

    private func column(_ name: String) throws -> String {
        guard let number = entity.attributeNumber(named: name), let column = layout.attributeColumns[number] else {
            throw StrataError(.unknownKey, "\(entity.name) has no stored attribute named '\(name)'.", entityName: entity.name)
        }
        return quoted(column)
    }

    private mutating func bind(_ value: AttributeValue, for attribute: AttributeDescription) throws -> String {
        if value.isNull {
            guard attribute.isOptional else {
                throw StrataError(
                    .missingValue, "\(entity.name).\(attribute.name) is not optional; a batch update cannot set it to nil.",
                    entityName: entity.name, propertyName: attribute.name)
            }
            arguments.append(.null)
            return "?"
        }
        guard let converted = value.converted(to: attribute.type) else {
            throw mismatch(attribute, "cannot hold \(value)")
        }
        try BatchUpdateRules.checkRepresentable(converted, for: attribute, of: entity)
        arguments.append(SQLiteValueCoding.databaseValue(converted))
        return "?"
    }

    private func mismatch(_ attribute: AttributeDescription, _ problem: String) -> StrataError {
        BatchUpdateRules.mismatch(attribute, of: entity, problem)
    }
}
