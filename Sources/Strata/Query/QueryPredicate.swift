import Foundation

/// A condition on objects: the expression tree that every predicate front end produces.
///
/// `QueryPredicate` is Strata's `NSPredicate`. Format strings
/// (``FetchPredicate/init(format:_:)``), key-path operators (`\Movie.year > 1990`) and
/// Foundation's `#Predicate` all build this tree; stores compile it to SQL and contexts evaluate
/// it in memory, with the same meaning either way.
///
/// ```swift
/// let tree: QueryPredicate = .and([
///     .comparison(.keyPath("year"), .greaterThan, .value(1990)),
///     .comparison(.keyPath("title"), .beginsWith, .value("the"), options: .caseInsensitive),
/// ])
/// ```
///
/// Trees are values: `Sendable`, `Hashable`, and printed in format-string syntax.
public indirect enum QueryPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` (`true`) or `FALSEPREDICATE` (`false`).
    case constant(Bool)
    /// A comparison of two expressions.
    case comparison(QueryComparison)
    /// All of the predicates (`AND`); an empty list is true.
    case and([QueryPredicate])
    /// Any of the predicates (`OR`); an empty list is false.
    case or([QueryPredicate])
    /// The opposite of a predicate (`NOT`).
    case not(QueryPredicate)

    /// A comparison of two expressions.
    ///
    /// For example:
    ///
    /// ```swift
    /// // Every review has at least four stars (and a movie without reviews matches):
    /// let predicate: QueryPredicate = .comparison(.keyPath("reviews.stars"), .greaterThanOrEqualTo, .value(4), modifier: .all)
    /// ```
    ///
    /// - Parameters:
    ///   - left: The left-hand expression, usually a key path.
    ///   - comparisonOperator: How the two sides are compared.
    ///   - right: The right-hand expression, usually a value.
    ///   - options: Case and diacritic folding for string comparisons.
    ///   - modifier: `ANY` or `ALL` when the left side crosses a to-many relationship.
    public static func comparison(
        _ left: QueryExpression, _ comparisonOperator: ComparisonOperator, _ right: QueryExpression,
        options: ComparisonOptions = [], modifier: ComparisonModifier = .direct
    ) -> QueryPredicate {
        .comparison(QueryComparison(left, comparisonOperator, right, options: options, modifier: modifier))
    }

    /// `TRUEPREDICATE`: matches every object.
    public static var truePredicate: QueryPredicate { .constant(true) }
    /// `FALSEPREDICATE`: matches no object.
    public static var falsePredicate: QueryPredicate { .constant(false) }
}

/// One comparison: `left operator[options] right`, optionally under `ANY` or `ALL`.
public struct QueryComparison: Sendable, Hashable {
    /// The left-hand expression.
    public var left: QueryExpression
    /// How the two sides are compared.
    public var comparisonOperator: ComparisonOperator
    /// The right-hand expression.
    public var right: QueryExpression
    /// Case and diacritic folding for string comparisons (`[c]`, `[d]`, `[cd]`).
    public var options: ComparisonOptions
    /// `ANY`/`SOME`, `ALL`, or a direct comparison. (`NONE` is `NOT ANY`.)
    public var modifier: ComparisonModifier
    /// Whether values that cannot equal the left side match nothing instead of being a type
    /// mismatch: set by the stack kit's builders, which give Core Data's answer. Format strings
    /// cannot express it, so it is not part of a predicate's text.
    var typeMismatchMatchesNothing = false

    /// Creates a comparison.
    ///
    /// For example:
    ///
    /// ```swift
    /// let comparison = QueryComparison(.keyPath("title"), .beginsWith, "The", options: .caseInsensitive)
    /// let predicate = FetchPredicate<Movie>(.comparison(comparison))
    /// ```
    public init(
        _ left: QueryExpression, _ comparisonOperator: ComparisonOperator, _ right: QueryExpression,
        options: ComparisonOptions = [], modifier: ComparisonModifier = .direct
    ) {
        self.left = left
        self.comparisonOperator = comparisonOperator
        self.right = right
        self.options = options
        self.modifier = modifier
    }
}

/// How a comparison relates its two sides, with `NSPredicate`'s meaning.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==` (also `=`).
    case equalTo = "=="
    /// `!=` (also `<>`).
    case notEqualTo = "!="
    /// `<`.
    case lessThan = "<"
    /// `<=` (also `=<`).
    case lessThanOrEqualTo = "<="
    /// `>`.
    case greaterThan = ">"
    /// `>=` (also `=>`).
    case greaterThanOrEqualTo = ">="
    /// `BETWEEN {low, high}`: inclusive at both ends.
    case between = "BETWEEN"
    /// `IN`: the left value is one of the right-hand collection's values, or (for a string on
    /// the right) a substring of it.
    case `in` = "IN"
    /// `CONTAINS`: the left string contains the right one, or the left collection (a to-many
    /// relationship) contains the right object.
    case contains = "CONTAINS"
    /// `BEGINSWITH`.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`.
    case endsWith = "ENDSWITH"
    /// `LIKE`: the whole string matches a pattern where `*` matches any run of characters and
    /// `?` one character.
    case like = "LIKE"
    /// `MATCHES`: the whole string matches an ICU regular expression.
    case matches = "MATCHES"
}

extension ComparisonOperator {
    /// The operator that gives the same result with the operands swapped (`<` for `>`), or
    /// `nil` when there is none.
    var mirrored: ComparisonOperator? {
        switch self {
        case .equalTo: .equalTo
        case .notEqualTo: .notEqualTo
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        default: nil
        }
    }
}

/// String-comparison options: `[c]`, `[d]` and `[cd]` in format strings.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt8
    /// Creates options from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: Unicode case folding ("A" matches "a", "ß" matches "ss").
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritics are ignored ("ö" matches "o").
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// Whether a comparison applies to one value or to the values a to-many key path reaches.
public enum ComparisonModifier: String, Sendable, Hashable {
    /// A plain comparison. On a key path through a to-many relationship it means `ANY`.
    case direct = ""
    /// `ANY` (also `SOME`): at least one reached value satisfies the comparison.
    case any = "ANY"
    /// `ALL`: every reached value satisfies the comparison (true when there are none).
    case all = "ALL"
}
