import Foundation
import PostgresNIO
import Strata

/// Compiles a batch update's new values to PostgreSQL SQL for one entity, checking their types
/// as the SQLite store does: the same values are accepted and refused with the same codes.
///
/// Integer arithmetic runs in `numeric` (no overflow on the way) and divides with `div`, which
/// truncates as SQLite's integer division does; a division by zero gives `NULL`, as in SQLite.
/// `strata_checked_integer` and `strata_checked_double` then refuse a result that its attribute
/// cannot hold.
struct PostgresUpdateCompiler {
    let entity: Entity
    let layout: StoreLayout.EntityLayout
    private(set) var bindings = PostgresBindings()

    init(entity: Entity, layout: StoreLayout.EntityLayout) {
        self.entity = entity
        self.layout = layout
    }

    /// The attribute a batch update may set.
    func updatableAttribute(_ name: String) throws -> (Int, AttributeDescription) {
        try BatchUpdateRules.updatableAttribute(name, of: entity)
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
            let column = try self.column(name)
            if attribute.type.isInteger { return checked(column, for: attribute) }
            if source.isOptional && !attribute.isOptional { return "strata_required(\(column))" }
            return column
        case .add, .subtract, .multiply, .divide:
            guard attribute.type.isNumeric || attribute.type == .date else {
                throw mismatch(attribute, "cannot take the result of arithmetic")
            }
            guard attribute.type != .decimal else {
                throw mismatch(
                    attribute,
                    "is a Decimal; batch updates set decimals to constants only, as in every store (SQLite's arithmetic is not exact for decimals)")
            }
            return checked(try arithmetic(expression, for: attribute), for: attribute)
        }
    }

    private func checked(_ sql: String, for attribute: AttributeDescription) -> String {
        if attribute.type.isInteger {
            let range = attribute.type.integerRange ?? Int64.min...Int64.max
            return "strata_checked_integer((\(sql))::numeric, \(attribute.isOptional), \(range.lowerBound), \(range.upperBound))"
        }
        return "strata_checked_double((\(sql))::float8, \(attribute.isOptional))"
    }

    private mutating func arithmetic(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws -> String {
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
        if symbol == "/" {
            return attribute.type.isInteger ? "div(\(left), NULLIF(\(right), 0))" : "(\(left) / NULLIF(\(right), 0))"
        }
        return "(\(left) \(symbol) \(right))"
    }

    private mutating func operand(_ expression: BatchUpdateExpression, for attribute: AttributeDescription) throws -> String {
        let numericType = attribute.type.isInteger ? "numeric" : "float8"
        switch expression {
        case .value(let value):
            switch value {
            case .integer:
                PostgresValueCoding.bind(value, to: &bindings)
                return "$\(bindings.count)::\(numericType)"
            case .double, .float:
                guard !attribute.type.isInteger else {
                    throw mismatch(attribute, "is an integer attribute; arithmetic on it takes integers, not \(value)")
                }
                PostgresValueCoding.bind(value, to: &bindings)
                return "$\(bindings.count)::float8"
            default:
                throw mismatch(attribute, "cannot use \(value) in arithmetic")
            }
        case .key(let name):
            let source = try sourceAttribute(name, for: attribute)
            guard BatchUpdateRules.canUseInArithmetic(source.type, for: attribute.type) else {
                throw mismatch(attribute, "cannot use \(name), a \(source.type) attribute, in its arithmetic")
            }
            return "\(try column(name))::\(numericType)"
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
            return "NULL"
        }
        guard let converted = value.converted(to: attribute.type) else {
            throw mismatch(attribute, "cannot hold \(value)")
        }
        try BatchUpdateRules.checkRepresentable(converted, for: attribute, of: entity)
        PostgresValueCoding.bind(converted, to: &bindings)
        return "$\(bindings.count)"
    }

    private func mismatch(_ attribute: AttributeDescription, _ problem: String) -> StrataError {
        BatchUpdateRules.mismatch(attribute, of: entity, problem)
    }

    /// The prefix of the errors the checking functions raise.
    static let checkFailure = "strata_checked: "

    /// A checking function's error as the typed error the SQLite store gives for it.
    static func translate(_ error: StrataError) -> StrataError {
        guard let server = error.underlyingError as? PostgresServerError else { return error }
        if let range = server.message.range(of: checkFailure) {
            let reason = String(server.message[range.upperBound...])
            return StrataError(
                reason.hasPrefix("missing value") ? .missingValue : reason.hasPrefix("out of range") ? .valueOutOfRange : .typeMismatch,
                "A batch update computed a value its attribute cannot hold (\(reason)). Nothing was written.", sql: error.sql,
                underlyingError: server)
        }
        if server.sqlState == "22003" {
            return StrataError(
                .valueOutOfRange, "A batch update computed a value out of its attribute's range (\(server.message)). Nothing was written.",
                sql: error.sql, underlyingError: server)
        }
        return error
    }

    /// The checking functions, created with the store.
    static let functionStatements = [
        """
        CREATE FUNCTION strata_checked_integer(v numeric, nullable boolean, minimum bigint, maximum bigint) RETURNS bigint \
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$ BEGIN \
        IF v IS NULL THEN IF nullable THEN RETURN NULL; END IF; \
        RAISE EXCEPTION 'strata_checked: missing value: the result is NULL (a division by zero?)'; END IF; \
        IF v <> trunc(v) OR v < -9223372036854775808 OR v > 9223372036854775807 THEN \
        RAISE EXCEPTION 'strata_checked: type: % is not an integer (an integer overflow?)', v; END IF; \
        IF v < minimum OR v > maximum THEN RAISE EXCEPTION 'strata_checked: out of range: % is not in %...%', v, minimum, maximum; END IF; \
        RETURN v::bigint; END $strata$
        """,
        """
        CREATE FUNCTION strata_checked_double(v float8, nullable boolean) RETURNS float8 \
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$ BEGIN \
        IF v IS NULL AND NOT nullable THEN RAISE EXCEPTION 'strata_checked: missing value: the result is NULL (a division by zero?)'; END IF; \
        RETURN v; END $strata$
        """,
        """
        CREATE FUNCTION strata_required(v anyelement) RETURNS anyelement LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$ BEGIN \
        IF v IS NULL THEN RAISE EXCEPTION 'strata_checked: missing value: the value copied is NULL'; END IF; RETURN v; END $strata$
        """,
    ]
}
