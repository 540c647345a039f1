import Foundation

// MARK: - Public entry points

extension QueryPredicate {
    /// Parses an `NSPredicate`-style format string, substituting format specifiers with
    /// `arguments` in order.
    ///
    /// The grammar is `NSPredicate`'s: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`,
    /// `IN`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`, `MATCHES`, each optionally followed by
    /// `[c]`, `[d]` or `[cd]`), `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`,
    /// `FALSEPREDICATE`, the modifiers `ANY`/`SOME`, `ALL` and `NONE`, key paths with collection
    /// operators (`reviews.@avg.stars`), `SELF`, template variables (`$name`), `SUBQUERY`,
    /// string, number, Boolean and `nil` literals, lists (`{1, 2, 3}`) and dates written as
    /// `CAST(<seconds since 2001>, "NSDate")`. Keywords are case-insensitive; write `#IN` to use
    /// a reserved word as a key (after a dot, and for `SUBQUERY` and `CAST` when no `(`
    /// follows, the `#` is optional).
    ///
    /// Format specifiers consume the arguments in order:
    /// - `%@`: the argument's ``PredicateArgument/predicateExpression`` (a value, an object,
    ///   or a list for `IN`);
    /// - `%K`: a `String` argument used as a key path;
    /// - `%d`, `%i`, `%u`, `%ld`, `%lld`: an integer (a floating-point argument must hold an
    ///   exact integer);
    /// - `%f`, `%lf`, `%g`: a `Double` (integers are converted);
    /// - `%s`: a `String`.
    ///
    /// Arguments are never spliced into the text, so a value such as `"x'; DROP TABLE Movie"`
    /// stays one string constant. Inside a quoted string, specifiers are literal text and `%%`
    /// stands for one `%`.
    ///
    /// ```swift
    /// let predicate = try QueryPredicate(
    ///     format: "year >= %d AND %K BEGINSWITH[cd] %@ AND ANY reviews.stars > 3",
    ///     1990, "title", "the")
    /// ```
    ///
    /// - Complexity: O(*n*) in the length of the format string. Nesting (parentheses, `NOT`,
    ///   lists and subqueries) is limited to 200 levels.
    /// - Parameters:
    ///   - format: The format string.
    ///   - arguments: One value for each format specifier, in order.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` when the string
    ///   is malformed, when the number of arguments differs from the number of specifiers, or
    ///   when an argument does not suit its specifier. ``StrataError/offset`` gives the
    ///   0-based character offset of the problem.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses an `NSPredicate`-style format string with the format specifiers' arguments in an
    /// array.
    ///
    /// This is ``init(format:_:)`` for arguments gathered at run time.
    ///
    /// ```swift
    /// let arguments: [any PredicateArgument] = ["title", "Alien"]
    /// let predicate = try QueryPredicate(format: "%K ==[c] %@", argumentArray: arguments)
    /// ```
    ///
    /// - Complexity: O(*n*) in the length of the format string.
    /// - Parameters:
    ///   - format: The format string.
    ///   - argumentArray: One value for each format specifier, in order.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` and an
    ///   ``StrataError/offset`` when the string or its arguments are invalid.
    public init(format: String, argumentArray: [any PredicateArgument]) throws {
        var parser = try PredicateParser(format: format, arguments: argumentArray)
        self = try parser.parse()
    }

    /// Returns the predicate with its template variables (`$name`) replaced by values.
    ///
    /// Variables bound by an enclosing `SUBQUERY` are not template variables and are left
    /// alone, as is any template variable that `variables` has no value for (substitute it
    /// later, or resolving the predicate fails). A variable followed by a key path
    /// (`$director.name`) can be given a key path (`"director"` as a ``QueryExpression/keyPath(_:)``)
    /// or `SELF`; the two are joined into one key path.
    ///
    /// ```swift
    /// let template = try QueryPredicate(format: "year >= $from AND title BEGINSWITH $prefix")
    /// let predicate = try template.substituting(["from": 1990, "prefix": "The"])
    /// ```
    ///
    /// - Complexity: O(*n*) in the size of the tree.
    /// - Parameter variables: Values by variable name, without the `$`.
    /// - Returns: The predicate with the variables replaced.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` when a
    ///   variable followed by a key path is given a constant value or list, which has no
    ///   properties to follow.
    public func substituting(_ variables: [String: any PredicateArgument]) throws -> QueryPredicate {
        try substituting(variables.mapValues(\.predicateExpression), bound: [])
    }
}

// MARK: - Substitution

extension QueryPredicate {
    fileprivate func substituting(_ values: [String: QueryExpression], bound: Set<String>) throws -> QueryPredicate {
        switch self {
        case .constant:
            return self
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituting(values, bound: bound)
            comparison.right = try comparison.right.substituting(values, bound: bound)
            return .comparison(comparison)
        case .and(let parts):
            return .and(try parts.map { try $0.substituting(values, bound: bound) })
        case .or(let parts):
            return .or(try parts.map { try $0.substituting(values, bound: bound) })
        case .not(let part):
            return .not(try part.substituting(values, bound: bound))
        }
    }
}

extension QueryExpression {
    fileprivate func substituting(_ values: [String: QueryExpression], bound: Set<String>) throws -> QueryExpression {
        switch self {
        case .value, .objectID, .keyPath, .evaluatedObject:
            return self
        case .variable(let name):
            guard !bound.contains(name), let value = values[name] else { return self }
            return value
        case .keyPathOn(.variable(let name), let path) where !bound.contains(name) && values[name] != nil:
            switch values[name] {
            case .keyPath(let base)?:
                return .keyPath(base + "." + path)
            case .evaluatedObject?:
                return .keyPath(path)
            case let value? where value.isConstant:
                throw StrataError(
                    .invalidPredicate,
                    "$\(name) is followed by the key path '\(path)', so it must stand for an object or a key path; got the constant \(value). Substitute an object or key path for $\(name)."
                )
            case let value?:
                return .keyPathOn(value, path)
            case nil:
                return self
            }
        case .keyPathOn(let base, let path):
            return .keyPathOn(try base.substituting(values, bound: bound), path)
        case .list(let elements):
            return .list(try elements.map { try $0.substituting(values, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(
                collection: try collection.substituting(values, bound: bound),
                variable: variable,
                predicate: try predicate.substituting(values, bound: bound.union([variable])))
        }
    }

    /// Whether the expression is a constant value or list, which has no properties.
    fileprivate var isConstant: Bool {
        switch self {
        case .value, .list: true
        default: false
        }
    }
}

// MARK: - Source text

/// The format string as Unicode scalars, with the conversion from scalar positions to the
/// character offsets that errors report.
///
/// Lexing works on scalars so that a combining mark right after a quote or an identifier is
/// never merged into the punctuation's grapheme cluster.
struct PredicateSource {
    let scalars: [Unicode.Scalar]
    private let isASCII: Bool

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        isASCII = text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The 0-based character offset of the scalar at `index`.
    func characterOffset(_ index: Int) -> Int {
        if isASCII { return index }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[..<min(index, scalars.count)])
        return String(view).count
    }

    /// The text between two scalar positions.
    func text(_ start: Int, _ end: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[max(0, start)..<min(max(start, end), scalars.count)])
        return String(view)
    }

    /// Quotes source text for a message, shortened when long.
    func quoted(_ start: Int, _ end: Int) -> String {
        let limit = 32
        if end - start > limit { return "'" + text(start, start + limit) + "…'" }
        return "'" + text(start, end) + "'"
    }

    /// An ``StrataError/Code/invalidPredicate`` error at a scalar position; `message` receives
    /// the character offset.
    func error(at index: Int, _ message: (Int) -> String) -> StrataError {
        let offset = characterOffset(index)
        return StrataError(.invalidPredicate, message(offset), offset: offset)
    }

    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
        }
        return scalar.properties.isXIDStart
    }

    static func isIdentifierContinuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return isIdentifierStart(scalar) || isDigit(scalar) }
        return scalar.properties.isXIDContinue
    }

    static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    /// Whether `name` is an identifier that the lexer would read as one key.
    static func isIdentifier(_ name: some StringProtocol) -> Bool {
        var scalars = name.unicodeScalars.makeIterator()
        guard let first = scalars.next(), isIdentifierStart(first) else { return false }
        while let next = scalars.next() {
            guard isIdentifierContinuation(next) else { return false }
        }
        return true
    }

    /// Whether `path` is a key path: identifiers and collection operators joined by dots.
    static func isKeyPath(_ path: String) -> Bool {
        !path.isEmpty
            && path.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { component in
                isIdentifier(component) || CollectionOperator(rawValue: String(component)) != nil
            }
    }
}

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

// MARK: - Lexer

/// Splits a format string into tokens.
struct PredicateLexer {
    private let source: PredicateSource
    private var scalars: [Unicode.Scalar] { source.scalars }
    private var index = 0
    private var specifierCount = 0

    init(source: PredicateSource) {
        self.source = source
    }

    /// All tokens, ending with ``PredicateToken/Kind/end``.
    mutating func tokenize() throws -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            guard index < scalars.count else {
                tokens.append(PredicateToken(kind: .end, start: index, end: index))
                return tokens
            }
            let start = index
            let kind = try nextKind()
            tokens.append(PredicateToken(kind: kind, start: start, end: index))
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private func found(_ position: Int) -> String {
        position < scalars.count ? source.quoted(position, position + 1) : "end of string"
    }

    private mutating func nextKind() throws -> PredicateToken.Kind {
        let start = index
        let scalar = scalars[index]
        switch scalar {
        case "'", "\"":
            return .string(try lexString(quote: scalar))
        case "0"..."9":
            return try lexNumber()
        case "$", "#", "@":
            index += 1
            guard let next = peek(), PredicateSource.isIdentifierStart(next) else {
                let what =
                    switch scalar {
                    case "$": "a variable name after '$'"
                    case "#": "a key after '#'"
                    default: "a collection operator name after '@'"
                    }
                throw source.error(at: index) { "Expected \(what) at offset \($0), found \(found(index))." }
            }
            let name = lexIdentifier()
            switch scalar {
            case "$": return .variable(name)
            case "#": return .escapedIdentifier(name)
            default:
                let operatorName = "@" + name
                guard CollectionOperator(rawValue: operatorName) != nil else {
                    throw source.error(at: start) {
                        "Expected a collection operator (@count, @sum, @avg, @min or @max) at offset \($0), found '\(operatorName)'."
                    }
                }
                return .collectionOperator(operatorName)
            }
        case "%":
            return try lexFormatSpecifier()
        default:
            if PredicateSource.isIdentifierStart(scalar) {
                let name = lexIdentifier()
                if let keyword = PredicateKeyword(identifier: name) { return .keyword(keyword, text: name) }
                return .identifier(name)
            }
            return .symbol(try lexSymbol())
        }
    }

    private mutating func lexIdentifier() -> String {
        var view = String.UnicodeScalarView()
        while let scalar = peek(), PredicateSource.isIdentifierContinuation(scalar) {
            view.append(scalar)
            index += 1
        }
        return String(view)
    }

    private mutating func lexSymbol() throws -> PredicateSymbol {
        let start = index
        let first = scalars[index]
        index += 1
        let next = peek()
        func take(_ symbol: PredicateSymbol) -> PredicateSymbol {
            index += 1
            return symbol
        }
        switch first {
        case "(": return .leftParenthesis
        case ")": return .rightParenthesis
        case "{": return .leftBrace
        case "}": return .rightBrace
        case "[": return .leftBracket
        case "]": return .rightBracket
        case ",": return .comma
        case ".": return .dot
        case "-": return .minus
        case "=":
            switch next {
            case "=": return take(.doubleEqual)
            case "<": return take(.equalLess)
            case ">": return take(.equalGreater)
            default: return .equal
            }
        case "!":
            return next == "=" ? take(.notEqual) : .exclamation
        case "<":
            switch next {
            case "=": return take(.lessEqual)
            case ">": return take(.lessGreater)
            default: return .less
            }
        case ">":
            return next == "=" ? take(.greaterEqual) : .greater
        case "&" where next == "&":
            return take(.doubleAmpersand)
        case "|" where next == "|":
            return take(.doubleBar)
        case "&", "|":
            throw source.error(at: start) {
                "Expected '\(first)\(first)' at offset \($0), found \(found(start)) alone."
            }
        default:
            throw source.error(at: start) {
                "Expected a key, value, operator or parenthesis at offset \($0), found \(found(start))."
            }
        }
    }

    private mutating func lexString(quote: Unicode.Scalar) throws -> String {
        let start = index
        index += 1
        var value = String.UnicodeScalarView()
        while let scalar = peek() {
            if scalar == quote {
                index += 1
                return String(value)
            }
            if scalar == "\\" {
                value.append(try lexEscape())
                continue
            }
            if scalar == "%", peek(1) == "%" {
                value.append("%")
                index += 2
                continue
            }
            value.append(scalar)
            index += 1
        }
        throw source.error(at: start) {
            "Expected a closing \(quote) for the string that starts at offset \($0), found end of string."
        }
    }

    /// Reads a backslash escape and returns the scalar it stands for.
    private mutating func lexEscape() throws -> Unicode.Scalar {
        let start = index
        index += 1
        guard let escaped = peek() else {
            throw source.error(at: start) {
                "Expected an escaped character after '\\' at offset \($0), found end of string."
            }
        }
        index += 1
        switch escaped {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "0": return "\0"
        case "\\", "'", "\"": return escaped
        case "u":
            let code = try lexHexQuad(escapeStart: start)
            switch code {
            case 0xD800...0xDBFF:
                // A UTF-16 surrogate pair, as JSON and NSString write characters beyond the BMP.
                let lowStart = index
                guard peek() == "\\", peek(1) == "u" else {
                    throw source.error(at: start) {
                        "Expected a low surrogate \\uDC00-\\uDFFF after the high surrogate at offset \($0), found \(found(lowStart))."
                    }
                }
                index += 2
                let low = try lexHexQuad(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
                else {
                    throw source.error(at: lowStart) {
                        "Expected a low surrogate \\uDC00-\\uDFFF at offset \($0), found '\\u\(String(low, radix: 16, uppercase: true))'."
                    }
                }
                return scalar
            default:
                guard let scalar = Unicode.Scalar(code) else {
                    throw source.error(at: start) {
                        "Expected a Unicode scalar or a surrogate pair at offset \($0), found a lone low surrogate '\\u\(String(code, radix: 16, uppercase: true))'."
                    }
                }
                return scalar
            }
        default:
            throw source.error(at: start) {
                "Expected an escape sequence (\\n, \\t, \\r, \\0, \\\\, \\', \\\" or \\uXXXX) at offset \($0), found '\\\(escaped)'."
            }
        }
    }

    private mutating func lexHexQuad(escapeStart: Int) throws -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = hexDigit(scalar) else {
                throw source.error(at: escapeStart) {
                    "Expected four hex digits after '\\u' at offset \($0), found \(found(index))."
                }
            }
            code = code * 16 + digit
            index += 1
        }
        return code
    }

    private func hexDigit(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 0x30
        case "a"..."f": scalar.value - 0x61 + 10
        case "A"..."F": scalar.value - 0x41 + 10
        default: nil
        }
    }

    private mutating func lexNumber() throws -> PredicateToken.Kind {
        let start = index
        if scalars[index] == "0", let marker = peek(1) {
            let radix: Int? =
                switch marker {
                case "x", "X": 16
                case "o", "O": 8
                case "b", "B": 2
                default: nil
                }
            if let radix {
                index += 2
                let digitsStart = index
                while let scalar = peek(), let digit = hexDigit(scalar), digit < radix { index += 1 }
                guard index > digitsStart else {
                    throw source.error(at: start) {
                        "Expected base-\(radix) digits after '\(source.text(start, digitsStart))' at offset \($0), found \(found(index))."
                    }
                }
                guard let value = UInt64(source.text(digitsStart, index), radix: radix) else {
                    throw outOfRange(start)
                }
                return .integer(value)
            }
        }
        while let scalar = peek(), PredicateSource.isDigit(scalar) { index += 1 }
        var isFloatingPoint = false
        if peek() == ".", let next = peek(1), PredicateSource.isDigit(next) {
            index += 1
            while let scalar = peek(), PredicateSource.isDigit(scalar) { index += 1 }
            isFloatingPoint = true
        }
        if peek() == "e" || peek() == "E" {
            var lookahead = 1
            if peek(lookahead) == "+" || peek(lookahead) == "-" { lookahead += 1 }
            if let digit = peek(lookahead), PredicateSource.isDigit(digit) {
                index += lookahead
                while let scalar = peek(), PredicateSource.isDigit(scalar) { index += 1 }
                isFloatingPoint = true
            }
        }
        let text = source.text(start, index)
        if isFloatingPoint {
            guard let value = Double(text), value.isFinite else { throw outOfRange(start) }
            return .double(value)
        }
        guard let value = UInt64(text) else { throw outOfRange(start) }
        return .integer(value)
    }

    private func outOfRange(_ start: Int) -> StrataError {
        source.error(at: start) {
            "Expected a number that fits a 64-bit integer or a finite Double at offset \($0), found \(source.quoted(start, index))."
        }
    }

    private mutating func lexFormatSpecifier() throws -> PredicateToken.Kind {
        let start = index
        index += 1
        var length = ""
        while length.count < 2, let scalar = peek(), "hlqL".unicodeScalars.contains(scalar) {
            length.unicodeScalars.append(scalar)
            index += 1
        }
        guard let conversion = peek() else {
            throw source.error(at: start) {
                "Expected a format specifier (%@, %K, %d, %f or %s) at offset \($0), found \(source.quoted(start, index)) at the end of the string."
            }
        }
        index += 1
        let text = source.text(start, index)
        let kind: FormatSpecifier.Conversion
        switch (length, conversion) {
        case ("", "@"): kind = .object
        case ("", "K"): kind = .key
        case ("", "s"): kind = .string
        case ("", "d"), ("", "i"), ("h", "d"), ("h", "i"), ("hh", "d"), ("hh", "i"), ("l", "d"), ("l", "i"),
            ("ll", "d"), ("ll", "i"), ("q", "d"), ("q", "i"):
            kind = .integer
        case ("", "u"), ("h", "u"), ("hh", "u"), ("l", "u"), ("ll", "u"), ("q", "u"):
            kind = .unsignedInteger
        case ("", "f"), ("", "g"), ("", "e"), ("l", "f"), ("l", "g"), ("l", "e"), ("L", "f"), ("L", "g"), ("L", "e"):
            kind = .floatingPoint
        case ("", "%"):
            throw source.error(at: start) {
                "Expected a format specifier at offset \($0), found '%%'; '%%' stands for '%' only inside a quoted string."
            }
        default:
            throw source.error(at: start) {
                "Expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g or %s) at offset \($0), found '\(text)'."
            }
        }
        defer { specifierCount += 1 }
        return .format(FormatSpecifier(conversion: kind, text: text), argumentIndex: specifierCount)
    }
}

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
///             | variable ["." keypath] | subquery ["." keypath] | "CAST(" number "," "NSDate" ")"
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

    /// `CAST(seconds, "NSDate")`: a date as seconds since 2001-01-01 00:00:00 UTC.
    private mutating func parseCast() throws -> QueryExpression {
        advance()
        try expect(.leftParenthesis)
        let seconds: Double
        let token = current
        switch token.kind {
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
            throw expected("a number of seconds since 2001", found: token)
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
