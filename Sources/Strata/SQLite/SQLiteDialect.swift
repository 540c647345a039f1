import Foundation
import GRDB

/// SQLite's spellings for the shared SQL compilers: `1`/`0`, `IFNULL`, untyped binds, and the
/// functions and collations every Strata connection registers (``SQLiteFunctions``), which call
/// the in-memory evaluator's own Swift code.
package enum SQLiteDialect: SQLDialect {
    package typealias Arguments = [DatabaseValue]

    package static let trueLiteral = "1"
    package static let falseLiteral = "0"

    package static func nullAsFalse(_ expression: String) -> String { "IFNULL(\(expression), 0)" }

    /// SQLite's columns take any value, so `kind` converts nothing.
    package static func bind(_ value: AttributeValue, as kind: ValueKind?, to arguments: inout [DatabaseValue]) -> String {
        arguments.append(SQLiteValueCoding.databaseValue(value))
        return "?"
    }

    /// Decimals are text and compare by value through the decimal collation.
    package static func comparable(_ expression: String, kind: ValueKind) -> String {
        kind == .decimal ? "\(expression) COLLATE \(SQLiteFunctions.decimalCollation)" : expression
    }

    package static func isNotDistinct(_ left: String, _ right: String) -> String { "\(left) IS \(right)" }

    package static func isDistinct(_ left: String, _ right: String) -> String { "\(left) IS NOT \(right)" }

    package static func substringTest(_ comparison: ComparisonOperator, _ text: String, _ part: String) -> String {
        switch comparison {
        case .beginsWith: "instr(\(text), \(part)) = 1"
        case .endsWith: "strata_ends_with(\(text), \(part))"
        default: "instr(\(text), \(part)) > 0"
        }
    }

    package static func like(_ text: String, _ pattern: SQLPattern, to arguments: inout [DatabaseValue]) -> String {
        "IFNULL(strata_like(\(text), \(expression(pattern, &arguments))), 0)"
    }

    package static func matches(
        _ text: String, _ pattern: SQLPattern, options: ComparisonOptions, to arguments: inout [DatabaseValue]
    ) -> String {
        "IFNULL(strata_matches(\(text), \(expression(pattern, &arguments)), \(options.rawValue)), 0)"
    }

    private static func expression(_ pattern: SQLPattern, _ arguments: inout [DatabaseValue]) -> String {
        switch pattern {
        case .constant(let text): bind(.string(text), as: nil, to: &arguments)
        case .expression(let expression): expression
        }
    }

    package static func jsonContains(
        _ column: String, _ wanted: AttributeValue, options: ComparisonOptions, to arguments: inout [DatabaseValue]
    ) -> String {
        let element = folded("value", options: options)
        // Only arrays and objects have elements; anything else (a scalar) has none.
        return
            "(json_type(\(column)) IN ('array', 'object') AND EXISTS (SELECT 1 FROM json_each(\(column)) WHERE \(element) = \(bind(wanted, as: nil, to: &arguments))))"
    }

    /// Sums and averages by the aggregate functions ``SQLiteFunctions`` registers, which add as
    /// the evaluator adds (exactly, in any order).
    package static func aggregate(_ collectionOperator: CollectionOperator, of column: String, kind: ValueKind) -> String {
        switch (collectionOperator, kind) {
        case (.count, _): "COUNT(*)"
        case (.sum, .decimal): "strata_decimal_sum(\(column))"
        case (.sum, .integer): "strata_integer_sum(\(column))"
        case (.sum, _): "strata_double_sum(\(column))"
        case (.average, .decimal): "strata_decimal_avg(\(column))"
        case (.average, .integer): "strata_integer_avg(\(column))"
        case (.average, _): "strata_double_avg(\(column))"
        case (.min, .decimal): "MIN(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
        case (.max, .decimal): "MAX(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
        case (.min, _): "MIN(\(column))"
        case (.max, _): "MAX(\(column))"
        }
    }

    /// Decimal sums and averages by Strata's exact functions; integer sums by `SUM` (which
    /// throws on overflow) or, asked for exactness, by `strata_integer_sum` (a `REAL` beyond
    /// `Int64`'s range); other sums by `TOTAL` (0 for no rows).
    package static func valuesAggregate(_ function: AggregateFunction, of column: String, kind: ValueKind, exactIntegerSums: Bool)
        -> String
    {
        switch (function, kind) {
        case (.sum, .decimal): "strata_decimal_sum(\(column))"
        case (.average, .decimal): "strata_decimal_avg(\(column))"
        case (.sum, .integer): exactIntegerSums ? "strata_integer_sum(\(column))" : "IFNULL(SUM(\(column)), 0)"
        case (.sum, _): "TOTAL(\(column))"
        case (.average, _): "AVG(\(column))"
        case (.count, _): "COUNT(\(column))"
        case (.min, .decimal): "MIN(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
        case (.max, .decimal): "MAX(\(column) COLLATE \(SQLiteFunctions.decimalCollation))"
        case (.min, _): "MIN(\(column))"
        case (.max, _): "MAX(\(column))"
        }
    }

    /// SQLite compares every stored value as it is.
    package static func comparableValue(_ expression: String, type: AttributeType) -> String { expression }

    /// SQLite orders `NULL` first already; text orders through Strata's collations.
    package static func orderTerm(_ column: String, kind: ValueKind, comparison: SortComparison, ascending: Bool) -> String {
        var term = column
        if kind == .decimal {
            term += " COLLATE \(SQLiteFunctions.decimalCollation)"
        } else if kind.isTextual {
            switch comparison {
            case .standard: break
            case .caseInsensitive: term += " COLLATE \(SQLiteFunctions.caseInsensitiveCollation)"
            case .localizedStandard: term += " COLLATE \(SQLiteFunctions.localizedCollation)"
            }
        }
        return term + (ascending ? " ASC" : " DESC")
    }
}

extension SQLiteDialect {
    /// By the localized collation ``SQLiteFunctions`` registers.
    package static let sortsLocalizedText = true

    package static func primaryKeyTest(_ column: String, in keys: [Int64], to arguments: inout [DatabaseValue]) -> String {
        arguments += keys.map(\.databaseValue)
        return "\(column) IN (" + keys.map { _ in "?" }.joined(separator: ", ") + ")"
    }

    package static func equalityValue(
        _ value: AttributeValue, forColumnOf type: AttributeType?, to arguments: inout [DatabaseValue]
    ) -> String {
        bind(value, as: nil, to: &arguments)
    }

    /// `NULL` sorts first already.
    package static let nullsFirst = ""

    /// SQLite takes a limit of -1 for none.
    package static func limitClause(limit: Int?, offset: Int) -> String {
        // Integers from the request, not strings: safe to write into the SQL.
        limit != nil || offset > 0 ? " LIMIT \(limit ?? -1) OFFSET \(offset)" : ""
    }
}

extension SQLiteDialect {
    /// `strata_checked(value, integer, nullable, minimum, maximum)` (``SQLiteFunctions``).
    package static func checkedUpdateValue(_ expression: String, for attribute: AttributeDescription) -> String {
        let bounds = attribute.type.integerRange.map { "\($0.lowerBound), \($0.upperBound)" } ?? "NULL, NULL"
        return
            "strata_checked(\(expression), \(attribute.type.isInteger ? 1 : 0), \(attribute.isOptional ? 1 : 0), \(bounds))"
    }

    /// Copies need a check only from an optional attribute into a required one: the columns
    /// of the types a copy allows hold each other's values.
    package static func copiedUpdateValue(
        _ column: String, from source: AttributeDescription, to attribute: AttributeDescription
    ) -> String {
        source.isOptional && !attribute.isOptional ? checkedUpdateValue(column, for: attribute) : column
    }

    /// SQLite's arithmetic needs no cast; `strata_checked` catches what overflowed to a real.
    package static func arithmeticOperand(_ expression: String, for attribute: AttributeDescription) -> String { expression }

    /// SQLite's `/` truncates integers and gives `NULL` for a zero divisor.
    package static func quotient(_ dividend: String, _ divisor: String, integer: Bool) -> String {
        "(\(dividend) / \(divisor))"
    }
}

/// The query compiler of SQLite stores.
package typealias SQLiteQueryCompiler = SQLQueryCompiler<SQLiteDialect>

/// A fetch plan compiled for SQLite.
package typealias SQLiteSelect = SQLSelect<SQLiteDialect>

/// The batch-update compiler of SQLite stores.
package typealias SQLiteUpdateCompiler = SQLUpdateCompiler<SQLiteDialect>

/// Statement arguments start as an empty array.
extension [DatabaseValue]: SQLArguments {}
