import Foundation

// MARK: - Parser

/// A recursive-descent parser for `NSPredicate` format strings.
///
/// ```
/// predicate  := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | primary
/// primary    := "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := ["ANY" | "SOME" | "ALL" | "NONE"] expression operator ["[" options "]"] expression
/// expression := literal | list | specifier | keypath | "SELF" ["." keypath]
///             | variable ["." keypath] | subquery ["." keypath]
///             | "CAST(" (number | iso8601-string) "," "NSDate" ")"
/// ```
struct PredicateParser {
    /// The deepest nesting of parentheses, `NOT`, lists and subqueries accepted, so that
    /// hostile input cannot exhaust the stack.
    static let maximumDepth = 200

    private let source: PredicateSource
    private let tokens: [PredicateToken]
    private let arguments: [any PredicateArgument]
    private var position = 0
    private var depth = 0

    init(format: String, arguments: [any PredicateArgument]) throws {
        let source = PredicateSource(format)
        var lexer = PredicateLexer(source: source)
        let tokens = try lexer.tokenize()
        let specifiers = tokens.filter {
            if case .format = $0.kind { return true }
            return false
        }
        if specifiers.count > arguments.count {
            let missing = specifiers[arguments.count]
            throw source.error(at: missing.start) {
                "The format needs \(specifiers.count) arguments, got \(arguments.count): expected an argument for \(source.quoted(missing.start, missing.end)) at offset \($0), found none."
            }
        }
        if specifiers.count < arguments.count {
            throw source.error(at: source.scalars.count) {
                "The format needs \(specifiers.count) arguments, got \(arguments.count): expected a format specifier for the extra arguments before offset \($0), found end of string."
            }
        }
        self.source = source
        self.tokens = tokens
        self.arguments = arguments
    }

    mutating func parse() throws -> QueryPredicate {
        let predicate = try parseOr()
        guard current.kind == .end else { throw expected("AND, OR or the end of the string", found: current) }
        return predicate
    }

    // MARK: Token access

    private var current: PredicateToken { tokens[position] }

    private mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    private func isSymbol(_ symbol: PredicateSymbol) -> Bool { current.kind == .symbol(symbol) }

    private var currentKeyword: PredicateKeyword? {
        if case .keyword(let keyword, _) = current.kind { return keyword }
        return nil
    }

    private mutating func expect(_ symbol: PredicateSymbol) throws {
        guard isSymbol(symbol) else { throw expected("'\(symbol.rawValue)'", found: current) }
        advance()
    }

    private func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .end:
            return "end of string"
        case .keyword(_, let text):
            return "'\(text)' (a reserved word; write #\(text) to use it as a key)"
        default:
            return source.quoted(token.start, token.end)
        }
    }

    private func expected(_ what: String, found token: PredicateToken) -> StrataError {
        source.error(at: token.start) { "Expected \(what) at offset \($0), found \(describe(token))." }
    }

    private mutating func enterNesting(at token: PredicateToken) throws {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw source.error(at: token.start) {
                "The predicate is nested too deeply at offset \($0): expected at most \(Self.maximumDepth) levels of parentheses, NOT, lists and subqueries, found more."
            }
        }
    }

    // MARK: Predicates

    private mutating func parseOr() throws -> QueryPredicate {
        var parts = [try parseAnd()]
        while currentKeyword == .or || isSymbol(.doubleBar) {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws -> QueryPredicate {
        var parts = [try parseNot()]
        while currentKeyword == .and || isSymbol(.doubleAmpersand) {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws -> QueryPredicate {
        guard currentKeyword == .not || isSymbol(.exclamation) else { return try parsePrimaryPredicate() }
        try enterNesting(at: current)
        defer { depth -= 1 }
        advance()
        return .not(try parseNot())
    }

    private mutating func parsePrimaryPredicate() throws -> QueryPredicate {
        if isSymbol(.leftParenthesis) {
            try enterNesting(at: current)
            defer { depth -= 1 }
            advance()
            let inner = try parseOr()
            try expect(.rightParenthesis)
            return inner
        }
        switch currentKeyword {
        case .truePredicate:
            advance()
            return .constant(true)
        case .falsePredicate:
            advance()
            return .constant(false)
        default:
            return try parseComparison()
        }
    }

    private mutating func parseComparison() throws -> QueryPredicate {
        var modifier = ComparisonModifier.direct
        var isNegated = false
        var modifierToken: PredicateToken?
        switch currentKeyword {
        case .anyOf, .someOf: modifier = .any
        case .allOf: modifier = .all
        case .noneOf:
            modifier = .any
            isNegated = true
        default: break
        }
        if modifier != .direct {
            modifierToken = current
            advance()
        }
        guard canStartExpression(current) else {
            if let modifierToken {
                throw expected(
                    "an expression after \(source.quoted(modifierToken.start, modifierToken.end))", found: current)
            }
            throw expected("a predicate", found: current)
        }
        let left = try parseExpression()
        let comparisonOperator = try parseOperator()
        let options = try parseOptions()
        let rightToken = current
        guard canStartExpression(rightToken) else {
            throw expected("an expression after \(comparisonOperator.rawValue)", found: rightToken)
        }
        let right = try parseExpression()
        if comparisonOperator == .between {
            guard case .list(let bounds) = right, bounds.count == 2 else {
                let end = tokens[max(position - 1, 0)].end
                throw source.error(at: rightToken.start) {
                    "Expected a two-element list {low, high} after BETWEEN at offset \($0), found \(source.quoted(rightToken.start, end))."
                }
            }
        }
        let comparison = QueryPredicate.comparison(
            left, comparisonOperator, right, options: options, modifier: modifier)
        return isNegated ? .not(comparison) : comparison
    }

    private mutating func parseOperator() throws -> ComparisonOperator {
        let comparisonOperator: ComparisonOperator? =
            switch current.kind {
            case .symbol(.doubleEqual), .symbol(.equal): .equalTo
            case .symbol(.notEqual), .symbol(.lessGreater): .notEqualTo
            case .symbol(.less): .lessThan
            case .symbol(.lessEqual), .symbol(.equalLess): .lessThanOrEqualTo
            case .symbol(.greater): .greaterThan
            case .symbol(.greaterEqual), .symbol(.equalGreater): .greaterThanOrEqualTo
            case .keyword(.between, _): .between
            case .keyword(.in, _): .in
            case .keyword(.contains, _): .contains
            case .keyword(.beginsWith, _): .beginsWith
            case .keyword(.endsWith, _): .endsWith
            case .keyword(.like, _): .like
            case .keyword(.matches, _): .matches
            default: nil
            }
        guard let comparisonOperator else {
            throw source.error(at: current.start) {
                "Expected a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE or MATCHES) at offset \($0), found \(current.kind == .end ? "end of string" : source.quoted(current.start, current.end))."
            }
        }
        advance()
        return comparisonOperator
    }

    /// `[c]`, `[d]`, `[cd]`; `n` and `l` are accepted for compatibility and have no effect.
    private mutating func parseOptions() throws -> ComparisonOptions {
        guard isSymbol(.leftBracket) else { return [] }
        advance()
        guard case .identifier(let letters) = current.kind else {
            throw expected("comparison options (c, d, n or l) after '['", found: current)
        }
        var options: ComparisonOptions = []
        for letter in letters.unicodeScalars {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n", "l": break
            default: throw expected("comparison options (c, d, n or l) after '['", found: current)
            }
        }
        advance()
        try expect(.rightBracket)
        return options
    }

    // MARK: Expressions

    private func canStartExpression(_ token: PredicateToken) -> Bool {
        switch token.kind {
        case .identifier, .escapedIdentifier, .collectionOperator, .variable, .string, .integer, .double, .format,
            .symbol(.minus), .symbol(.leftBrace):
            return true
        case .keyword(let keyword, _):
            switch keyword {
            case .trueValue, .yes, .falseValue, .no, .nilValue, .null, .evaluatedObject, .subquery, .cast: return true
            default: return false
            }
        default:
            return false
        }
    }

    private mutating func parseExpression() throws -> QueryExpression {
        let token = current
        switch token.kind {
        case .string(let value):
            advance()
            return .value(.string(value))
        case .integer(let magnitude):
            advance()
            guard let value = Int64(exactly: magnitude) else { throw integerOutOfRange(token) }
            return .value(.integer(value))
        case .double(let value):
            advance()
            return .value(.double(value))
        case .symbol(.minus):
            advance()
            return .value(try parseNegativeNumber(minus: token))
        case .symbol(.leftBrace):
            return try parseList()
        case .format(let specifier, let index):
            advance()
            return try parseFormatArgument(specifier, index: index, token: token)
        case .variable(let name):
            advance()
            return try parseKeyPathSuffix(on: .variable(name))
        case .identifier, .escapedIdentifier, .collectionOperator:
            return .keyPath(try parseKeyPath())
        case .keyword(let keyword, _):
            switch keyword {
            case .trueValue, .yes:
                advance()
                return .value(.boolean(true))
            case .falseValue, .no:
                advance()
                return .value(.boolean(false))
            case .nilValue, .null:
                advance()
                return .value(.null)
            case .evaluatedObject:
                advance()
                guard isSymbol(.dot) else { return .evaluatedObject }
                advance()
                return .keyPath(try parseKeyPathComponents())
            case .subquery, .cast:
                // Contextual: only a following '(' makes these keywords, so that a key such as
                // `cast` (a movie's cast) needs no '#'.
                guard position + 1 < tokens.count, tokens[position + 1].kind == .symbol(.leftParenthesis) else {
                    return .keyPath(try parseKeyPath())
                }
                return keyword == .cast ? try parseCast() : try parseKeyPathSuffix(on: try parseSubquery())
            default:
                throw expected("an expression", found: token)
            }
        default:
            throw expected("an expression", found: token)
        }
    }

    private func integerOutOfRange(_ token: PredicateToken) -> StrataError {
        let end = tokens[max(position - 1, 0)].end
        return source.error(at: token.start) {
            "Expected an integer from \(Int64.min) to \(Int64.max) at offset \($0), found \(source.quoted(token.start, end))."
        }
    }

    /// A number after a minus sign; `-9223372036854775808` is `Int64.min`.
    private mutating func parseNegativeNumber(minus: PredicateToken) throws -> AttributeValue {
        switch current.kind {
        case .integer(let magnitude):
            advance()
            if magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
            guard let value = Int64(exactly: magnitude) else { throw integerOutOfRange(minus) }
            return .integer(-value)
        case .double(let value):
            advance()
            return .double(-value)
        default:
            throw expected("a number after '-'", found: current)
        }
    }

    /// A key path whose first component is an identifier, `#name`, a collection operator, or
    /// `SUBQUERY` or `CAST` used as a key (not followed by '(').
    private mutating func parseKeyPath() throws -> String {
        let first: String
        switch current.kind {
        case .identifier(let name), .escapedIdentifier(let name), .collectionOperator(let name),
            .keyword(.subquery, let name), .keyword(.cast, let name):
            first = name
        default:
            throw expected("a key", found: current)
        }
        advance()
        guard isSymbol(.dot) else { return first }
        advance()
        return first + "." + (try parseKeyPathComponents())
    }

    /// The components after a dot. Reserved words need no `#` here: nothing else can follow a
    /// dot.
    private mutating func parseKeyPathComponents() throws -> String {
        var components: [String] = []
        while true {
            switch current.kind {
            case .identifier(let name), .escapedIdentifier(let name), .collectionOperator(let name),
                .keyword(_, let name):
                components.append(name)
            default:
                throw expected("a key after '.'", found: current)
            }
            advance()
            guard isSymbol(.dot) else { return components.joined(separator: ".") }
            advance()
        }
    }

    private mutating func parseKeyPathSuffix(on base: QueryExpression) throws -> QueryExpression {
        guard isSymbol(.dot) else { return base }
        advance()
        return .keyPathOn(base, try parseKeyPathComponents())
    }

    private mutating func parseList() throws -> QueryExpression {
        try enterNesting(at: current)
        defer { depth -= 1 }
        advance()
        var elements: [QueryExpression] = []
        if isSymbol(.rightBrace) {
            advance()
            return .list([])
        }
        while true {
            guard canStartExpression(current) else { throw expected("an expression", found: current) }
            elements.append(try parseExpression())
            if isSymbol(.comma) {
                advance()
                continue
            }
            guard isSymbol(.rightBrace) else { throw expected("',' or '}'", found: current) }
            advance()
            return .list(elements)
        }
    }

    private mutating func parseSubquery() throws -> QueryExpression {
        try enterNesting(at: current)
        defer { depth -= 1 }
        advance()
        try expect(.leftParenthesis)
        guard canStartExpression(current) else { throw expected("the collection of a SUBQUERY", found: current) }
        let collection = try parseExpression()
        try expect(.comma)
        guard case .variable(let variable) = current.kind else {
            throw expected("a variable such as $x as the second argument of SUBQUERY", found: current)
        }
        advance()
        try expect(.comma)
        let predicate = try parseOr()
        try expect(.rightParenthesis)
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// `CAST(seconds, "NSDate")`: a date as seconds since 2001-01-01 00:00:00 UTC, as Core Data
    /// writes it; or `CAST("1999-12-31T23:59:59.5Z", "NSDate")`: a date as ISO 8601 text (a day,
    /// or a day and a time with an optional fraction and zone; UTC when it has none).
    private mutating func parseCast() throws -> QueryExpression {
        advance()
        try expect(.leftParenthesis)
        let seconds: Double
        let token = current
        switch token.kind {
        case .string(let text):
            guard let date = DateText.date(fromISO8601: text) else {
                throw source.error(at: token.start) {
                    "Expected an ISO 8601 date (such as \"1999-12-31\" or \"1999-12-31T23:59:59.5Z\") or a number of seconds since 2001 in CAST at offset \($0), found \(source.quoted(token.start, token.end))."
                }
            }
            advance()
            seconds = date.timeIntervalSinceReferenceDate
        case .integer(let magnitude):
            advance()
            guard let value = Int64(exactly: magnitude) else { throw integerOutOfRange(token) }
            seconds = Double(value)
        case .double(let value):
            advance()
            seconds = value
        case .symbol(.minus):
            advance()
            switch try parseNegativeNumber(minus: token) {
            case .integer(let value): seconds = Double(value)
            case .double(let value): seconds = value
            default: throw expected("a number of seconds since 2001", found: token)
            }
        default:
            throw expected("a number of seconds since 2001 or an ISO 8601 date", found: token)
        }
        try expect(.comma)
        guard case .string("NSDate") = current.kind else { throw expected("\"NSDate\"", found: current) }
        advance()
        try expect(.rightParenthesis)
        return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
    }

    // MARK: Format arguments

    private mutating func parseFormatArgument(
        _ specifier: FormatSpecifier, index: Int, token: PredicateToken
    ) throws -> QueryExpression {
        // The initializer checked that there is one argument per specifier.
        guard index < arguments.count else { throw expected("an argument", found: token) }
        let expression = arguments[index].predicateExpression
        func wrongType(_ what: String) -> StrataError {
            source.error(at: token.start) {
                "Expected \(what) for \(specifier.text) (argument \(index + 1)) at offset \($0), found \(Self.kindDescription(expression))."
            }
        }
        switch specifier.conversion {
        case .object:
            return expression
        case .key:
            guard case .value(.string(let key)) = expression else { throw wrongType("a String key path") }
            guard PredicateSource.isKeyPath(key) else {
                throw source.error(at: token.start) {
                    "Expected a key path (names and collection operators joined by '.') for %K (argument \(index + 1)) at offset \($0), found \(String(reflecting: key))."
                }
            }
            guard isSymbol(.dot) else { return .keyPath(key) }
            advance()
            return .keyPath(key + "." + (try parseKeyPathComponents()))
        case .integer, .unsignedInteger:
            let value: Int64
            switch expression {
            case .value(.integer(let integer)):
                value = integer
            case .value(.double(let double)) where Int64(exactly: double) != nil:
                value = Int64(exactly: double) ?? 0
            case .value(.float(let float)) where Int64(exactly: float) != nil:
                value = Int64(exactly: float) ?? 0
            default:
                throw wrongType("an integer")
            }
            if specifier.conversion == .unsignedInteger && value < 0 { throw wrongType("a non-negative integer") }
            return .value(.integer(value))
        case .floatingPoint:
            switch expression {
            case .value(.double): return expression
            case .value(.integer(let integer)): return .value(.double(Double(integer)))
            case .value(.float(let float)): return .value(.double(Double(float)))
            default: throw wrongType("a number")
            }
        case .string:
            guard case .value(.string) = expression else { throw wrongType("a String") }
            return expression
        }
    }

    static func kindDescription(_ expression: QueryExpression) -> String {
        switch expression {
        case .value(.null): "nil"
        case .value(let value): "a \(value.kindName) value"
        case .objectID: "an object ID"
        case .list: "a list"
        case .keyPath, .keyPathOn: "a key path"
        case .variable: "a variable"
        case .evaluatedObject: "SELF"
        case .subquery: "a SUBQUERY"
        }
    }
}
