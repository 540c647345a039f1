import Foundation
import PostgresNIO
import Strata

/// PostgreSQL's spellings for the shared SQL compilers.
///
/// They give predicates the meaning the in-memory evaluator and the SQLite store give them:
/// text compares by UTF-8 bytes (the columns are `COLLATE "C"`), `[c]`/`[d]` fold with
/// `strata_fold`, which the store creates from Swift's own folding tables, `LIKE` patterns are
/// translated, `MATCHES` runs when its pattern means the same to PostgreSQL's engine (else a
/// typed error), and `NULL`s sort first, as in SQLite. Binds are typed: a value compared with a
/// column is converted to the column's type.
package enum PostgresDialect: SQLDialect {
    package typealias Arguments = PostgresBindings

    package static let trueLiteral = "TRUE"
    package static let falseLiteral = "FALSE"

    package static func nullAsFalse(_ expression: String) -> String { "COALESCE(\(expression), FALSE)" }

    /// A placeholder for `value`, converted to the type of the columns of `kind`; `NULL` is a
    /// literal (an untyped parameter could not be inferred).
    package static func bind(_ value: AttributeValue, as kind: ValueKind?, to bindings: inout PostgresBindings) -> String {
        if value.isNull { return "NULL" }
        let converted: AttributeValue =
            switch (value, kind) {
            case (.integer(let number), .boolean): .boolean(number != 0)
            case (.boolean(let flag), .integer): .integer(flag ? 1 : 0)
            case (.boolean(let flag), .double), (.boolean(let flag), .date): .double(flag ? 1 : 0)
            case (.codable(let json), .some): .string(String(decoding: json, as: UTF8.self))
            case (.integer(let number), .date): .double(Double(number))
            default: value
            }
        PostgresValueCoding.bind(converted, to: &bindings)
        return "$\(bindings.count)"
    }

    /// JSON has no equality in PostgreSQL: JSON values compare as their text.
    package static func comparable(_ expression: String, kind: ValueKind) -> String {
        kind == .codable ? expression + "::text" : expression
    }

    package static func isNotDistinct(_ left: String, _ right: String) -> String { "\(left) IS NOT DISTINCT FROM \(right)" }

    package static func isDistinct(_ left: String, _ right: String) -> String { "\(left) IS DISTINCT FROM \(right)" }

    package static func substringTest(_ comparison: ComparisonOperator, _ text: String, _ part: String) -> String {
        switch comparison {
        case .beginsWith: "starts_with(\(text), \(part))"
        case .endsWith: "right(\(text), length(\(part))) = \(part)"
        default: "strpos(\(text), \(part)) > 0"
        }
    }

    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a pattern that is not a constant.
    package static func like(_ text: String, _ pattern: SQLPattern, to bindings: inout PostgresBindings) throws -> String {
        guard case .constant(let pattern) = pattern else {
            throw StrataError(
                .unsupportedPredicate,
                "LIKE needs a constant pattern in a PostgreSQL store; compare with a string, not a key path.")
        }
        return "COALESCE(\(text) LIKE \(bind(.string(likePattern(pattern)), as: nil, to: &bindings)), FALSE)"
    }

    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a pattern that is not a constant,
    ///   for options, or for a pattern PostgreSQL would read differently.
    package static func matches(
        _ text: String, _ pattern: SQLPattern, options: ComparisonOptions, to bindings: inout PostgresBindings
    ) throws -> String {
        guard case .constant(let pattern) = pattern else {
            throw StrataError(
                .unsupportedPredicate,
                "MATCHES needs a constant pattern in a PostgreSQL store; compare with a string, not a key path.")
        }
        guard options.isEmpty else {
            throw StrataError(
                .unsupportedPredicate,
                "MATCHES[\(options.contains(.caseInsensitive) ? "c" : "")\(options.contains(.diacriticInsensitive) ? "d" : "")] cannot run in a PostgreSQL store: ICU and PostgreSQL fold letters differently inside regular expressions. Match without options (spell the cases out, [Aa]), or filter in memory.")
        }
        let translated = try PostgresRegularExpression.translate(pattern)
        return "COALESCE(\(text) ~ \(bind(.string(translated), as: nil, to: &bindings)), FALSE)"
    }

    package static func jsonContains(
        _ column: String, _ wanted: AttributeValue, options: ComparisonOptions, to bindings: inout PostgresBindings
    ) -> String {
        let element = "e.value"
        let test: String
        switch wanted {
        case .string:
            let text = "(\(element) #>> '{}')"
            test = "json_typeof(\(element)) = 'string' AND \(folded(text, options: options)) = \(bind(wanted, as: nil, to: &bindings))"
        case .integer(let number):
            test =
                "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::numeric = \(bind(.decimal(Decimal(number)), as: nil, to: &bindings))) OR (json_typeof(\(element)) = 'boolean' AND (CASE WHEN \(element)::text = 'true' THEN 1 ELSE 0 END) = \(bind(.integer(number), as: nil, to: &bindings))))"
        case .boolean(let flag):
            test =
                "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::numeric = \(flag ? 1 : 0)) OR (json_typeof(\(element)) = 'boolean' AND \(element)::text = '\(flag ? "true" : "false")'))"
        case .double, .float:
            let number: Double =
                if case .double(let x) = wanted { x } else if case .float(let x) = wanted { Double(x) } else { 0 }
            test =
                "((json_typeof(\(element)) = 'number' AND (\(element) #>> '{}')::float8 = \(bind(.double(number), as: nil, to: &bindings))) OR (json_typeof(\(element)) = 'boolean' AND (CASE WHEN \(element)::text = 'true' THEN 1 ELSE 0 END) = \(bind(.double(number), as: nil, to: &bindings))))"
        default:
            return "FALSE"
        }
        // The elements of an array or the values of an object; a scalar has none.
        return
            "EXISTS (SELECT 1 FROM (SELECT value FROM json_array_elements(CASE WHEN json_typeof(\(column)) = 'array' THEN \(column) END) UNION ALL SELECT value FROM json_each(CASE WHEN json_typeof(\(column)) = 'object' THEN \(column) END)) e WHERE \(test))"
    }

/// A collection operator over a column, with the in-memory evaluator's meaning
    /// (`DoubleSum`, `IntegerSum`): double sums exact and rounded once (`strata_exact`,
    /// `strata_double`), so the same in any order and with no overflow on the way; integer sums
    /// exact, and the nearest double when beyond `Int64`; averages from those sums; no rows sum
    /// to 0; the extremes of Booleans are `bool_and` and `bool_or`.
    package static func aggregate(_ collectionOperator: CollectionOperator, of column: String, kind: ValueKind) -> String {
        switch (collectionOperator, kind) {
        case (.count, _): return "COUNT(*)"
        case (.sum, .double):
            return "CASE WHEN COUNT(\(column)) = 0 THEN 0 ELSE strata_double(SUM(strata_exact(\(column)))) END"
        case (.average, .double):
            return "(strata_double(SUM(strata_exact(\(column)))) / NULLIF(COUNT(\(column)), 0))"
        case (.sum, .integer):
            let sum = "COALESCE(SUM(\(column)), 0)"
            return "CASE WHEN \(sum) BETWEEN \(Int64.min) AND \(Int64.max) THEN \(sum) ELSE strata_exact(strata_double(\(sum))) END"
        case (.average, .integer):
            return "(strata_double(SUM(\(column))) / NULLIF(COUNT(\(column)), 0))"
        case (.sum, _): return "COALESCE(SUM(\(column)), 0)"
        case (.average, _): return "AVG(\(column))"
        case (.min, .boolean): return "bool_and(\(column))"
        case (.max, .boolean): return "bool_or(\(column))"
        case (.min, _): return "MIN(\(column))"
        case (.max, _): return "MAX(\(column))"
        }
    }

    /// Sums and averages exact in `numeric`; an integer sum as text (an integer, or the
    /// nearest `Double` beyond `Int64`'s range); other sums and averages as `float8`.
    package static func valuesAggregate(_ function: AggregateFunction, of column: String, kind: ValueKind, exactIntegerSums: Bool)
        -> String
    {
        switch (function, kind) {
        case (.count, _):
            return "COUNT(\(column))"
        case (.sum, .decimal), (.average, .decimal), (.min, _), (.max, _):
            return aggregate(function.collectionOperator, of: column, kind: kind)
        case (.sum, .integer):
            let sum = "COALESCE(SUM(\(column)), 0)"
            return "CASE WHEN \(sum) BETWEEN \(Int64.min) AND \(Int64.max) THEN \(sum)::text ELSE strata_double(\(sum))::text END"
        case (.sum, _), (.average, _):
            return "(" + aggregate(function.collectionOperator, of: column, kind: kind == .integer ? .integer : .double) + ")::float8"
        }
    }

    /// JSON (Codable values) has no equality operator: compared as its text.
    package static func comparableValue(_ expression: String, type: AttributeType) -> String {
        type == .codable ? "\(expression)::text" : expression
    }

    /// The server cannot give Foundation's localized order: such fetches sort on the client.
    package static let sortsLocalizedText = false

    /// `NULL` sorts last by default.
    package static let nullsFirst = " NULLS FIRST"

    /// One array parameter, however many keys.
    package static func primaryKeyTest(_ column: String, in keys: [Int64], to bindings: inout PostgresBindings) -> String {
        bindings.append(keys)
        return "\(column) = ANY($\(bindings.count))"
    }

    /// Converted to the column's type; JSON compares as text.
    package static func equalityValue(
        _ value: AttributeValue, forColumnOf type: AttributeType?, to bindings: inout PostgresBindings
    ) -> String {
        bindings.append(value: type.map { PostgresValueCoding.converted(value, toColumnOf: $0) } ?? value)
        return "$\(bindings.count)" + (type == .codable ? "::text" : "")
    }

    package static func limitClause(limit: Int?, offset: Int) -> String {
        (limit.map { " LIMIT \($0)" } ?? "") + (offset > 0 ? " OFFSET \(offset)" : "")
    }

    /// `NULL`s come first, as in SQLite and in memory; case-insensitive order folds as `[c]`
    /// does (localized order is sorted on the client: the server cannot give Foundation's).
    package static func orderTerm(_ column: String, kind: ValueKind, comparison: SortComparison, ascending: Bool) -> String {
        var term = column
        if kind.isTextual, comparison == .caseInsensitive { term = folded(term, options: .caseInsensitive) }
        return term + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    // MARK: LIKE

    /// A Strata `LIKE` pattern (`*` any run, `?` one character, `\` escapes) as a PostgreSQL
    /// one (`%`, `_`, with `\` escaping PostgreSQL's own wildcards).
    package static func likePattern(_ pattern: String) -> String {
        var result = ""
        var iterator = pattern.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            switch scalar {
            case "*": result += "%"
            case "?": result += "_"
            case "\\":
                let next = iterator.next() ?? "\\"
                result += escapedLikeLiteral(next)
            default: result += escapedLikeLiteral(scalar)
            }
        }
        return result
    }

    private static func escapedLikeLiteral(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "%", "_", "\\": "\\" + String(scalar)
        default: String(scalar)
        }
    }
}

/// The query compiler of PostgreSQL stores.
package typealias PostgresQueryCompiler = SQLQueryCompiler<PostgresDialect>

/// A fetch plan compiled for PostgreSQL.
package typealias PostgresSelect = SQLSelect<PostgresDialect>

/// The batch-update compiler of PostgreSQL stores.
package typealias PostgresUpdateCompiler = SQLUpdateCompiler<PostgresDialect>

/// Bindings start empty.
extension PostgresBindings: SQLArguments {}
