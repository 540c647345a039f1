import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Seeded fuzzing of the format-string parser and renderer.
///
/// Every input comes from its own `SplitMix64` seeded from the run's base seed and the input's
/// number, and failure messages print both, so a failure replays exactly: run again with
/// `STRATA_FUZZ_SEED=<base seed>` (the default base seed is fixed, so plain runs repeat too).
@Suite struct PredicateParserFuzzTests {
    static let baseSeed: UInt64 = {
        guard let text = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEED"] else { return 0x5EED_CAFE_F00D_0001 }
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) ?? 0x5EED_CAFE_F00D_0001 }
        return UInt64(text) ?? 0x5EED_CAFE_F00D_0001
    }()

    /// Inputs per test; the four tests together run 200,000.
    static let roundTripCount = 30_000
    static let tokenSoupCount = 100_000
    static let mutationCount = 64_000
    static let nestingCount = 6_000

    @Test func renderedTreesParseBackEqual() throws {
        var failures = 0
        for index in 0..<Self.roundTripCount {
            let seed = Self.seed(for: index, stream: 1)
            var generator = TreeGenerator(seed: seed)
            let tree = generator.predicate(depth: 4)
            let text = tree.description
            do {
                let parsed = try QueryPredicate(format: text)
                if parsed != tree {
                    failures += 1
                    if failures <= 5 {
                        Issue.record(
                            "Round trip changed the tree (base seed \(Self.hex(Self.baseSeed)), input #\(index), seed \(Self.hex(seed))):\n\(text)\nparsed as\n\(parsed)"
                        )
                    }
                }
            } catch {
                failures += 1
                if failures <= 5 {
                    Issue.record(
                        "Rendered tree did not parse (base seed \(Self.hex(Self.baseSeed)), input #\(index), seed \(Self.hex(seed))):\n\(text)\n\(error)"
                    )
                }
            }
        }
        #expect(failures == 0, "base seed \(Self.hex(Self.baseSeed))")
    }

    @Test func randomTokenSoupParsesOrThrowsStrataError() {
        var failures = 0
        for index in 0..<Self.tokenSoupCount {
            let seed = Self.seed(for: index, stream: 2)
            var random = SplitMix64(seed: seed)
            let text = Self.tokenSoup(using: &random)
            // Usually exactly one argument per specifier, so the parser gets past the count check.
            let count = random.chance(0.8) ? Self.specifierCount(text) : Int.random(in: 0...3, using: &random)
            let arguments = (0..<count).map { _ in Self.randomArgument(using: &random) }
            Self.check(text, arguments: arguments, index: index, seed: seed, failures: &failures)
        }
        #expect(failures == 0, "base seed \(Self.hex(Self.baseSeed))")
    }

    @Test func mutatedPredicatesParseOrThrowStrataError() {
        var failures = 0
        for index in 0..<Self.mutationCount {
            let seed = Self.seed(for: index, stream: 3)
            var generator = TreeGenerator(seed: seed)
            let original = generator.predicate(depth: 3).description
            var random = generator.random
            let text = Self.mutate(original, using: &random)
            let count = random.chance(0.8) ? Self.specifierCount(text) : Int.random(in: 0...2, using: &random)
            let arguments = (0..<count).map { _ in Self.randomArgument(using: &random) }
            Self.check(text, arguments: arguments, index: index, seed: seed, failures: &failures)
        }
        #expect(failures == 0, "base seed \(Self.hex(Self.baseSeed))")
    }

    /// Balanced nesting patterns: (prefix, opener, innermost, closer, nesting levels per opener).
    static let nestingPatterns: [(String, String, String, String, Int)] = [
        ("", "(", "a == 1", ")", 1),
        ("", "NOT ", "a == 1", "", 1),
        ("", "!", "a == 1", "", 1),
        ("a IN ", "{", "1", "}", 1),
        ("", "SUBQUERY(a, $x, ", "$x == 1", ").@count > 0", 1),
        ("", "(NOT ", "a == 1", ")", 2),
        ("", "a == 1 OR (", "b == 2", ")", 1),
    ]

    @Test func deepNestingParsesOrThrowsStrataError() {
        var failures = 0
        let openers = [
            "(", "NOT ", "!", "{", "SUBQUERY(a, $x, ", "a IN {", "ANY ", "-", "'", "\\", "%", "$x.", "#", "[",
        ]
        let closers = [")", "}", "", " == 1", "'", "]"]
        for index in 0..<Self.nestingCount {
            let seed = Self.seed(for: index, stream: 4)
            var random = SplitMix64(seed: seed)
            // Mostly around the nesting limit, sometimes far beyond it.
            let depth =
                random.chance(0.01)
                ? Int.random(in: 1_000...20_000, using: &random) : Int.random(in: 90...260, using: &random)
            if random.chance(0.5) {
                // A balanced pattern must parse exactly when it stays within the limit.
                let (prefix, opener, innermost, closer, levels) =
                    Self.nestingPatterns.randomElement(using: &random) ?? ("", "(", "a == 1", ")", 1)
                let text =
                    prefix + String(repeating: opener, count: depth) + innermost
                    + String(repeating: closer, count: depth)
                let fits = depth * levels <= PredicateParser.maximumDepth
                let behaved: Bool
                do {
                    _ = try QueryPredicate(format: text)
                    behaved = fits
                } catch let error as StrataError {
                    behaved = !fits && error.message.contains("nested too deeply")
                } catch {
                    behaved = false
                }
                if !behaved {
                    failures += 1
                    if failures <= 5 {
                        Issue.record(
                            "Nesting \(depth) × \(String(reflecting: opener)) (base seed \(Self.hex(Self.baseSeed)), input #\(index), seed \(Self.hex(seed))) \(fits ? "should parse" : "should fail as nested too deeply")"
                        )
                    }
                }
                continue
            }
            var text = ""
            let mixed = random.chance(0.5)
            let opener = openers.randomElement(using: &random) ?? "("
            for _ in 0..<depth {
                text += mixed ? (openers.randomElement(using: &random) ?? "(") : opener
            }
            text += random.chance(0.5) ? "a == 1" : ""
            let closer = closers.randomElement(using: &random) ?? ")"
            for _ in 0..<Int.random(in: 0...depth, using: &random) { text += closer }
            Self.check(text, arguments: [], index: index, seed: seed, failures: &failures)
        }
        #expect(failures == 0, "base seed \(Self.hex(Self.baseSeed))")
    }

    @Test func inputCountMeetsTheTarget() {
        #expect(Self.roundTripCount + Self.tokenSoupCount + Self.mutationCount + Self.nestingCount >= 200_000)
    }

    // MARK: Checking

    /// Parses `text`: it must succeed or throw an `invalidPredicate` StrataError whose offset
    /// lies within the string.
    static func check(_ text: String, arguments: [any PredicateArgument], index: Int, seed: UInt64, failures: inout Int)
    {
        do {
            _ = try QueryPredicate(format: text, argumentArray: arguments)
        } catch let error as StrataError {
            let length = text.count
            if error.code != .invalidPredicate || (error.offset.map { $0 < 0 || $0 > length } ?? true) {
                failures += 1
                if failures <= 5 {
                    Issue.record(
                        "Bad error (base seed \(hex(baseSeed)), input #\(index), seed \(hex(seed))) for \(String(reflecting: String(text.prefix(300)))): code \(error.code), offset \(String(describing: error.offset)), length \(length): \(error.message)"
                    )
                }
            }
        } catch {
            failures += 1
            if failures <= 5 {
                Issue.record(
                    "Non-Strata error (base seed \(hex(baseSeed)), input #\(index), seed \(hex(seed))) for \(String(reflecting: String(text.prefix(300)))): \(error)"
                )
            }
        }
    }

    static func seed(for index: Int, stream: UInt64) -> UInt64 {
        var mixer = SplitMix64(seed: baseSeed ^ (stream &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(index))
        return mixer.next()
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16, uppercase: true) }

    // MARK: Random strings

    static let vocabulary: [String] = [
        "a", "b.c", "name", "reviews.@count", "reviews.@avg.stars", "@avg", "@bogus", "==", "=", "!=", "<>", "<", "<=",
        "=<", ">", ">=", "=>", "AND", "OR", "NOT", "and", "&&", "||", "!", "(", ")", "{", "}", "[c]", "[cd]", "[x]",
        "[",
        "]", ",", ".", "-", "BETWEEN", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "ANY", "SOME",
        "ALL", "NONE", "SELF", "self.name", "$x", "$x.y", "$", "#", "#IN", "@", "SUBQUERY", "SUBQUERY(a, $v, $v == 1)",
        "CAST", "CAST(1, 'NSDate')", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE", "NO", "nil", "NULL", "'str'", "\"dq\"",
        "'", "\"", "\\", "'\\u00e9'", "'\\uD83D'", "'\\q'", "%@", "%K", "%d", "%lld", "%u", "%f", "%g", "%s", "%%", "%",
        "%x", "%l", "0x1F", "0x", "0b2", "1", "-3", "2.5", "1e3", "1e", "1e999", "99999999999999999999",
        "9223372036854775808", "é", "e\u{301}", "\u{301}", "😀", "中", "\n", "\t", "&", "|", "~", "^", "?", ";", "\0",
        "\u{FFFF}", "\u{2028}",
    ]

    /// Random tokens joined by random spacing.
    static func tokenSoup(using random: inout SplitMix64) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...24, using: &random) {
            text += vocabulary.randomElement(using: &random) ?? "a"
            text += ["", " ", " ", "  ", "\t"].randomElement(using: &random) ?? " "
        }
        return text
    }

    /// The number of format specifiers the lexer finds (0 when it fails), so that most inputs
    /// get one argument per specifier and reach the parser.
    static func specifierCount(_ text: String) -> Int {
        var lexer = PredicateLexer(source: PredicateSource(text))
        guard let tokens = try? lexer.tokenize() else { return 0 }
        return tokens.count {
            if case .format = $0.kind { return true }
            return false
        }
    }

    static let insertions: [String] = [
        "'", "\"", "(", ")", "{", "}", "[", "]", "%", "%@", "%K", "%d", "\\", "$", "#", "@", ".", ",", "-", " ", "!",
        "=", "<", ">", "&", "|", "AND ", "NOT ", "\u{301}", "😀", "0x", "1e",
    ]

    /// Applies one to three random edits: scalar replacement, deletion, insertion of syntax
    /// characters, truncation, duplication of a slice, or a flipped UTF-8 byte.
    static func mutate(_ text: String, using random: inout SplitMix64) -> String {
        var scalars = Array(text.unicodeScalars)
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let position = scalars.isEmpty ? 0 : Int.random(in: 0..<scalars.count, using: &random)
            switch Int.random(in: 0...6, using: &random) {
            case 0 where !scalars.isEmpty:
                scalars[position] = Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random))
            case 1 where !scalars.isEmpty:
                scalars.remove(at: position)
            case 2:
                let insertion = insertions.randomElement(using: &random) ?? "'"
                scalars.insert(contentsOf: insertion.unicodeScalars, at: min(position, scalars.count))
            case 3 where !scalars.isEmpty:
                scalars.removeSubrange(position...)
            case 4 where !scalars.isEmpty:
                let end = min(scalars.count, position + Int.random(in: 1...12, using: &random))
                scalars.insert(contentsOf: scalars[position..<end], at: end)
            case 5:
                var bytes = Array(String(String.UnicodeScalarView(scalars)).utf8)
                if !bytes.isEmpty {
                    let byte = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[byte] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                }
                scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
            default:
                scalars.insert(
                    contentsOf: String(repeating: "(", count: Int.random(in: 1...5, using: &random)).unicodeScalars,
                    at: min(position, scalars.count))
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }

    static func randomArgument(using random: inout SplitMix64) -> any PredicateArgument {
        switch Int.random(in: 0...11, using: &random) {
        case 0: return Int.random(in: -1_000...1_000, using: &random)
        case 1: return Double.random(in: -1e6...1e6, using: &random)
        case 2: return "name"
        case 3: return "na'me"
        case 4: return "x'; DROP TABLE Movie; --"
        case 5: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random))
        case 6: return UUID()
        case 7: return [1, 2, 3]
        case 8: return String?.none
        case 9: return ObjectID(entityName: "Movie", storeIdentifier: "S", primaryKey: 1)
        case 10: return 2.0
        default: return QueryExpression.keyPath("director.name")
        }
    }
}

// MARK: - Random number generation

extension PredicateParserFuzzTests {
    /// Random valid predicate trees made only of constructs with literal syntax, so that their
    /// descriptions must parse back to equal trees.
    struct TreeGenerator {
        var random: SplitMix64

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        static let keys = [
            "name", "title", "year", "director", "reviews", "stars", "in", "SELF", "Any", "between", "café", "ñandú",
            "_x9",
            "nil", "yes", "Ω", "x", "cast", "subquery",
        ]
        static let operators = ["@count", "@avg", "@sum", "@min", "@max"]
        static let variables = ["v", "x", "item", "IN", "self", "_1", "ñ"]
        static let stringScalars: [Unicode.Scalar] = [
            "a", "b", "Z", " ", "'", "\"", "\\", "%", "\n", "\t", "\r", "\0", "\u{7}", "\u{7F}", "\u{85}", "é",
            "\u{301}", "😀",
            "\u{2028}", "中", "@", "$", "#", "(", ")", "{", "u", "0",
        ]

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

        mutating func pick<T>(_ options: [T]) -> T { options[int(0...options.count - 1)] }

        mutating func predicate(depth: Int) -> QueryPredicate {
            switch depth <= 0 ? int(0...9) : int(0...15) {
            case 0: return .constant(random.chance(0.5))
            case 1...9: return comparison(depth: depth)
            case 10, 11: return .and((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
            case 12, 13: return .or((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
            default: return .not(predicate(depth: depth - 1))
            }
        }

        mutating func comparison(depth: Int) -> QueryPredicate {
            let comparisonOperator = pick(ComparisonOperator.allCases)
            let left = leftExpression(depth: depth)
            let right: QueryExpression =
                comparisonOperator == .between ? .list([value(), value()]) : rightExpression(depth: depth)
            let options = ComparisonOptions(rawValue: UInt8(int(0...3)))
            let modifier = pick([ComparisonModifier.direct, .direct, .any, .all])
            return .comparison(left, comparisonOperator, right, options: options, modifier: modifier)
        }

        mutating func leftExpression(depth: Int) -> QueryExpression {
            switch int(0...9) {
            case 0...4: return .keyPath(keyPath())
            case 5: return .keyPathOn(.variable(pick(Self.variables)), keyPath())
            case 6: return .variable(pick(Self.variables))
            case 7: return .evaluatedObject
            case 8 where depth > 0: return .keyPathOn(subquery(depth: depth), "@count")
            default: return value()
            }
        }

        mutating func rightExpression(depth: Int) -> QueryExpression {
            switch int(0...9) {
            case 0...4: return value()
            case 5: return list(depth: 2)
            case 6: return .keyPath(keyPath())
            case 7: return .variable(pick(Self.variables))
            case 8 where depth > 0: return subquery(depth: depth)
            default: return .keyPathOn(.variable(pick(Self.variables)), keyPath())
            }
        }

        mutating func subquery(depth: Int) -> QueryExpression {
            let collection: QueryExpression =
                random.chance(0.7) ? .keyPath(keyPath()) : .keyPathOn(.variable(pick(Self.variables)), keyPath())
            return .subquery(
                collection: collection, variable: pick(Self.variables), predicate: predicate(depth: depth - 1))
        }

        mutating func list(depth: Int) -> QueryExpression {
            .list(
                (0..<int(0...4)).map { _ in
                    depth > 0 && random.chance(0.15) ? list(depth: depth - 1) : value()
                })
        }

        mutating func keyPath() -> String {
            var components: [String] = []
            for index in 0..<int(1...3) {
                components.append(index > 0 && random.chance(0.2) ? pick(Self.operators) : pick(Self.keys))
            }
            return components.joined(separator: ".")
        }

        mutating func value() -> QueryExpression {
            switch int(0...6) {
            case 0: return .null
            case 1:
                return .value(.integer(random.chance(0.3) ? Int64(bitPattern: random.next()) : Int64(int(-100...100))))
            case 2: return .value(.double(double()))
            case 3: return .value(.string(string()))
            case 4: return .value(.boolean(random.chance(0.5)))
            case 5: return .value(.date(Date(timeIntervalSinceReferenceDate: double())))
            default: return .value(.string(pick(["", "%%", "\\u0041", "it's", "x'; DROP TABLE Movie; --"])))
            }
        }

        mutating func double() -> Double {
            switch int(0...3) {
            case 0: return Double(int(-1_000...1_000))
            case 1: return Double(int(-100_000...100_000)) / 64
            case 2:
                return pick([0.1, -0.0, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e20, 123456789.125])
            default:
                while true {
                    let candidate = Double(bitPattern: random.next())
                    if candidate.isFinite { return candidate }
                }
            }
        }

        mutating func string() -> String {
            var view = String.UnicodeScalarView()
            for _ in 0..<int(0...12) { view.append(pick(Self.stringScalars)) }
            return String(view)
        }
    }
}
