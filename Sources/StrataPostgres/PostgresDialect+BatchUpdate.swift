import Foundation
import PostgresNIO
import Strata

/// Batch updates in PostgreSQL, checked as the SQLite store checks them: the same values are
/// accepted and refused with the same codes.
///
/// Integer arithmetic runs in `numeric` (no overflow on the way) and divides with `div`, which
/// truncates as SQLite's integer division does; a division by zero gives `NULL`, as in SQLite.
/// `strata_checked_integer` and `strata_checked_double` then refuse a result that its attribute
/// cannot hold.
extension PostgresDialect {
    package static func checkedUpdateValue(_ expression: String, for attribute: AttributeDescription) -> String {
        if attribute.type.isInteger {
            let range = attribute.type.integerRange ?? Int64.min...Int64.max
            return "strata_checked_integer((\(expression))::numeric, \(attribute.isOptional), \(range.lowerBound), \(range.upperBound))"
        }
        return "strata_checked_double((\(expression))::float8, \(attribute.isOptional))"
    }

    /// Integer columns have widths here: a copy into one is checked for its range.
    package static func copiedUpdateValue(_ column: String, from source: AttributeDescription, to attribute: AttributeDescription) -> String {
        if attribute.type.isInteger { return checkedUpdateValue(column, for: attribute) }
        if source.isOptional && !attribute.isOptional { return "strata_required(\(column))" }
        return column
    }

    package static func arithmeticOperand(_ expression: String, for attribute: AttributeDescription) -> String {
        "\(expression)::\(attribute.type.isInteger ? "numeric" : "float8")"
    }

    package static func quotient(_ dividend: String, _ divisor: String, integer: Bool) -> String {
        integer ? "div(\(dividend), NULLIF(\(divisor), 0))" : "(\(dividend) / NULLIF(\(divisor), 0))"
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
