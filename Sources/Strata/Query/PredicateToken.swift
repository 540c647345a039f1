import Foundation

// MARK: - Tokens

/// The reserved words of the format syntax; matched case-insensitively.
enum PredicateKeyword: String, CaseIterable {
    case and = "AND"
    case or = "OR"
    case not = "NOT"
    case truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE"
    case anyOf = "ANY"
    case someOf = "SOME"
    case allOf = "ALL"
    case noneOf = "NONE"
    case between = "BETWEEN"
    case `in` = "IN"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case like = "LIKE"
    case matches = "MATCHES"
    case evaluatedObject = "SELF"
    case trueValue = "TRUE"
    case yes = "YES"
    case falseValue = "FALSE"
    case no = "NO"
    case nilValue = "NIL"
    case null = "NULL"
    case subquery = "SUBQUERY"
    case cast = "CAST"

    /// The keyword an identifier spells, if any. Only ASCII identifiers are keywords, so that
    /// case mapping (Turkish dotless i, say) never turns a key into one.
    init?(identifier: some StringProtocol) {
        guard identifier.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        self.init(rawValue: identifier.uppercased())
    }

    /// Whether a key-path component must be written with `#` to be read as a key.
    static func isReserved(_ name: some StringProtocol) -> Bool { PredicateKeyword(identifier: name) != nil }
}

/// Punctuation and operator symbols.
enum PredicateSymbol: String {
    case leftParenthesis = "("
    case rightParenthesis = ")"
    case leftBrace = "{"
    case rightBrace = "}"
    case leftBracket = "["
    case rightBracket = "]"
    case comma = ","
    case dot = "."
    case minus = "-"
    case doubleEqual = "=="
    case equal = "="
    case notEqual = "!="
    case lessGreater = "<>"
    case less = "<"
    case lessEqual = "<="
    case equalLess = "=<"
    case greater = ">"
    case greaterEqual = ">="
    case equalGreater = "=>"
    case doubleAmpersand = "&&"
    case doubleBar = "||"
    case exclamation = "!"
}

/// A format specifier such as `%@` or `%lld`.
struct FormatSpecifier: Equatable {
    enum Conversion: Equatable {
        case object, key, integer, unsignedInteger, floatingPoint, string
    }

    var conversion: Conversion
    /// The specifier as written, for messages.
    var text: String
}

struct PredicateToken {
    enum Kind: Equatable {
        case identifier(String)
        /// `#name`: a key, even when `name` is a reserved word.
        case escapedIdentifier(String)
        /// `@count`, `@sum`, ...
        case collectionOperator(String)
        /// `$name`.
        case variable(String)
        case keyword(PredicateKeyword, text: String)
        case string(String)
        /// The magnitude of an integer literal; the parser applies a leading minus and checks
        /// the range.
        case integer(UInt64)
        case double(Double)
        case format(FormatSpecifier, argumentIndex: Int)
        case symbol(PredicateSymbol)
        case end
    }

    var kind: Kind
    /// The scalar positions of the token in the source.
    var start: Int
    var end: Int
}
