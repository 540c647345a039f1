import Foundation

/// The one definition of how predicate values compare, shared by the in-memory evaluator and
/// by the functions and collations the SQLite store registers, so both executors agree.
///
/// - Strings compare by their UTF-8 bytes (Unicode scalar order, SQLite's `BINARY`); `[c]`
///   and `[d]` fold both sides first (``StringFolding``).
/// - Numbers compare by value, integers and doubles exactly; decimals exactly.
/// - Dates by time, Booleans `false < true`, UUIDs and data by their bytes, URLs by their
///   absolute string.
package enum ValueComparison {
    /// The order of two non-nil values compared as `kind`: -1, 0 or 1; `nil` when either is nil
    /// or they cannot be compared.
    package static func compare(_ left: AttributeValue, _ right: AttributeValue, as kind: ValueKind) -> Int? {
        if left.isNull || right.isNull { return nil }
        switch kind {
        case .integer, .double, .boolean, .date:
            return compareNumbers(left, right)
        case .decimal:
            guard let a = decimal(left), let b = decimal(right) else { return nil }
            return a < b ? -1 : (a == b ? 0 : 1)
        case .string, .url:
            guard let a = text(left), let b = text(right) else { return nil }
            return compareBytes(a.utf8, b.utf8)
        case .data, .uuid, .codable:
            guard let a = bytes(left), let b = bytes(right) else { return nil }
            return compareBytes(a, b)
        }
    }

    package static func text(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let text): text
        case .url(let url): url.absoluteString
        default: nil
        }
    }

    package static func decimal(_ value: AttributeValue) -> Decimal? {
        switch value {
        case .decimal(let number): number
        case .integer(let number): Decimal(number)
        case .double(let number): AttributeValue.double(number).converted(to: .decimal).flatMap(decimal)
        default: nil
        }
    }

    private static func bytes(_ value: AttributeValue) -> Data? {
        switch value {
        case .data(let data), .codable(let data): data
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { Data($0) }
        default: nil
        }
    }

    package static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    /// Integers, doubles, floats, Booleans and dates as numbers, compared exactly as SQLite
    /// compares INTEGER and REAL values.
    private static func compareNumbers(_ left: AttributeValue, _ right: AttributeValue) -> Int? {
        enum Number {
            case integer(Int64)
            case double(Double)
        }
        func number(_ value: AttributeValue) -> Number? {
            switch value {
            case .integer(let n): .integer(n)
            case .double(let n): .double(n)
            case .float(let n): .double(Double(n))
            case .boolean(let flag): .integer(flag ? 1 : 0)
            case .date(let date): .double(date.timeIntervalSinceReferenceDate)
            default: nil
            }
        }
        guard let a = number(left), let b = number(right) else { return nil }
        // SQLite stores NaN as NULL, so NaN compares with nothing, as nil does.
        if case .double(let x) = a, x.isNaN { return nil }
        if case .double(let y) = b, y.isNaN { return nil }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .double(let y)): return -compareDouble(y, x)
        case (.double(let x), .integer(let y)): return compareDouble(x, y)
        }
    }

    /// Compares a double with an integer without rounding the integer.
    private static func compareDouble(_ x: Double, _ y: Int64) -> Int {
        // Beyond Int64's range (2^63) the double decides; converting would trap.
        if x < -0x1p63 { return -1 }
        if x >= 0x1p63 { return 1 }
        let whole = x.rounded(.down)
        let integer = Int64(whole)
        if integer != y { return integer < y ? -1 : 1 }
        return x > whole ? 1 : 0
    }
}

/// Case and diacritic folding for `[c]`, `[d]` and `[cd]`.
package enum StringFolding {
    package static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        guard !options.isEmpty else { return text }
        var foldingOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldingOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldingOptions.insert(.diacriticInsensitive) }
        return text.folding(options: foldingOptions, locale: nil).precomposedStringWithCanonicalMapping
    }
}

/// String operators with one meaning in memory and in SQL: byte-wise on UTF-8, as SQLite's
/// `instr` and `=` work.
package enum StringMatching {
    package static func contains(_ text: String, _ part: String) -> Bool {
        if part.isEmpty { return true }
        return Array(text.utf8).firstRange(of: Array(part.utf8)) != nil
    }

    package static func beginsWith(_ text: String, _ prefix: String) -> Bool {
        text.utf8.starts(with: prefix.utf8)
    }

    package static func endsWith(_ text: String, _ suffix: String) -> Bool {
        text.utf8.reversed().starts(with: suffix.utf8.reversed())
    }

    /// `LIKE`: `*` matches any run of characters, `?` one character (a Unicode scalar), `\`
    /// escapes the next one; the whole string must match.
    package static func like(_ text: String, _ pattern: String) -> Bool {
        let value = Array(text.unicodeScalars)
        var tokens: [LikeToken] = []
        var iterator = pattern.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            switch scalar {
            case "*": if tokens.last != .any { tokens.append(.any) }
            case "?": tokens.append(.one)
            case "\\": tokens.append(.literal(iterator.next() ?? "\\"))
            default: tokens.append(.literal(scalar))
            }
        }
        // Greedy matching with backtracking to the last `*` (linear for most patterns).
        var v = 0
        var t = 0
        var star: (token: Int, value: Int)?
        while v < value.count {
            if t < tokens.count {
                switch tokens[t] {
                case .any:
                    star = (t, v)
                    t += 1
                    continue
                case .one:
                    v += 1
                    t += 1
                    continue
                case .literal(let scalar) where scalar == value[v]:
                    v += 1
                    t += 1
                    continue
                default:
                    break
                }
            }
            guard let backtrack = star else { return false }
            star = (backtrack.token, backtrack.value + 1)
            t = backtrack.token + 1
            v = backtrack.value + 1
        }
        while t < tokens.count, tokens[t] == .any { t += 1 }
        return t == tokens.count
    }

    private enum LikeToken: Equatable {
        case any, one
        case literal(Unicode.Scalar)
    }

    /// `MATCHES`: the whole string matches the ICU regular expression.
    package static func matches(_ text: String, _ pattern: String, options: ComparisonOptions) throws -> Bool {
        let expression = try RegularExpressionCache.shared.expression(for: pattern, options: options)
        let value = options.contains(.diacriticInsensitive) ? StringFolding.fold(text, .diacriticInsensitive) : text
        let range = NSRange(value.startIndex..<value.endIndex, in: value)
        return expression.firstMatch(in: value, options: [.anchored], range: range).map { $0.range == range } ?? false
    }
}

/// Compiled regular expressions by pattern, shared by every context and store connection.
final class RegularExpressionCache: Sendable {
    static let shared = RegularExpressionCache()

    private struct Key: Hashable {
        var pattern: String
        var options: UInt8
    }

    private let entries = LockedBox<[Key: NSRegularExpression]>([:])

    func expression(for pattern: String, options: ComparisonOptions) throws -> NSRegularExpression {
        let key = Key(pattern: pattern, options: options.rawValue)
        if let expression = entries.withLock({ $0[key] }) { return expression }
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        // Anchor the whole pattern, so `a|b` means "exactly a or exactly b".
        let source =
            options.contains(.diacriticInsensitive) ? StringFolding.fold(pattern, .diacriticInsensitive) : pattern
        let expression = try NSRegularExpression(pattern: "(?:" + source + ")$", options: regexOptions)
        entries.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[key] = expression
        }
        return expression
    }
}

/// The elements of a Codable attribute's JSON, as SQLite's `json_each` lists them.
enum JSONElements {
    /// The elements of an array or the values of an object; nothing for scalars or bad JSON.
    static func elements(of json: Data) -> [Any] {
        guard let root = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]) else { return [] }
        if let array = root as? [Any] { return array }
        if let object = root as? [String: Any] { return Array(object.values) }
        return []
    }

    /// Whether a JSON element equals a constant: strings as strings (folded by the options),
    /// numbers and Booleans (as 0 and 1) by value, as `json_each`'s `value = ?` compares them.
    package static func matches(_ element: Any, _ wanted: AttributeValue, _ options: ComparisonOptions) -> Bool {
        switch wanted {
        case .string(let text):
            guard let string = element as? String else { return false }
            return ValueComparison.compareBytes(StringFolding.fold(string, options).utf8, text.utf8) == 0
        case .integer, .double, .float, .boolean:
            guard !(element is String), let number = element as? NSNumber else { return false }
            let value: AttributeValue =
                if let flag = element as? Bool, type(of: element) == Bool.self {
                    .integer(flag ? 1 : 0)
                } else if let integer = Int64(exactly: number.doubleValue), !"\(number)".contains(".") {
                    .integer(integer)
                } else { .double(number.doubleValue) }
            return ValueComparison.compare(value, wanted, as: .double) == 0
        default:
            return false
        }
    }
}

extension AttributeValue {
    /// Whether the value is a NaN: a `Double`, `Float` or `Decimal` NaN, or a date whose
    /// interval is NaN. NaN is unequal to every value, itself included, and SQLite stores it as
    /// NULL, so stores refuse it and predicates cannot compare with it.
    /// Whether the value is a string holding U+0000, which PostgreSQL's text cannot store
    /// (every store refuses it, so that the stores agree).
    var containsNullCharacter: Bool {
        if case .string(let text) = self { return text.utf8.contains(0) }
        return false
    }

    /// The reason no store takes a string holding U+0000, for messages.
    static let nullCharacterProblem =
        "holds the character U+0000, which no Strata store keeps (PostgreSQL's text cannot hold it); remove it, or store the value as binary data."

    var isNaN: Bool {
        switch self {
        case .double(let number): number.isNaN
        case .float(let number): number.isNaN
        case .decimal(let number): number.isNaN
        case .date(let date): date.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    /// Whether two values are the same value: as `==`, except that a negative zero differs from
    /// zero and a NaN is identical to a NaN with the same bits.
    func isIdentical(to other: AttributeValue) -> Bool {
        switch (self, other) {
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.float(let x), .float(let y)): x.bitPattern == y.bitPattern
        default: self == other
        }
    }

    /// Whether the value is a floating-point negative zero, which SQLite stores as zero.
    var isNegativeZero: Bool {
        switch self {
        case .double(let number): number == 0 && number.sign == .minus
        case .float(let number): number == 0 && number.sign == .minus
        default: false
        }
    }
}
