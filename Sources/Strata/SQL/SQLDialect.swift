import Foundation

/// The values bound to one statement, starting empty.
package protocol SQLArguments {
    /// No values.
    init()
}

/// What one SQL store says differently from another: the small set of spellings that the
/// shared compilers in `SQL/` ask a store for.
///
/// Everything else — which joins a key path needs, how a to-many relationship is scoped, how
/// `ANY`/`ALL` nest, which comparisons stay bare so that an index can serve them — is written
/// once, in ``SQLQueryCompiler``. A store adds a dialect (a caseless enum; every requirement is
/// static) and its connections; the compilers are generic over it, so nothing on a hot path
/// pays for an existential.
package protocol SQLDialect {
    /// The values bound to one statement, in the store's own representation.
    associatedtype Arguments: SQLArguments

    /// The literal for true (`1` in SQLite, `TRUE` in PostgreSQL).
    static var trueLiteral: String { get }
    /// The literal for false.
    static var falseLiteral: String { get }

    /// `expression`, reading as false where it is `NULL`.
    static func nullAsFalse(_ expression: String) -> String

    /// Binds `value`, converted for a comparison with values of `kind` where the store's
    /// columns are typed, and returns its placeholder (or a literal for `NULL`).
    static func bind(_ value: AttributeValue, as kind: ValueKind?, to arguments: inout Arguments) -> String

    /// An operand as it is compared with values of `kind`: a collation or a cast where the
    /// store needs one (SQLite collates decimals, PostgreSQL compares JSON as text).
    static func comparable(_ expression: String, kind: ValueKind) -> String

    /// `left` equals `right`, with `NULL` equal to `NULL` and never `NULL` itself.
    static func isNotDistinct(_ left: String, _ right: String) -> String

    /// `left` differs from `right`, with `NULL` equal to `NULL` and never `NULL` itself.
    static func isDistinct(_ left: String, _ right: String) -> String

    /// A `CONTAINS`, `BEGINSWITH` or `ENDSWITH` test of text (may be `NULL` where an operand is).
    static func substringTest(_ comparison: ComparisonOperator, _ text: String, _ part: String) -> String

    /// A `LIKE` test with the in-memory evaluator's meaning (`*`, `?`, `\` escapes), never `NULL`.
    ///
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a pattern the store cannot run.
    static func like(_ text: String, _ pattern: SQLPattern, to arguments: inout Arguments) throws -> String

    /// A `MATCHES` test with ICU's meaning, never `NULL`.
    ///
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` for a pattern or options the store
    ///   would read differently.
    static func matches(
        _ text: String, _ pattern: SQLPattern, options: ComparisonOptions, to arguments: inout Arguments
    ) throws -> String

    /// Whether the JSON array or object in `column` has an element equal to `wanted` (a scalar
    /// has none), never `NULL`.
    static func jsonContains(
        _ column: String, _ wanted: AttributeValue, options: ComparisonOptions, to arguments: inout Arguments
    ) -> String

    /// A collection operator over a column, with the in-memory evaluator's meaning: exact sums
    /// and averages, no rows summing to 0.
    static func aggregate(_ collectionOperator: CollectionOperator, of column: String, kind: ValueKind) -> String

    /// An aggregate column of a values fetch (sum, average, minimum or maximum; counts are
    /// `COUNT` everywhere): decimal sums and averages exact, as ``AttributeType/decimal``;
    /// integer sums as ``SQLValuesColumn/integerSum`` reads them; other sums and averages as
    /// doubles; minimums and maximums in the attribute's order.
    ///
    /// - Parameter exactIntegerSums: Whether an integer sum must not fail when it leaves
    ///   `Int64`'s range (a store whose plain sum throws then retries with it).
    static func valuesAggregate(_ function: AggregateFunction, of column: String, kind: ValueKind, exactIntegerSums: Bool)
        -> String

    /// A selected value as `DISTINCT` and `GROUP BY` compare it: itself, or a form the database
    /// can compare (PostgreSQL has no equality for JSON).
    static func comparableValue(_ expression: String, type: AttributeType) -> String

    /// One `ORDER BY` term, ordering as the in-memory evaluator does (`NULL`s first).
    static func orderTerm(_ column: String, kind: ValueKind, comparison: SortComparison, ascending: Bool) -> String

    // MARK: Selects (``SQLSelect``)

    /// Whether `ORDER BY` can sort text as `localizedStandardCompare` does; where it cannot,
    /// ``SQLSelect`` sorts such fetches on the client.
    static var sortsLocalizedText: Bool { get }

    /// `column` is one of `keys` (not empty), bound.
    static func primaryKeyTest(_ column: String, in keys: [Int64], to arguments: inout Arguments) -> String

    /// The placeholder of a value an equality test compares with a column of `type` (`nil`: a
    /// to-one relationship's key column), bound.
    static func equalityValue(_ value: AttributeValue, forColumnOf type: AttributeType?, to arguments: inout Arguments)
        -> String

    /// ` LIMIT … OFFSET …` for a limit and an offset that are not negative, or nothing when
    /// there is neither.
    static func limitClause(limit: Int?, offset: Int) -> String

    /// What an ordering term needs so that `NULL` comes first: nothing in SQLite, where it
    /// already does, ` NULLS FIRST` in PostgreSQL.
    static var nullsFirst: String { get }

    // MARK: Batch updates (``SQLUpdateCompiler``)

    /// A value a batch update computes row by row, checked by the statement: it fails when the
    /// value is not an integer for an integer attribute, is out of the attribute's range, or is
    /// `NULL` for a required one (a division by zero).
    static func checkedUpdateValue(_ expression: String, for attribute: AttributeDescription) -> String

    /// Another attribute's column copied into `attribute`, checked where the destination is
    /// narrower or required.
    static func copiedUpdateValue(
        _ column: String, from source: AttributeDescription, to attribute: AttributeDescription
    ) -> String

    /// An operand of a batch update's arithmetic for `attribute`: a cast where the store's
    /// arithmetic would otherwise overflow or round (PostgreSQL computes integers in `numeric`).
    static func arithmeticOperand(_ expression: String, for attribute: AttributeDescription) -> String

    /// `dividend / divisor`, truncating for integers as SQLite does, `NULL` for a zero divisor.
    static func quotient(_ dividend: String, _ divisor: String, integer: Bool) -> String
}

/// The pattern of a `LIKE` or `MATCHES` test: a constant string, or an expression (a key path).
package enum SQLPattern {
    case constant(String)
    case expression(String)
}

extension SQLDialect {
    /// `expression` folded as `options` ask (`[c]`, `[d]`), by the `strata_fold` function every
    /// SQL store defines from Swift's own folding tables.
    package static func folded(_ expression: String, options: ComparisonOptions) -> String {
        options.isEmpty ? expression : "strata_fold(\(expression), \(options.rawValue))"
    }
}

/// `'A', 'B'`: entity names as SQL literals, for `"_entity" IN (…)`. Entity names are validated
/// identifiers, so they can be literals (DDL and partial indexes take no bound parameters).
package func entityNameList(_ names: some Sequence<String>) -> String {
    names.map { "'" + $0 + "'" }.joined(separator: ", ")
}
