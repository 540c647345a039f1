import Foundation

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
