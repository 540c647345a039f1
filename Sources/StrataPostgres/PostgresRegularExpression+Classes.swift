import Foundation

/// ICU's character-class escapes (`\d`, `\w`, `\s` and their complements) as explicit
/// PostgreSQL bracket sets of code-point ranges, so that they match exactly the characters ICU
/// matches whatever the database's collation — PostgreSQL's own `\d`, `\w` and `\s` follow the
/// collation's character types instead.
///
/// The sets follow ICU's definitions (its regular-expression user guide), computed once from
/// the Unicode properties Swift carries:
///
/// | escape | ICU's set |
/// | --- | --- |
/// | `\d` | `\p{Nd}` (decimal digits of every script) |
/// | `\s` | `\p{White_Space}` (its user guide says `[\t\n\f\r\p{Z}]`; its matcher also takes U+000B and U+0085) |
/// | `\w` | `[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200C\u200D]` |
///
/// A word boundary (`\b`) is where ICU's matcher puts one: the character after the position is
/// not a combining character (Grapheme_Extend) or format character, and whether it is a word
/// character differs from whether the last character before the position that is neither is one.
/// PostgreSQL's look-ahead and look-behind constraints say exactly that with these sets.
extension PostgresRegularExpression {
    /// Inclusive code-point ranges.
    typealias Ranges = [ClosedRange<UInt32>]

    /// The ranges of the scalars (U+0000 and surrogates left out) for which `member` holds.
    private static func ranges(where member: (Unicode.Scalar) -> Bool) -> Ranges {
        var result: Ranges = []
        var start: UInt32?
        var value: UInt32 = 1
        while value <= 0x10FFFF {
            let isMember = Unicode.Scalar(value).map(member) ?? false
            if isMember, start == nil { start = value }
            if !isMember, let first = start {
                result.append(first...(value - 1))
                start = nil
            }
            value += 1
        }
        if let first = start { result.append(first...0x10FFFF) }
        return result
    }

    /// `\d`.
    static let digitRanges = ranges { $0.properties.generalCategory == .decimalNumber }

    /// `\s`: Unicode's White_Space property, which is what ICU's matcher tests.
    static let spaceRanges = ranges { $0.properties.isWhitespace }

    /// `\w`.
    static let wordRanges = ranges { scalar in
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation: return true
        default: return properties.isAlphabetic || scalar == "\u{200C}" || scalar == "\u{200D}"
        }
    }

    /// Characters ICU's word boundaries look past: Grapheme_Extend and format characters.
    static let extendRanges = ranges { $0.properties.isGraphemeExtend || $0.properties.generalCategory == .format }

    /// Word characters that are not skipped: what decides the word-ness before a position.
    static let wordNotExtendRanges = ranges { scalar in
        contains(wordRanges, scalar.value) && !contains(extendRanges, scalar.value)
    }

    /// Whether `value` lies in one of `ranges` (sorted and disjoint).
    static func contains(_ ranges: Ranges, _ value: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < value {
                low = middle + 1
            } else if ranges[middle].lowerBound > value {
                high = middle
            } else {
                return true
            }
        }
        return false
    }

    /// The ranges not in `ranges` (U+0000 and surrogates left out).
    static func complement(_ ranges: Ranges) -> Ranges {
        var result: Ranges = []
        var next: UInt32 = 1
        for range in ranges {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= 0x10FFFF { result.append(next...0x10FFFF) }
        // Surrogates are not scalars: no text holds them, and PostgreSQL refuses them in a pattern.
        return result.flatMap { range -> Ranges in
            let surrogates: ClosedRange<UInt32> = 0xD800...0xDFFF
            guard range.overlaps(surrogates) else { return [range] }
            var parts: Ranges = []
            if range.lowerBound < surrogates.lowerBound { parts.append(range.lowerBound...(surrogates.lowerBound - 1)) }
            if range.upperBound > surrogates.upperBound { parts.append((surrogates.upperBound + 1)...range.upperBound) }
            return parts
        }
    }

    /// The ranges of a class escape (`d`, `D`, `w`, `W`, `s`, `S`), or `nil` for another letter.
    static func classRanges(_ letter: Unicode.Scalar) -> Ranges? {
        switch letter {
        case "d": digitRanges
        case "D": complement(digitRanges)
        case "w": wordRanges
        case "W": complement(wordRanges)
        case "s": spaceRanges
        case "S": complement(spaceRanges)
        default: nil
        }
    }

    /// The body of a bracket set holding `ranges`.
    static func bracketBody(_ ranges: Ranges) -> String {
        var body = ""
        for range in ranges {
            guard let low = Unicode.Scalar(range.lowerBound), let high = Unicode.Scalar(range.upperBound) else { continue }
            body += low == high ? bracketLiteral(low) : bracketLiteral(low) + "-" + bracketLiteral(high)
        }
        return body
    }

    /// `\b` (or, `negated`, `\B`) as PostgreSQL constraints with ICU's meaning.
    static func wordBoundary(negated: Bool) -> String {
        let word = "[" + bracketBody(wordRanges) + "]"
        let extend = "[" + bracketBody(extendRanges) + "]"
        let wordBefore = "[" + bracketBody(wordNotExtendRanges) + "]" + extend + "*"
        if negated {
            return "(?:(?=\(extend))|(?<=\(wordBefore))(?=\(word))|(?<!\(wordBefore))(?!\(word)))"
        }
        return "(?!\(extend))(?:(?<=\(wordBefore))(?!\(word))|(?<!\(wordBefore))(?=\(word)))"
    }
}
