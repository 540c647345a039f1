import Foundation
import Strata

/// Translates `MATCHES` patterns (ICU regular expressions, matched against the whole string)
/// into PostgreSQL's advanced regular expressions with the same meaning, or refuses them.
///
/// The two engines agree on literals, `.` (given ICU's rule that it stops at line ends),
/// bracket sets of literals and ranges, groups, alternation and quantifiers; a match of the
/// whole string does not depend on greediness. ICU's class escapes (`\d`, `\w`, `\s`, their
/// complements, inside sets too) and word boundaries (`\b`, `\B`) are Unicode-wide where
/// PostgreSQL's own follow the collation: they become explicit sets and constraints with ICU's
/// meaning (see `PostgresRegularExpression+Classes.swift`). Property escapes (`\p{…}`),
/// possessive quantifiers, look-around, back-references and inline options have no such
/// equivalent: a pattern using any of those is refused with
/// ``StrataError/Code/unsupportedPredicate`` rather than answered differently.
enum PostgresRegularExpression {
    /// ICU's `.` matches any character but these line terminators.
    private static let lineTerminators: [Unicode.Scalar] = ["\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"]

    /// The PostgreSQL pattern, anchored at both ends.
    static func translate(_ pattern: String) throws -> String {
        let scalars = Array(pattern.unicodeScalars)
        var output = ""
        var index = 0
        var depth = 0
        // Whether the last item can take a quantifier.
        var quantifiable = false

        func unsupported(_ what: String) -> StrataError {
            StrataError(
                .unsupportedPredicate,
                "The MATCHES pattern '\(pattern)' uses \(what), which PostgreSQL's regular expressions do not read as ICU does. Use literal characters, [sets] and ranges, class escapes (\\d, \\w, \\s), \\b, groups, | and quantifiers, or filter in memory.")
        }
        func invalid(_ what: String) -> StrataError {
            StrataError(.invalidPredicate, "The MATCHES pattern '\(pattern)' is not a valid regular expression: \(what).")
        }

        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\\":
                guard index + 1 < scalars.count else { throw invalid("it ends with a backslash") }
                if let ranges = classRanges(scalars[index + 1]) {
                    output += "[" + bracketBody(ranges) + "]"
                    index += 2
                    quantifiable = true
                    continue
                }
                if scalars[index + 1] == "b" || scalars[index + 1] == "B" {
                    output += wordBoundary(negated: scalars[index + 1] == "B")
                    index += 2
                    quantifiable = false
                    continue
                }
                let (literal, length) = try escape(scalars, at: index + 1, unsupported: unsupported, invalid: invalid)
                output += literalText(literal)
                index += 1 + length
                quantifiable = true
                continue
            case ".":
                output += "[^" + lineTerminators.map { bracketLiteral($0) }.joined() + "]"
                quantifiable = true
            case "[":
                let (set, length) = try bracket(scalars, at: index, unsupported: unsupported, invalid: invalid)
                output += set
                index += length
                quantifiable = true
                continue
            case "(":
                if index + 1 < scalars.count, scalars[index + 1] == "?" {
                    guard index + 2 < scalars.count, scalars[index + 2] == ":" else {
                        throw unsupported("a (? group (look-around, named group or inline option)")
                    }
                    output += "(?:"
                    index += 3
                } else {
                    output += "("
                    index += 1
                }
                depth += 1
                quantifiable = false
                continue
            case ")":
                guard depth > 0 else { throw invalid("a ) without (") }
                depth -= 1
                output += ")"
                quantifiable = true
            case "|":
                output += "|"
                quantifiable = false
            case "*", "+", "?":
                guard quantifiable else { throw invalid("'\(scalar)' follows nothing it could repeat") }
                output.unicodeScalars.append(scalar)
                index += 1
                // A lazy quantifier matches the same whole strings; a possessive one does not.
                if index < scalars.count, scalars[index] == "?" {
                    index += 1
                } else if index < scalars.count, scalars[index] == "+" {
                    throw unsupported("a possessive quantifier (\(scalar)+)")
                }
                quantifiable = false
                continue
            case "{":
                guard quantifiable else { throw invalid("'{' follows nothing it could repeat") }
                var end = index + 1
                var body = ""
                while end < scalars.count, scalars[end] != "}" {
                    body.unicodeScalars.append(scalars[end])
                    end += 1
                }
                let parts = body.split(separator: ",", omittingEmptySubsequences: false)
                guard end < scalars.count, (1...2).contains(parts.count), let low = Int(parts[0]), low <= 255,
                    parts.count == 1 || parts[1].isEmpty || Int(parts[1]).map({ $0 >= low && $0 <= 255 }) == true
                else {
                    throw unsupported("the interval {\(body)} (PostgreSQL takes counts from 0 to 255)")
                }
                output += "{\(body)}"
                index = end + 1
                if index < scalars.count, scalars[index] == "?" {
                    index += 1
                } else if index < scalars.count, scalars[index] == "+" {
                    throw unsupported("a possessive quantifier")
                }
                quantifiable = false
                continue
            case "^":
                guard index == 0 else { throw unsupported("^ after the start of the pattern") }
                quantifiable = false
            case "$":
                guard index == scalars.count - 1 else { throw unsupported("$ before the end of the pattern") }
                quantifiable = false
            case "]", "}":
                output += literalText(scalar)
                quantifiable = true
            default:
                output += literalText(scalar)
                quantifiable = true
            }
            index += 1
        }
        guard depth == 0 else { throw invalid("a ( without )") }
        return "^(?:" + output + ")$"
    }

    /// The character an escape stands for, and how many scalars after the backslash it uses.
    private static func escape(
        _ scalars: [Unicode.Scalar], at index: Int, unsupported: (String) -> StrataError, invalid: (String) -> StrataError
    ) throws -> (Unicode.Scalar, Int) {
        let scalar = scalars[index]
        switch scalar {
        case "n": return ("\n", 1)
        case "t": return ("\t", 1)
        case "r": return ("\r", 1)
        case "f": return ("\u{0C}", 1)
        case "a": return ("\u{07}", 1)
        case "e": return ("\u{1B}", 1)
        case "u":
            let digits = String(String.UnicodeScalarView(scalars[min(index + 1, scalars.count)..<min(index + 5, scalars.count)]))
            guard digits.count == 4, let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value) else {
                throw invalid("\\u needs four hexadecimal digits")
            }
            return (result, 5)
        case "x":
            if index + 1 < scalars.count, scalars[index + 1] == "{" {
                var end = index + 2
                var digits = ""
                while end < scalars.count, scalars[end] != "}" {
                    digits.unicodeScalars.append(scalars[end])
                    end += 1
                }
                guard end < scalars.count, let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value) else {
                    throw invalid("\\x{…} needs hexadecimal digits")
                }
                return (result, end - index + 1)
            }
            let digits = String(String.UnicodeScalarView(scalars[min(index + 1, scalars.count)..<min(index + 3, scalars.count)]))
            guard digits.count == 2, let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value) else {
                throw invalid("\\x needs two hexadecimal digits")
            }
            return (result, 3)
        default:
            if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                throw unsupported("the escape \\\(scalar)")
            }
            // An escaped symbol stands for itself.
            return (scalar, 1)
        }
    }

    /// A bracket set of literals and ranges, translated; refuses ICU's set operations,
    /// properties and class escapes.
    private static func bracket(
        _ scalars: [Unicode.Scalar], at start: Int, unsupported: (String) -> StrataError, invalid: (String) -> StrataError
    ) throws -> (String, Int) {
        var index = start + 1
        var negated = false
        if index < scalars.count, scalars[index] == "^" {
            negated = true
            index += 1
        }
        var items: [(Unicode.Scalar, Unicode.Scalar)] = []
        while index < scalars.count, scalars[index] != "]" {
            var scalar = scalars[index]
            if scalar == "[" { throw unsupported("a nested set or a [: class :] inside [ ]") }
            if scalar == "&", index + 1 < scalars.count, scalars[index + 1] == "&" { throw unsupported("set intersection (&&)") }
            if scalar == "-", index + 1 < scalars.count, scalars[index + 1] == "-" { throw unsupported("set difference (--)") }
            var length = 1
            if scalar == "\\", index + 1 < scalars.count, let ranges = classRanges(scalars[index + 1]) {
                // A class escape inside a set adds its ranges; it cannot start a range.
                for range in ranges {
                    if let low = Unicode.Scalar(range.lowerBound), let high = Unicode.Scalar(range.upperBound) { items.append((low, high)) }
                }
                index += 2
                if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                    throw unsupported("a range that starts at a class escape (\\\(scalars[index - 1])-)")
                }
                continue
            }
            if scalar == "\\" {
                guard index + 1 < scalars.count else { throw invalid("it ends inside [ ]") }
                let (literal, used) = try escape(scalars, at: index + 1, unsupported: unsupported, invalid: invalid)
                scalar = literal
                length = 1 + used
            }
            index += length
            if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                var upper = scalars[index + 1]
                var upperLength = 1
                if upper == "\\" {
                    guard index + 2 < scalars.count else { throw invalid("it ends inside [ ]") }
                    let (literal, used) = try escape(scalars, at: index + 2, unsupported: unsupported, invalid: invalid)
                    upper = literal
                    upperLength = 1 + used
                } else if upper == "[" {
                    throw unsupported("a nested set inside [ ]")
                }
                guard scalar.value <= upper.value else { throw invalid("the range \(scalar)-\(upper) runs backwards") }
                items.append((scalar, upper))
                index += 1 + upperLength
            } else {
                items.append((scalar, scalar))
            }
        }
        guard index < scalars.count else { throw invalid("a [ without ]") }
        guard !items.isEmpty else { throw invalid("an empty set []") }
        let body = items.map { low, high in
            low == high ? bracketLiteral(low) : bracketLiteral(low) + "-" + bracketLiteral(high)
        }.joined()
        return ("[" + (negated ? "^" : "") + body + "]", index - start + 1)
    }

    /// A character outside brackets, escaped when PostgreSQL would read it as syntax.
    private static func literalText(_ scalar: Unicode.Scalar) -> String {
        if "\\^$.[]|()*+?{}".unicodeScalars.contains(scalar) { return "\\" + String(scalar) }
        return String(scalar)
    }

    /// A character inside brackets, escaped when PostgreSQL would read it as syntax.
    static func bracketLiteral(_ scalar: Unicode.Scalar) -> String {
        if "\\]^-[".unicodeScalars.contains(scalar) { return "\\" + String(scalar) }
        return String(scalar)
    }
}
