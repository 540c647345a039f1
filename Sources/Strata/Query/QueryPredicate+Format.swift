import Foundation

extension QueryPredicate: CustomStringConvertible {
    /// The predicate in `NSPredicate` format syntax.
    ///
    /// ``QueryPredicate/init(format:_:)`` reads the text back to an equal tree, with two
    /// exceptions: values that have no literal syntax (UUIDs, data, URLs, decimals, `Codable`
    /// values, object IDs and non-finite numbers) are written in a readable form such as
    /// `UUID("…")` that does not parse, and a `Float` is written as a number that parses as a
    /// `Double`. Strings are double-quoted with backslash escapes, reserved words used as keys
    /// are escaped with `#`, and dates are written as `CAST(<seconds since 2001>, "NSDate")`.
    ///
    /// ```swift
    /// let predicate: QueryPredicate = .and([
    ///     .comparison(.keyPath("year"), .greaterThan, .value(1990)),
    ///     .comparison(.keyPath("title"), .beginsWith, .value("The"), options: .caseInsensitive),
    /// ])
    /// print(predicate)   // year > 1990 AND title BEGINSWITH[c] "The"
    /// ```
    ///
    /// - Complexity: O(*n*) in the size of the tree.
    public var description: String {
        var output = ""
        PredicateFormatter.write(self, position: .top, into: &output)
        return output
    }
}

extension QueryExpression: CustomStringConvertible {
    /// The expression in `NSPredicate` format syntax, as it appears in
    /// ``QueryPredicate/description``.
    ///
    /// ```swift
    /// print(QueryExpression.keyPathOn(.variable("review"), "stars"))   // $review.stars
    /// ```
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    public var description: String {
        var output = ""
        PredicateFormatter.write(self, into: &output)
        return output
    }
}

/// Renders predicate trees in the syntax that ``PredicateParser`` reads.
enum PredicateFormatter {
    /// Where a predicate appears, which decides whether it needs parentheses.
    enum Position {
        case top, orOperand, andOperand, notOperand
    }

    static func write(_ predicate: QueryPredicate, position: Position, into output: inout String) {
        switch predicate {
        case .constant(let value):
            output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison):
            write(comparison, into: &output)
        case .and(let parts):
            writeJunction(parts, keyword: "AND", empty: "TRUEPREDICATE", position: position, into: &output)
        case .or(let parts):
            writeJunction(parts, keyword: "OR", empty: "FALSEPREDICATE", position: position, into: &output)
        case .not(.comparison(let comparison)) where comparison.modifier == .any:
            var direct = comparison
            direct.modifier = .direct
            output += "NONE "
            write(direct, into: &output)
        case .not(let part):
            output += "NOT "
            write(part, position: .notOperand, into: &output)
        }
    }

    /// Writes an `AND` or `OR`. Nested junctions are always parenthesized: the parser flattens
    /// only unparenthesized chains, so this keeps the tree's shape, and `(a AND b) OR c` reads
    /// more easily than relying on precedence.
    private static func writeJunction(
        _ parts: [QueryPredicate], keyword: String, empty: String, position: Position, into output: inout String
    ) {
        switch parts.count {
        case 0:
            output += empty
        case 1:
            write(parts[0], position: position, into: &output)
        default:
            let needsParentheses = position != .top
            if needsParentheses { output += "(" }
            for (index, part) in parts.enumerated() {
                if index > 0 { output += " \(keyword) " }
                write(part, position: keyword == "AND" ? .andOperand : .orOperand, into: &output)
            }
            if needsParentheses { output += ")" }
        }
    }

    private static func write(_ comparison: QueryComparison, into output: inout String) {
        switch comparison.modifier {
        case .direct: break
        case .any: output += "ANY "
        case .all: output += "ALL "
        }
        write(comparison.left, into: &output)
        output += " " + comparison.comparisonOperator.rawValue
        var letters = ""
        if comparison.options.contains(.caseInsensitive) { letters += "c" }
        if comparison.options.contains(.diacriticInsensitive) { letters += "d" }
        if !letters.isEmpty { output += "[\(letters)]" }
        output += " "
        write(comparison.right, into: &output)
    }

    static func write(_ expression: QueryExpression, into output: inout String) {
        switch expression {
        case .value(let value):
            write(value, into: &output)
        case .objectID(let objectID):
            output += "ObjectID(" + quoted(objectID.uriRepresentation.absoluteString) + ")"
        case .keyPath(let path):
            writeKeyPath(path, into: &output)
        case .evaluatedObject:
            output += "SELF"
        case .variable(let name):
            output += "$" + name
        case .keyPathOn(let base, let path):
            write(base, into: &output)
            output += "."
            writeKeyPath(path, into: &output)
        case .list(let elements):
            output += "{"
            for (index, element) in elements.enumerated() {
                if index > 0 { output += ", " }
                write(element, into: &output)
            }
            output += "}"
        case .subquery(let collection, let variable, let predicate):
            output += "SUBQUERY("
            write(collection, into: &output)
            output += ", $\(variable), "
            write(predicate, position: .top, into: &output)
            output += ")"
        }
    }

    /// Writes a key path, escaping reserved words with `#` (`#IN`, `director.#SELF`).
    private static func writeKeyPath(_ path: String, into output: inout String) {
        for (index, component) in path.split(separator: ".", omittingEmptySubsequences: false).enumerated() {
            if index > 0 { output += "." }
            if PredicateKeyword.isReserved(component) { output += "#" }
            output += component
        }
    }

    private static func write(_ value: AttributeValue, into output: inout String) {
        switch value {
        case .null:
            output += "nil"
        case .integer(let integer):
            output += String(integer)
        case .double(let double):
            output += double.isFinite ? "\(double)" : "Double(\(double))"
        case .float(let float):
            output += float.isFinite ? "\(float)" : "Float(\(float))"
        case .decimal(let decimal):
            output += "Decimal(" + quoted(decimal.description) + ")"
        case .string(let string):
            output += quoted(string)
        case .boolean(let boolean):
            output += boolean ? "TRUE" : "FALSE"
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            output += seconds.isFinite ? "CAST(\(seconds), \"NSDate\")" : "Date(\(seconds))"
        case .data(let data):
            output += "Data(<" + data.map { byte in hex(UInt32(byte), width: 2) }.joined() + ">)"
        case .uuid(let uuid):
            output += "UUID(" + quoted(uuid.uuidString) + ")"
        case .url(let url):
            output += "URL(" + quoted(url.absoluteString) + ")"
        case .codable(let json):
            output += "Codable(" + quoted(String(decoding: json, as: UTF8.self)) + ")"
        }
    }

    /// A double-quoted string literal: quotes, backslashes and control characters escaped, and
    /// `%` doubled (inside quotes the parser reads `%%` as `%`).
    static func quoted(_ string: String) -> String {
        var output = String.UnicodeScalarView()
        output.append("\"")
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output.append(contentsOf: "\\\"".unicodeScalars)
            case "\\": output.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": output.append(contentsOf: "\\n".unicodeScalars)
            case "\t": output.append(contentsOf: "\\t".unicodeScalars)
            case "\r": output.append(contentsOf: "\\r".unicodeScalars)
            case "\0": output.append(contentsOf: "\\0".unicodeScalars)
            case "%": output.append(contentsOf: "%%".unicodeScalars)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    output.append(contentsOf: ("\\u" + hex(scalar.value, width: 4)).unicodeScalars)
                } else {
                    output.append(scalar)
                }
            }
        }
        output.append("\"")
        return String(output)
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
