import Foundation
import Testing

@testable import Strata

// MARK: - Helpers

private func key(_ path: String) -> QueryExpression { .keyPath(path) }

private func compare(
    _ left: QueryExpression, _ comparisonOperator: ComparisonOperator, _ right: QueryExpression,
    _ options: ComparisonOptions = [], _ modifier: ComparisonModifier = .direct
) -> QueryPredicate {
    .comparison(left, comparisonOperator, right, options: options, modifier: modifier)
}

/// `a == <value>`, the shape most literal rows use.
private func aEquals(_ value: QueryExpression) -> QueryPredicate { compare(key("a"), .equalTo, value) }

/// A format string and the tree it parses to.
struct PredicateParseRow: Sendable, CustomTestStringConvertible {
    var format: String
    var expected: QueryPredicate
    init(_ format: String, _ expected: QueryPredicate) {
        self.format = format
        self.expected = expected
    }
    var testDescription: String { format.count > 60 ? String(format.prefix(60)) + "…" : format }
}

/// A malformed format string and the character offset its error must report.
struct MalformedPredicateRow: Sendable, CustomTestStringConvertible {
    var format: String
    var offset: Int
    init(_ format: String, _ offset: Int) {
        self.format = format
        self.offset = offset
    }
    var testDescription: String {
        let shown = format.count > 60 ? String(format.prefix(60)) + "…" : format
        return String(reflecting: shown) + " @\(offset)"
    }
}

private let reviewStarsAboveThree: QueryExpression = .subquery(
    collection: key("reviews"), variable: "r",
    predicate: compare(.keyPathOn(.variable("r"), "stars"), .greaterThan, 3))

// MARK: - Rows

private let validRows: [PredicateParseRow] = [
    // Comparison operators and their spellings.
    PredicateParseRow("a == 1", aEquals(1)),
    PredicateParseRow("a = 1", aEquals(1)),
    PredicateParseRow("a==1", aEquals(1)),
    PredicateParseRow("a != 1", compare(key("a"), .notEqualTo, 1)),
    PredicateParseRow("a <> 1", compare(key("a"), .notEqualTo, 1)),
    PredicateParseRow("a < 1", compare(key("a"), .lessThan, 1)),
    PredicateParseRow("a <= 1", compare(key("a"), .lessThanOrEqualTo, 1)),
    PredicateParseRow("a =< 1", compare(key("a"), .lessThanOrEqualTo, 1)),
    PredicateParseRow("a > 1", compare(key("a"), .greaterThan, 1)),
    PredicateParseRow("a >= 1", compare(key("a"), .greaterThanOrEqualTo, 1)),
    PredicateParseRow("a => 1", compare(key("a"), .greaterThanOrEqualTo, 1)),
    PredicateParseRow("age BETWEEN {18, 65}", compare(key("age"), .between, .list([18, 65]))),
    PredicateParseRow("name IN {'a', 'b'}", compare(key("name"), .in, .list(["a", "b"]))),
    PredicateParseRow("name CONTAINS 'x'", compare(key("name"), .contains, "x")),
    PredicateParseRow("name BEGINSWITH 'x'", compare(key("name"), .beginsWith, "x")),
    PredicateParseRow("name ENDSWITH 'x'", compare(key("name"), .endsWith, "x")),
    PredicateParseRow("name LIKE 'a*b?'", compare(key("name"), .like, "a*b?")),
    PredicateParseRow("name MATCHES '^a.+$'", compare(key("name"), .matches, "^a.+$")),
    PredicateParseRow("name contains 'x'", compare(key("name"), .contains, "x")),
    PredicateParseRow("name between {1, 2}", compare(key("name"), .between, .list([1, 2]))),
    // Options.
    PredicateParseRow("name CONTAINS[c] 'x'", compare(key("name"), .contains, "x", .caseInsensitive)),
    PredicateParseRow("name ==[d] 'x'", compare(key("name"), .equalTo, "x", .diacriticInsensitive)),
    PredicateParseRow(
        "name BEGINSWITH[cd] 'x'", compare(key("name"), .beginsWith, "x", [.caseInsensitive, .diacriticInsensitive])),
    PredicateParseRow(
        "name ENDSWITH[dc] 'x'", compare(key("name"), .endsWith, "x", [.caseInsensitive, .diacriticInsensitive])),
    PredicateParseRow("name LIKE[n] 'x'", compare(key("name"), .like, "x")),
    PredicateParseRow("name LIKE[cl] 'x'", compare(key("name"), .like, "x", .caseInsensitive)),
    PredicateParseRow("name IN[c] {'x'}", compare(key("name"), .in, .list(["x"]), .caseInsensitive)),
    // AND, OR, NOT, precedence and flattening.
    PredicateParseRow("a == 1 AND b == 2", .and([aEquals(1), compare(key("b"), .equalTo, 2)])),
    PredicateParseRow("a == 1 && b == 2", .and([aEquals(1), compare(key("b"), .equalTo, 2)])),
    PredicateParseRow(
        "a == 1 AND b == 2 and c == 3",
        .and([aEquals(1), compare(key("b"), .equalTo, 2), compare(key("c"), .equalTo, 3)])),
    PredicateParseRow(
        "a == 1 OR b == 2 || c == 3",
        .or([aEquals(1), compare(key("b"), .equalTo, 2), compare(key("c"), .equalTo, 3)])),
    PredicateParseRow(
        "a == 1 OR b == 2 AND c == 3",
        .or([aEquals(1), .and([compare(key("b"), .equalTo, 2), compare(key("c"), .equalTo, 3)])])),
    PredicateParseRow(
        "a == 1 AND b == 2 OR c == 3",
        .or([.and([aEquals(1), compare(key("b"), .equalTo, 2)]), compare(key("c"), .equalTo, 3)])),
    PredicateParseRow(
        "(a == 1 OR b == 2) AND c == 3",
        .and([.or([aEquals(1), compare(key("b"), .equalTo, 2)]), compare(key("c"), .equalTo, 3)])),
    PredicateParseRow(
        "(a == 1 AND b == 2) AND c == 3",
        .and([.and([aEquals(1), compare(key("b"), .equalTo, 2)]), compare(key("c"), .equalTo, 3)])),
    PredicateParseRow("((a == 1))", aEquals(1)),
    PredicateParseRow("NOT a == 1", .not(aEquals(1))),
    PredicateParseRow("!a == 1", .not(aEquals(1))),
    PredicateParseRow("not (a == 1 AND b == 2)", .not(.and([aEquals(1), compare(key("b"), .equalTo, 2)]))),
    PredicateParseRow("NOT a == 1 AND b == 2", .and([.not(aEquals(1)), compare(key("b"), .equalTo, 2)])),
    PredicateParseRow("NOT NOT a == 1", .not(.not(aEquals(1)))),
    PredicateParseRow("TRUEPREDICATE", .constant(true)),
    PredicateParseRow("falsepredicate", .constant(false)),
    PredicateParseRow("TRUEPREDICATE OR a == 1", .or([.constant(true), aEquals(1)])),
    // Modifiers.
    PredicateParseRow("ANY tags.name == 'x'", compare(key("tags.name"), .equalTo, "x", [], .any)),
    PredicateParseRow("some tags.name == 'x'", compare(key("tags.name"), .equalTo, "x", [], .any)),
    PredicateParseRow("ALL reviews.stars > 3", compare(key("reviews.stars"), .greaterThan, 3, [], .all)),
    PredicateParseRow("NONE reviews.stars < 2", .not(compare(key("reviews.stars"), .lessThan, 2, [], .any))),
    PredicateParseRow("ANY tags IN {'x', 'y'}", compare(key("tags"), .in, .list(["x", "y"]), [], .any)),
    // Key paths, collection operators, SELF, variables, SUBQUERY.
    PredicateParseRow("director.name == 'x'", compare(key("director.name"), .equalTo, "x")),
    PredicateParseRow("reviews.@count > 3", compare(key("reviews.@count"), .greaterThan, 3)),
    PredicateParseRow("reviews.@avg.stars >= 4.5", compare(key("reviews.@avg.stars"), .greaterThanOrEqualTo, 4.5)),
    PredicateParseRow("reviews.@sum.stars == 10", compare(key("reviews.@sum.stars"), .equalTo, 10)),
    PredicateParseRow("reviews.@min.stars == 1", compare(key("reviews.@min.stars"), .equalTo, 1)),
    PredicateParseRow("reviews.@max.stars == 5", compare(key("reviews.@max.stars"), .equalTo, 5)),
    PredicateParseRow("SELF == $movie", compare(.evaluatedObject, .equalTo, .variable("movie"))),
    PredicateParseRow("self IN {1}", compare(.evaluatedObject, .in, .list([1]))),
    PredicateParseRow("SELF.name == 'x'", compare(key("name"), .equalTo, "x")),
    PredicateParseRow("$VAR == 1", compare(.variable("VAR"), .equalTo, 1)),
    PredicateParseRow("$s.name == 'x'", compare(.keyPathOn(.variable("s"), "name"), .equalTo, "x")),
    PredicateParseRow("$s.director.name == 'x'", compare(.keyPathOn(.variable("s"), "director.name"), .equalTo, "x")),
    PredicateParseRow(
        "SUBQUERY(reviews, $r, $r.stars > 3).@count > 0",
        compare(.keyPathOn(reviewStarsAboveThree, "@count"), .greaterThan, 0)),
    PredicateParseRow(
        "subquery(reviews, $r, $r.stars > 3 AND $r.author.name BEGINSWITH 'A').@count == 2",
        compare(
            .keyPathOn(
                .subquery(
                    collection: key("reviews"), variable: "r",
                    predicate: .and([
                        compare(.keyPathOn(.variable("r"), "stars"), .greaterThan, 3),
                        compare(.keyPathOn(.variable("r"), "author.name"), .beginsWith, "A"),
                    ])), "@count"), .equalTo, 2)),
    PredicateParseRow(
        "SUBQUERY(movies, $m, SUBQUERY($m.reviews, $r, $r.stars == 5).@count > 0).@count > 1",
        compare(
            .keyPathOn(
                .subquery(
                    collection: key("movies"), variable: "m",
                    predicate: compare(
                        .keyPathOn(
                            .subquery(
                                collection: .keyPathOn(.variable("m"), "reviews"), variable: "r",
                                predicate: compare(.keyPathOn(.variable("r"), "stars"), .equalTo, 5)), "@count"),
                        .greaterThan, 0)), "@count"), .greaterThan, 1)),
    PredicateParseRow("#IN == 1", compare(key("IN"), .equalTo, 1)),
    PredicateParseRow("#self == 1", compare(key("self"), .equalTo, 1)),
    PredicateParseRow("a.#SELF == 1", compare(key("a.SELF"), .equalTo, 1)),
    PredicateParseRow("a.in == 1", compare(key("a.in"), .equalTo, 1)),
    PredicateParseRow("café == 1", compare(key("café"), .equalTo, 1)),
    PredicateParseRow("_private.x1 == 1", compare(key("_private.x1"), .equalTo, 1)),
    PredicateParseRow("a == b", compare(key("a"), .equalTo, key("b"))),
    // SUBQUERY and CAST are keywords only before '(' (a movie's `cast` is a common key).
    PredicateParseRow("cast CONTAINS $actor", compare(key("cast"), .contains, .variable("actor"))),
    PredicateParseRow("ANY cast.name == 'x'", compare(key("cast.name"), .equalTo, "x", [], .any)),
    PredicateParseRow("subquery.@count > 1", compare(key("subquery.@count"), .greaterThan, 1)),
    PredicateParseRow("#cast == 1", compare(key("cast"), .equalTo, 1)),
    // String literals.
    PredicateParseRow(#"a == 'it\'s'"#, aEquals("it's")),
    PredicateParseRow(#"a == "say \"hi\"""#, aEquals(#"say "hi""#)),
    PredicateParseRow(#"a == 'a\nb\tc\\d\re\0'"#, aEquals("a\nb\tc\\d\re\0")),
    PredicateParseRow(#"a == '\u00e9'"#, aEquals("é")),
    PredicateParseRow(#"a == '\uD83D\uDE00'"#, aEquals("😀")),
    PredicateParseRow(#"a == "100%%""#, aEquals("100%")),
    PredicateParseRow(#"a == '50% off'"#, aEquals("50% off")),
    PredicateParseRow("a == '%@ and %K'", aEquals("%@ and %K")),
    PredicateParseRow("a == ''", aEquals("")),
    PredicateParseRow("a == 'café 😀 中文'", aEquals("café 😀 中文")),
    PredicateParseRow("a == '\"'", aEquals("\"")),
    PredicateParseRow("a == 'line\nbreak'", aEquals("line\nbreak")),
    // Numbers.
    PredicateParseRow("a == 0", aEquals(0)),
    PredicateParseRow("a == 0x1F", aEquals(31)),
    PredicateParseRow("a == 0b101", aEquals(5)),
    PredicateParseRow("a == 0o17", aEquals(15)),
    PredicateParseRow("a == -5", aEquals(-5)),
    PredicateParseRow("a == - 5", aEquals(-5)),
    PredicateParseRow("a == -9223372036854775808", aEquals(.value(.integer(.min)))),
    PredicateParseRow("a == 9223372036854775807", aEquals(.value(.integer(.max)))),
    PredicateParseRow("a == 1.5", aEquals(1.5)),
    PredicateParseRow("a == 1e3", aEquals(1000.0)),
    PredicateParseRow("a == 2.5E-3", aEquals(0.0025)),
    PredicateParseRow("a == 1e+20", aEquals(1e20)),
    PredicateParseRow("a == -2.5", aEquals(-2.5)),
    // Booleans, nil, lists, dates.
    PredicateParseRow("a == TRUE", aEquals(true)),
    PredicateParseRow("a == yes", aEquals(true)),
    PredicateParseRow("a == false", aEquals(false)),
    PredicateParseRow("a == NO", aEquals(false)),
    PredicateParseRow("a == nil", aEquals(nil)),
    PredicateParseRow("a == NULL", aEquals(nil)),
    PredicateParseRow("a IN {}", compare(key("a"), .in, .list([]))),
    PredicateParseRow("a IN {1, 2.5, 'a', nil, TRUE}", compare(key("a"), .in, .list([1, 2.5, "a", nil, true]))),
    PredicateParseRow("a IN {{1, 2}, {3}}", compare(key("a"), .in, .list([.list([1, 2]), .list([3])]))),
    PredicateParseRow("'x' IN names", compare("x", .in, key("names"))),
    PredicateParseRow(
        #"d > CAST(0, "NSDate")"#,
        compare(key("d"), .greaterThan, .value(.date(Date(timeIntervalSinceReferenceDate: 0))))),
    PredicateParseRow(
        "d < cast(-86400.5, 'NSDate')",
        compare(key("d"), .lessThan, .value(.date(Date(timeIntervalSinceReferenceDate: -86400.5))))),
    // ISO 8601 text in CAST: a day, a time with a fraction and a zone, read exactly.
    PredicateParseRow(
        #"d > CAST("1999-12-31", "NSDate")"#,
        compare(key("d"), .greaterThan, .value(.date(Date(timeIntervalSinceReferenceDate: -31_708_800))))),
    PredicateParseRow(
        "d >= CAST('2000-12-31T23:59:59.999999Z', 'NSDate')",
        compare(key("d"), .greaterThanOrEqualTo, .value(.date(Date(timeIntervalSinceReferenceDate: -0.000001))))),
    PredicateParseRow(
        #"d == CAST("2001-01-01T01:00:00.123456789+01:00", "NSDate")"#,
        compare(key("d"), .equalTo, .value(.date(Date(timeIntervalSinceReferenceDate: 0.123456789))))),
    PredicateParseRow(
        #"d < CAST("2001-01-01T00:00:00", "NSDate")"#,
        compare(key("d"), .lessThan, .value(.date(Date(timeIntervalSinceReferenceDate: 0))))),
    // Whitespace.
    PredicateParseRow("  a   ==   1  ", aEquals(1)),
    PredicateParseRow("a\n==\t1", aEquals(1)),
]

private let deeplyNestedButAllowed =
    String(repeating: "(", count: PredicateParser.maximumDepth) + "a == 1"
    + String(repeating: ")", count: PredicateParser.maximumDepth)

private let malformedRows: [MalformedPredicateRow] = [
    MalformedPredicateRow("", 0),
    MalformedPredicateRow("   ", 3),
    MalformedPredicateRow("a ==", 4),
    MalformedPredicateRow("== 1", 0),
    MalformedPredicateRow("a == 1 AND", 10),
    MalformedPredicateRow("a == 1 OR", 9),
    MalformedPredicateRow("a == 1 b == 2", 7),
    MalformedPredicateRow("(a == 1", 7),
    MalformedPredicateRow("a == 1)", 6),
    MalformedPredicateRow("((a == 1)", 9),
    MalformedPredicateRow("a == 'abc", 5),
    MalformedPredicateRow("a == \"abc", 5),
    MalformedPredicateRow(#"a == 'ab\q'"#, 8),
    MalformedPredicateRow(#"a == '\u12'"#, 6),
    MalformedPredicateRow(#"a == '\uD800'"#, 6),
    MalformedPredicateRow(#"a == '\uDC00'"#, 6),
    MalformedPredicateRow(#"a == 'x\"#, 7),
    MalformedPredicateRow("a ~ 1", 2),
    MalformedPredicateRow("a & b", 2),
    MalformedPredicateRow("a | b", 2),
    MalformedPredicateRow("a CONTAINS[x] 'b'", 11),
    MalformedPredicateRow("a CONTAINS[] 'b'", 11),
    MalformedPredicateRow("a CONTAINS[c 'b'", 13),
    MalformedPredicateRow("a CONTAINS[in] 'b'", 11),
    MalformedPredicateRow("a ==[c]", 7),
    MalformedPredicateRow("a BETWEEN 1", 10),
    MalformedPredicateRow("a BETWEEN {1, 2, 3}", 10),
    MalformedPredicateRow("a IN {1, 2", 10),
    MalformedPredicateRow("a IN {1,}", 8),
    MalformedPredicateRow("a IN {1 2}", 8),
    MalformedPredicateRow("a == @foo", 5),
    MalformedPredicateRow("a.@bogus == 1", 2),
    MalformedPredicateRow("a. == 1", 3),
    MalformedPredicateRow("a.b. == 1", 5),
    MalformedPredicateRow("$ == 1", 1),
    MalformedPredicateRow("# == 1", 1),
    MalformedPredicateRow("a == %x", 5),
    MalformedPredicateRow("a == %", 5),
    MalformedPredicateRow("a == %%", 5),
    MalformedPredicateRow("a == %k", 5),
    MalformedPredicateRow("a == 99999999999999999999", 5),
    MalformedPredicateRow("a == 9223372036854775808", 5),
    MalformedPredicateRow("a == -9223372036854775809", 5),
    MalformedPredicateRow("a == 1e999", 5),
    MalformedPredicateRow("a == 0x", 5),
    MalformedPredicateRow("a == 0xFFFFFFFFFFFFFFFF", 5),
    MalformedPredicateRow("a == -", 6),
    MalformedPredicateRow("a == -x", 6),
    MalformedPredicateRow("a == 1.foo", 6),
    MalformedPredicateRow("IN == 1", 0),
    MalformedPredicateRow("a == 1 AND AND b == 2", 11),
    MalformedPredicateRow("ANY", 3),
    MalformedPredicateRow("ANY == 1", 4),
    MalformedPredicateRow("ANY ANY a == 1", 4),
    MalformedPredicateRow("NOT", 3),
    MalformedPredicateRow("a", 1),
    MalformedPredicateRow("a b", 2),
    MalformedPredicateRow("a == 'x' 'y'", 9),
    MalformedPredicateRow("TRUEPREDICATE == 1", 14),
    MalformedPredicateRow("SUBQUERY(a, b, b == 1).@count > 0", 12),
    MalformedPredicateRow("SUBQUERY(a, $b, $b == 1", 23),
    MalformedPredicateRow("SUBQUERY a", 9),
    MalformedPredicateRow("d > CAST(1, 'NSString')", 12),
    MalformedPredicateRow("d > CAST('x', 'NSDate')", 9),
    MalformedPredicateRow("d > CAST('1999-13-01', 'NSDate')", 9),
    MalformedPredicateRow("d > CAST('1999-02-29', 'NSDate')", 9),
    MalformedPredicateRow(#"d > CAST("1999-12-31T25:00:00Z", "NSDate")"#, 9),
    MalformedPredicateRow(#"d > CAST("yesterday", "NSDate")"#, 9),
    MalformedPredicateRow(#"d > CAST("1999-12-31", "NSString")"#, 23),
    MalformedPredicateRow("d > CAST(TRUE, 'NSDate')", 9),
    MalformedPredicateRow("é == 'x", 5),
    MalformedPredicateRow("e\u{301} == 'x", 5),
    MalformedPredicateRow("😀 == 1", 0),
    MalformedPredicateRow("a == 1 [", 7),
    MalformedPredicateRow(String(repeating: "(", count: 300) + "a == 1" + String(repeating: ")", count: 300), 200),
    MalformedPredicateRow(String(repeating: "NOT ", count: 300) + "a == 1", 800),
    MalformedPredicateRow(String(repeating: "!", count: 100_000), 200),
    MalformedPredicateRow(String(repeating: "(", count: 100_000), 200),
    MalformedPredicateRow("a IN " + String(repeating: "{", count: 300), 205),
    MalformedPredicateRow(String(repeating: "SUBQUERY(a, $x, ", count: 300), 200 * 16),
    MalformedPredicateRow("(" + deeplyNestedButAllowed + ")", 200),
]

// MARK: - Tests

@Suite struct PredicateParserTests {
    @Test(arguments: validRows)
    func parses(_ row: PredicateParseRow) throws {
        let parsed = try QueryPredicate(format: row.format)
        #expect(parsed == row.expected)
    }

    @Test(arguments: validRows)
    func descriptionReadsBackToTheSameTree(_ row: PredicateParseRow) throws {
        let text = row.expected.description
        let reparsed = try QueryPredicate(format: text)
        #expect(reparsed == row.expected, "description: \(text)")
    }

    @Test(arguments: malformedRows)
    func rejectsMalformedFormat(_ row: MalformedPredicateRow) {
        let error = #expect(throws: StrataError.self) { try QueryPredicate(format: row.format) }
        #expect(error?.code == .invalidPredicate)
        #expect(error?.offset == row.offset, "\(error?.message ?? "")")
    }

    /// Text in `CAST(…, "NSDate")` that is not ISO 8601 says what would be, where.
    @Test func aCastOfTextThatIsNoDateSaysWhatIsExpected() {
        let error = #expect(throws: StrataError.self) {
            try QueryPredicate(format: #"releaseDate > CAST("12/31/1999", "NSDate")"#)
        }
        #expect(error?.code == .invalidPredicate)
        #expect(error?.offset == 19)
        #expect(
            error?.message
                == #"Expected an ISO 8601 date (such as "1999-12-31" or "1999-12-31T23:59:59.5Z") or a number of seconds since 2001 in CAST at offset 19, found '"12/31/1999"'."#,
            "\(error?.message ?? "")")
    }

    @Test func rowCountsCoverTheGrammar() {
        #expect(validRows.count >= 60)
        #expect(malformedRows.count >= 30)
    }

    @Test func nestingUpToTheLimitParses() throws {
        #expect(try QueryPredicate(format: deeplyNestedButAllowed) == aEquals(1))
        let nots = String(repeating: "NOT ", count: PredicateParser.maximumDepth) + "a == 1"
        var expected = aEquals(1)
        for _ in 0..<PredicateParser.maximumDepth { expected = .not(expected) }
        #expect(try QueryPredicate(format: nots) == expected)
    }

    @Test func errorMessagesSayWhatWasExpectedAndFound() {
        let unclosed = #expect(throws: StrataError.self) { try QueryPredicate(format: "(a == 1 AND b == 2") }
        #expect(unclosed?.message == "Expected ')' at offset 18, found end of string.")
        let reserved = #expect(throws: StrataError.self) { try QueryPredicate(format: "in == 1") }
        #expect(reserved?.message.contains("#in") == true)
        let deep = #expect(throws: StrataError.self) {
            try QueryPredicate(format: String(repeating: "(", count: 100_000))
        }
        #expect(deep?.message.contains("nested too deeply") == true)
        let badOptions = #expect(throws: StrataError.self) { try QueryPredicate(format: "a ==[x] 'b'") }
        #expect(badOptions?.message == "Expected comparison options (c, d, n or l) after '[' at offset 5, found 'x'.")
    }

    // MARK: Arguments

    @Test func objectSpecifierTakesAnyArgument() throws {
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        #expect(try QueryPredicate(format: "d > %@", date) == compare(key("d"), .greaterThan, .value(.date(date))))
        let uuid = UUID()
        #expect(try QueryPredicate(format: "id == %@", uuid) == compare(key("id"), .equalTo, .value(.uuid(uuid))))
        #expect(
            try QueryPredicate(format: "year IN %@", [1990, 2000]) == compare(key("year"), .in, .list([1990, 2000])))
        #expect(try QueryPredicate(format: "title == %@", String?.none) == compare(key("title"), .equalTo, nil))
        let objectID = ObjectID(entityName: "Movie", storeIdentifier: "STORE", primaryKey: 7)
        #expect(
            try QueryPredicate(format: "director == %@", objectID)
                == compare(key("director"), .equalTo, .objectID(objectID)))
        #expect(try QueryPredicate(format: "%@ IN tags", "x") == compare("x", .in, key("tags")))
        #expect(try QueryPredicate(format: "a BETWEEN %@", [1, 5]) == compare(key("a"), .between, .list([1, 5])))
        #expect(try QueryPredicate(format: "flag == %@", true) == compare(key("flag"), .equalTo, true))
    }

    @Test func keySpecifierBuildsAKeyPath() throws {
        #expect(try QueryPredicate(format: "%K == %@", "title", "Alien") == compare(key("title"), .equalTo, "Alien"))
        #expect(
            try QueryPredicate(format: "%K > 3", "reviews.@count") == compare(key("reviews.@count"), .greaterThan, 3))
        #expect(
            try QueryPredicate(format: "%K.name == 'x'", "director") == compare(key("director.name"), .equalTo, "x"))
        // A reserved word is a plain key when it comes through %K.
        #expect(try QueryPredicate(format: "%K == 1", "in") == compare(key("in"), .equalTo, 1))
        let notString = #expect(throws: StrataError.self) { try QueryPredicate(format: "%K == 1", 5) }
        #expect(notString?.code == .invalidPredicate)
        #expect(notString?.offset == 0)
        #expect(notString?.message.contains("%K") == true)
        for bad in ["", "a..b", "a b", "1a", "a.", "@bogus", "a-b"] {
            let error = #expect(throws: StrataError.self, "\(bad)") {
                try QueryPredicate(format: "x == 1 AND %K == 1", bad)
            }
            #expect(error?.offset == 11)
        }
    }

    @Test func numericSpecifiersCheckTheirArguments() throws {
        #expect(try QueryPredicate(format: "a == %d", 5) == aEquals(5))
        #expect(try QueryPredicate(format: "a == %i", Int16(-3)) == aEquals(-3))
        #expect(try QueryPredicate(format: "a == %ld", 5.0) == aEquals(5))
        #expect(try QueryPredicate(format: "a == %lld", Int64.max) == aEquals(.value(.integer(.max))))
        #expect(try QueryPredicate(format: "a == %u", 7) == aEquals(7))
        #expect(try QueryPredicate(format: "a == %f", 2) == aEquals(2.0))
        #expect(try QueryPredicate(format: "a == %lf", 2.5) == aEquals(2.5))
        #expect(try QueryPredicate(format: "a == %g", Float(0.5)) == aEquals(0.5))
        #expect(try QueryPredicate(format: "a == %s", "x") == aEquals("x"))

        let cases: [(String, any PredicateArgument, String)] = [
            ("a == %d", 5.5, "%d"), ("a == %d", "5", "%d"), ("a == %lld", Double.nan, "%lld"),
            ("a == %u", -1, "%u"), ("a == %f", "2", "%f"), ("a == %s", 3, "%s"), ("a == %d", String?.none, "%d"),
        ]
        for (format, argument, specifier) in cases {
            let error = #expect(throws: StrataError.self, "\(format)") { try QueryPredicate(format: format, argument) }
            #expect(error?.code == .invalidPredicate)
            #expect(error?.offset == 5)
            #expect(error?.message.contains(specifier) == true, "\(error?.message ?? "")")
        }
    }

    @Test func argumentCountMustMatchTheSpecifiers() throws {
        let tooFew = #expect(throws: StrataError.self) { try QueryPredicate(format: "a == %@ AND b == %@", 1) }
        #expect(tooFew?.code == .invalidPredicate)
        #expect(tooFew?.offset == 17)
        #expect(tooFew?.message.contains("format needs 2 arguments, got 1") == true)

        let tooMany = #expect(throws: StrataError.self) { try QueryPredicate(format: "a == %@", 1, 2) }
        #expect(tooMany?.code == .invalidPredicate)
        #expect(tooMany?.offset == 7)
        #expect(tooMany?.message.contains("format needs 1 arguments, got 2") == true)

        let noneNeeded = #expect(throws: StrataError.self) {
            try QueryPredicate(format: "a == '%@'", argumentArray: ["x"])
        }
        #expect(noneNeeded?.message.contains("format needs 0 arguments, got 1") == true)
        #expect(
            try QueryPredicate(format: "a == %@ OR b == %d", argumentArray: ["x", 2])
                == .or([aEquals("x"), compare(key("b"), .equalTo, 2)]))
    }

    @Test func argumentsCannotInjectSyntax() throws {
        let hostile = "x'; DROP TABLE Movie; --"
        let predicate = try QueryPredicate(format: "title == %@", hostile)
        #expect(predicate == compare(key("title"), .equalTo, .value(.string(hostile))))
        #expect(try QueryPredicate(format: predicate.description) == predicate)

        let quotes = #"a" OR 1 == 1 OR "b"#
        #expect(
            try QueryPredicate(format: "title == %@", quotes)
                == compare(key("title"), .equalTo, .value(.string(quotes))))
        #expect(try QueryPredicate(format: "title == %s", "%@ %K") == compare(key("title"), .equalTo, "%@ %K"))

        for hostileKey in ["title' OR '1' == '1", "title == 1 OR x", "a\"b", "name) OR (1"] {
            let error = #expect(throws: StrataError.self, "\(hostileKey)") {
                try QueryPredicate(format: "%K == 1", hostileKey)
            }
            #expect(error?.code == .invalidPredicate)
            #expect(error?.offset == 0)
        }
    }

    // MARK: Substitution

    @Test func substitutingReplacesTemplateVariables() throws {
        let template = try QueryPredicate(format: "year >= $from AND title BEGINSWITH $prefix AND id IN $ids")
        let predicate = try template.substituting(["from": 1990, "prefix": "The", "ids": [1, 2]])
        #expect(
            predicate
                == .and([
                    compare(key("year"), .greaterThanOrEqualTo, 1990),
                    compare(key("title"), .beginsWith, "The"),
                    compare(key("id"), .in, .list([1, 2])),
                ]))
    }

    @Test func substitutingLeavesUnboundAndSubqueryVariables() throws {
        let unbound = try QueryPredicate(format: "a == $x AND b == $y")
        #expect(try unbound.substituting(["x": 1]) == .and([aEquals(1), compare(key("b"), .equalTo, .variable("y"))]))
        #expect(try unbound.substituting([:]) == unbound)

        let subquery = try QueryPredicate(format: "SUBQUERY($x.items, $x, $x.price > $max).@count > 0")
        let substituted = try subquery.substituting(["x": QueryExpression.keyPath("order"), "max": 10])
        let expected = compare(
            .keyPathOn(
                .subquery(
                    collection: key("order.items"), variable: "x",
                    predicate: compare(.keyPathOn(.variable("x"), "price"), .greaterThan, 10)), "@count"),
            .greaterThan, 0)
        #expect(substituted == expected)
    }

    @Test func substitutingJoinsKeyPathsAndRejectsConstantsBeforeKeys() throws {
        let template = try QueryPredicate(format: "$d.name == 'x'")
        #expect(
            try template.substituting(["d": QueryExpression.keyPath("director")])
                == compare(key("director.name"), .equalTo, "x"))
        #expect(
            try template.substituting(["d": QueryExpression.evaluatedObject]) == compare(key("name"), .equalTo, "x"))
        let error = #expect(throws: StrataError.self) { try template.substituting(["d": 5]) }
        #expect(error?.code == .invalidPredicate)
    }

    // MARK: Rendering

    @Test func describesInFormatSyntax() throws {
        let predicate: QueryPredicate = .and([
            compare(key("year"), .greaterThan, 1990),
            compare(key("title"), .beginsWith, "The", .caseInsensitive),
        ])
        #expect(predicate.description == #"year > 1990 AND title BEGINSWITH[c] "The""#)
        #expect(try QueryPredicate(format: "NONE reviews.stars < 2").description == "NONE reviews.stars < 2")
        #expect(
            try QueryPredicate(format: "(a == 1 or b == 2) and not (c == 3 and d == 4)").description
                == "(a == 1 OR b == 2) AND NOT (c == 3 AND d == 4)")
        #expect(try QueryPredicate(format: "#in == 1 AND x.self == 2").description == "#in == 1 AND x.#self == 2")
        #expect(aEquals(.value(.string("50%\n\"q\"\\"))).description == #"a == "50%%\n\"q\"\\""#)
        #expect(aEquals(.value(.string("\u{1}"))).description == #"a == "\u0001""#)
        #expect(
            aEquals(.value(.date(Date(timeIntervalSinceReferenceDate: 1.5)))).description
                == #"a == CAST(1.5, "NSDate")"#)
        #expect(
            try QueryPredicate(format: "SUBQUERY(reviews, $r, $r.stars > 3).@count > 0").description
                == "SUBQUERY(reviews, $r, $r.stars > 3).@count > 0")
        #expect(QueryPredicate.and([]).description == "TRUEPREDICATE")
        #expect(QueryPredicate.or([]).description == "FALSEPREDICATE")
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
        #expect(aEquals(.value(.uuid(uuid))).description == #"a == UUID("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")"#)
        #expect(aEquals(.value(.data(Data([0, 0xAB])))).description == "a == Data(<00AB>)")
    }
}
