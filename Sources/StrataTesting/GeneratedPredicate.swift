import Foundation
import Strata

/// A random format-string predicate over ``DifferentialModel``, with its arguments, made from a
/// seed or from a fuzzer's bytes.
///
/// The grammar covers what a format string can say about the model: comparisons of every
/// attribute type with constants of the same and of other types (integers with doubles and
/// decimals, dates with numbers, and types that cannot be compared at all), attributes compared
/// with attributes, `BETWEEN`, `IN`, the string operators with `[c]`, `[d]` and `[cd]`, `LIKE`
/// and `MATCHES`, `nil` tests, key paths through to-one relationships, the collection operators
/// `@count`, `@sum`, `@avg`, `@min` and `@max`, `ANY`/`SOME`/`ALL`/`NONE`, nested `SUBQUERY`s
/// with variables, `NOT`, `AND` and `OR`, and now and then an unknown key or a misplaced
/// operator. Constants are written as literals or passed as arguments (`%@`, `%d`, `%f`, `%K`
/// for keys), so the parser's substitution is exercised too.
///
/// ```swift
/// let predicate = GeneratedPredicate(seed: 42)
/// print(predicate)   // Item: parts.@sum.size > %@ AND name BEGINSWITH[cd] 'e' [Int64(3)]
/// ```
///
/// The same seed (or the same bytes) and options always give the same predicate.
public struct GeneratedPredicate: CustomStringConvertible {
    /// What the grammar may generate beyond its default.
    public struct Options: Sendable, Hashable {
        /// Whether constants include `Double.nan`, `Decimal.nan` and `-0.0`. On by default: both
        /// evaluators refuse a NaN constant with the same `invalidPredicate` error, and `-0.0`
        /// compares equal to zero in both.
        public var includesNaNAndNegativeZero = true
        /// Whether string constants may contain NUL (`"\0"`) characters. Off by default: GRDB
        /// hands text to custom SQL functions as C strings, so SQL sees such a string cut at
        /// its first NUL (a known limitation).
        public var includesNULCharacters = false
        /// How deeply `AND`, `OR`, `NOT` and `SUBQUERY` may nest.
        public var maximumDepth = 4

        /// The default options: NaN and `-0.0` constants, no NUL characters, depth 4.
        public init() {}
    }

    /// The entity to fetch.
    public var root: DifferentialModel.Root
    /// The format string.
    public var format: String
    /// One argument per format specifier, in order.
    public var arguments: [any PredicateArgument]

    /// Creates a predicate from a format string and its arguments, to check one by hand.
    ///
    /// - Parameters:
    ///   - root: The entity to fetch.
    ///   - format: The format string.
    ///   - arguments: One argument per format specifier.
    public init(_ root: DifferentialModel.Root, format: String, arguments: [any PredicateArgument] = []) {
        self.root = root
        self.format = format
        self.arguments = arguments
    }

    /// Generates a predicate from a seed.
    ///
    /// - Parameters:
    ///   - seed: Any value; equal seeds give equal predicates.
    ///   - options: What the grammar may generate.
    public init(seed: UInt64, options: Options = Options()) {
        var grammar = PredicateGrammar(source: SeededChoices(seed: seed), options: options)
        self = grammar.generate()
    }

    /// Generates a predicate from bytes, for a coverage-guided fuzzer: each byte makes one
    /// choice, and when the bytes run out every further choice is the first (the simplest) one.
    ///
    /// - Parameters:
    ///   - bytes: The fuzzer's input.
    ///   - options: What the grammar may generate.
    public init<Bytes: Collection<UInt8>>(bytes: Bytes, options: Options = Options()) {
        var grammar = PredicateGrammar(source: ByteChoices(Array(bytes)), options: options)
        self = grammar.generate()
    }

    /// The entity, the format string and the arguments, in a form that can be pasted into a test.
    public var description: String {
        "\(root.rawValue): \(format) [\(arguments.map(Self.describe).joined(separator: ", "))]"
    }

    /// Swift source for an argument.
    static func describe(_ argument: any PredicateArgument) -> String {
        switch argument {
        case let value as Int: return "\(value)"
        case let value as Int64: return "Int64(\(value))"
        case let value as Double: return "Double(\(describe(double: value)))"
        case let value as Decimal: return "Decimal(string: \"\(value)\")"
        case let value as String: return String(reflecting: value)
        case let value as Bool: return "\(value)"
        case let value as Date:
            return "Date(timeIntervalSinceReferenceDate: \(describe(double: value.timeIntervalSinceReferenceDate)))"
        case let values as [AttributeValue]:
            return "[" + values.map(describe(value:)).joined(separator: ", ") + "] as [AttributeValue]"
        case let value as AttributeValue: return describe(value: value)
        case let value as Int?: return value.map { "\($0)" } ?? "Int?.none"
        default: return String(describing: argument)
        }
    }

    private static func describe(double: Double) -> String {
        if double.isNaN { return ".nan" }
        if double.isInfinite { return double < 0 ? "-.infinity" : ".infinity" }
        return "\(double)"
    }

    private static func describe(value: AttributeValue) -> String {
        switch value {
        case .null: ".null"
        case .integer(let number): ".integer(\(number))"
        case .double(let number): ".double(\(describe(double: number)))"
        case .decimal(let number): ".decimal(Decimal(string: \"\(number)\") ?? 0)"
        case .string(let text): ".string(\(String(reflecting: text)))"
        case .boolean(let flag): ".boolean(\(flag))"
        case .date(let date):
            ".date(Date(timeIntervalSinceReferenceDate: \(describe(double: date.timeIntervalSinceReferenceDate))))"
        default: String(describing: value)
        }
    }
}
