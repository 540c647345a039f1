import Foundation
import Testing

@testable import Strata

/// `FetchPredicate(_:)` with Foundation's `#Predicate`: each supported construct and the tree it
/// becomes, and a precise error for each construct Strata cannot translate.
@Suite struct FoundationPredicateTests {
    /// One `#Predicate` and the tree it must translate to.
    struct Case<Model: ManagedObject>: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let predicate: Predicate<Model>
        let expected: QueryPredicate

        init(_ label: String, _ predicate: Predicate<Model>, _ expected: QueryPredicate) {
            self.testDescription = label
            self.predicate = predicate
            self.expected = expected
        }
    }

    static let releaseDate = Date(timeIntervalSinceReferenceDate: 86_400)
    static let movieID = UUID(uuidString: "B7C7A7E2-2C31-4B69-9A57-2D5B0F4E6C11") ?? UUID()
    static let reviewID = ObjectID(entityName: "Review")
    static let personID = ObjectID(entityName: "Person")

    // MARK: Comparisons, logic and constants

    static let basics: [Case<Movie>] = {
        let date = releaseDate
        let id = movieID
        let years: [Int16] = [1995, 1999]
        let missingName: String? = nil
        return [
            Case("true", #Predicate { _ in true }, .constant(true)),
            Case("false", #Predicate { _ in false }, .constant(false)),
            Case("==", #Predicate { $0.title == "Heat" }, .comparison(.keyPath("title"), .equalTo, "Heat")),
            Case("!=", #Predicate { $0.title != "Heat" }, .comparison(.keyPath("title"), .notEqualTo, "Heat")),
            Case("<", #Predicate { $0.year < 1990 }, .comparison(.keyPath("year"), .lessThan, 1990)),
            Case("<=", #Predicate { $0.year <= 1990 }, .comparison(.keyPath("year"), .lessThanOrEqualTo, 1990)),
            Case(">", #Predicate { $0.year > 1990 }, .comparison(.keyPath("year"), .greaterThan, 1990)),
            Case(">=", #Predicate { $0.rating >= 4.5 }, .comparison(.keyPath("rating"), .greaterThanOrEqualTo, 4.5)),
            Case("constant on the left", #Predicate { 1990 < $0.year }, .comparison(1990, .lessThan, .keyPath("year"))),
            Case(
                "negative literal", #Predicate { $0.rating > -1.5 }, .comparison(.keyPath("rating"), .greaterThan, -1.5)
            ),
            Case(
                "captured date", #Predicate { $0.releaseDate == date },
                .comparison(.keyPath("releaseDate"), .equalTo, .value(.date(date)))),
            Case("captured UUID", #Predicate { $0.id == id }, .comparison(.keyPath("id"), .equalTo, .value(.uuid(id)))),
            Case(
                "captured nil", #Predicate { $0.director?.name == missingName },
                .comparison(.keyPath("director.name"), .equalTo, .null)),
            Case("== nil", #Predicate { $0.director == nil }, .comparison(.keyPath("director"), .equalTo, .null)),
            Case(
                "!= nil", #Predicate { $0.releaseDate != nil }, .comparison(.keyPath("releaseDate"), .notEqualTo, .null)
            ),
            Case(
                "&&", #Predicate { $0.year > 1990 && $0.rating > 3 },
                .and([
                    .comparison(.keyPath("year"), .greaterThan, 1990),
                    .comparison(.keyPath("rating"), .greaterThan, 3.0),
                ])),
            Case(
                "&& chain is flat", #Predicate { $0.year > 1990 && $0.rating > 3 && $0.title != "" },
                .and([
                    .comparison(.keyPath("year"), .greaterThan, 1990),
                    .comparison(.keyPath("rating"), .greaterThan, 3.0),
                    .comparison(.keyPath("title"), .notEqualTo, ""),
                ])),
            Case(
                "||", #Predicate { $0.year < 1950 || $0.year > 2000 },
                .or([.comparison(.keyPath("year"), .lessThan, 1950), .comparison(.keyPath("year"), .greaterThan, 2000)])
            ),
            Case("!", #Predicate { !($0.title == "Heat") }, .not(.comparison(.keyPath("title"), .equalTo, "Heat"))),
            Case(
                "&& inside ||", #Predicate { ($0.year > 1990 && $0.rating > 3) || $0.title == "Heat" },
                .or([
                    .and([
                        .comparison(.keyPath("year"), .greaterThan, 1990),
                        .comparison(.keyPath("rating"), .greaterThan, 3.0),
                    ]),
                    .comparison(.keyPath("title"), .equalTo, "Heat"),
                ])),
            Case(
                "arithmetic on constants", #Predicate { $0.year > 1990 + 5 * 2 },
                .comparison(.keyPath("year"), .greaterThan, 2000)),
            Case("constant comparison folds", #Predicate { _ in 1 < 2 }, .constant(true)),
            Case(
                "constant array contains (IN)", #Predicate { years.contains($0.year) },
                .comparison(.keyPath("year"), .in, .list([1995, 1999]))),
            Case(
                "closed range contains (BETWEEN)", #Predicate { (1990...1999).contains($0.year) },
                .comparison(.keyPath("year"), .between, .list([1990, 1999]))),
            Case(
                "half-open range contains", #Predicate { (1990..<2000).contains($0.year) },
                .and([
                    .comparison(.keyPath("year"), .greaterThanOrEqualTo, 1990),
                    .comparison(.keyPath("year"), .lessThan, 2000),
                ])),
        ]
    }()

    @Test(arguments: basics)
    func translatesComparisonsAndLogic(_ testCase: Case<Movie>) throws {
        #expect(try FetchPredicate(testCase.predicate).tree == testCase.expected)
    }

    // MARK: Optionals and conditionals

    static let optionals: [Case<Movie>] = {
        let date = releaseDate
        return [
            Case(
                "optional chaining", #Predicate { $0.director?.name == "Mann" },
                .comparison(.keyPath("director.name"), .equalTo, "Mann")),
            Case(
                "flatMap", #Predicate { $0.director.flatMap { $0.name } == "Mann" },
                .comparison(.keyPath("director.name"), .equalTo, "Mann")),
            Case(
                "?? with a fallback that cannot match", #Predicate { ($0.director?.name ?? "") == "Mann" },
                .comparison(.keyPath("director.name"), .equalTo, "Mann")),
            Case(
                "?? with a fallback that matches", #Predicate { ($0.director?.name ?? "Unknown") == "Unknown" },
                .or([
                    .comparison(.keyPath("director.name"), .equalTo, "Unknown"),
                    .comparison(.keyPath("director.name"), .equalTo, .null),
                ])),
            Case(
                "?? with !=", #Predicate { ($0.director?.name ?? "") != "" },
                .and([
                    .comparison(.keyPath("director.name"), .notEqualTo, .null),
                    .comparison(.keyPath("director.name"), .notEqualTo, ""),
                ])),
            Case(
                "?? with a key path fallback", #Predicate { ($0.director?.name ?? $0.title) == "Heat" },
                .or([
                    .comparison(.keyPath("director.name"), .equalTo, "Heat"),
                    .and([
                        .comparison(.keyPath("director.name"), .equalTo, .null),
                        .comparison(.keyPath("title"), .equalTo, "Heat"),
                    ]),
                ])),
            Case(
                "?? with <", #Predicate { ($0.releaseDate ?? date) < date },
                .and([
                    .comparison(.keyPath("releaseDate"), .notEqualTo, .null),
                    .comparison(.keyPath("releaseDate"), .lessThan, .value(.date(date))),
                ])),
            Case(
                "flatMap to a condition, == true", #Predicate { $0.director.flatMap { $0.name == "Mann" } == true },
                .and([
                    .comparison(.keyPath("director"), .notEqualTo, .null),
                    .comparison(.keyPath("director.name"), .equalTo, "Mann"),
                ])),
            Case(
                "flatMap to a condition ?? false", #Predicate { $0.director.flatMap { $0.name == "Mann" } ?? false },
                .and([
                    .comparison(.keyPath("director"), .notEqualTo, .null),
                    .comparison(.keyPath("director.name"), .equalTo, "Mann"),
                ])),
            Case(
                "Boolean ternary", #Predicate { $0.year > 2000 ? $0.rating > 4 : $0.rating > 3 },
                .or([
                    .and([
                        .comparison(.keyPath("year"), .greaterThan, 2000),
                        .comparison(.keyPath("rating"), .greaterThan, 4.0),
                    ]),
                    .and([
                        .not(.comparison(.keyPath("year"), .greaterThan, 2000)),
                        .comparison(.keyPath("rating"), .greaterThan, 3.0),
                    ]),
                ])),
            Case(
                "ternary value compared", #Predicate { ($0.year > 2000 ? $0.title : "old") == "Heat" },
                .and([
                    .comparison(.keyPath("year"), .greaterThan, 2000), .comparison(.keyPath("title"), .equalTo, "Heat"),
                ])),
        ]
    }()

    @Test(arguments: optionals)
    func translatesOptionalsAndConditionals(_ testCase: Case<Movie>) throws {
        #expect(try FetchPredicate(testCase.predicate).tree == testCase.expected)
    }

    // The force unwrap is inside the predicate: it is the construct under test.
    // swift-format-ignore: NeverForceUnwrap
    @Test func translatesForcedUnwrapLikeOptionalChaining() throws {
        #expect(
            try FetchPredicate(#Predicate<Movie> { $0.director!.name == "Mann" }).tree
                == .comparison(.keyPath("director.name"), .equalTo, "Mann"))
    }

    // MARK: Strings

    static let strings: [Case<Movie>] = [
        Case("contains", #Predicate { $0.title.contains("eat") }, .comparison(.keyPath("title"), .contains, "eat")),
        Case(
            "contains a character", #Predicate { $0.title.contains("x") },
            .comparison(.keyPath("title"), .contains, "x")),
        Case(
            "starts(with:)", #Predicate { $0.title.starts(with: "The") },
            .comparison(.keyPath("title"), .beginsWith, "The")),
        Case("isEmpty", #Predicate { $0.title.isEmpty }, .comparison(.keyPath("title"), .equalTo, "")),
        Case(
            "collection attribute contains", #Predicate { $0.tags.contains("noir") },
            .comparison(.keyPath("tags"), .contains, "noir")),
        Case(
            "through a to-one relationship", #Predicate { $0.director?.name.starts(with: "M") == true },
            .and([
                .comparison(.keyPath("director"), .notEqualTo, .null),
                .comparison(.keyPath("director.name"), .beginsWith, "M"),
            ])),
    ]

    @Test(arguments: strings)
    func translatesStringOperations(_ testCase: Case<Movie>) throws {
        #expect(try FetchPredicate(testCase.predicate).tree == testCase.expected)
    }

    /// `caseInsensitiveCompare` exists only in Apple's Foundation; check the mapping of its
    /// result on every platform through the translator.
    @Test(arguments: [
        (ComparisonResult.orderedSame, ComparisonOperator.equalTo, ComparisonOperator.notEqualTo),
        (.orderedAscending, .lessThan, .greaterThanOrEqualTo),
        (.orderedDescending, .greaterThan, .lessThanOrEqualTo),
    ])
    func mapsCaseInsensitiveOrderings(
        _ result: ComparisonResult, _ whenEqual: ComparisonOperator, _ whenNotEqual: ComparisonOperator
    ) throws {
        let translator = FoundationPredicateTranslator(
            root: PredicateExpressions.Variable<Movie>().key, modelName: "Movie")
        let ordering = FoundationPredicatePart.stringOrdering(.keyPath("title"), "heat", .caseInsensitive)
        #expect(
            try translator.compare(ordering, .equalTo, .ordering(result))
                == .comparison(.keyPath("title"), whenEqual, "heat", options: .caseInsensitive))
        #expect(
            try translator.compare(.ordering(result), .notEqualTo, ordering)
                == .comparison(.keyPath("title"), whenNotEqual, "heat", options: .caseInsensitive))
        #expect(throws: StrataError.self) { try translator.compare(ordering, .lessThan, .ordering(result)) }
    }

    // MARK: To-many relationships

    static let relationships: [Case<Movie>] = {
        let review = reviewID
        let person = personID
        let minimumStars: Int32 = 4
        let stars: QueryExpression = .keyPathOn(.variable("v1"), "stars")
        let text: QueryExpression = .keyPathOn(.variable("v1"), "text")
        return [
            Case(
                "count", #Predicate { $0.reviews.count > 2 }, .comparison(.keyPath("reviews.@count"), .greaterThan, 2)),
            Case("isEmpty", #Predicate { $0.reviews.isEmpty }, .comparison(.keyPath("reviews.@count"), .equalTo, 0)),
            Case("!isEmpty", #Predicate { !$0.cast.isEmpty }, .not(.comparison(.keyPath("cast.@count"), .equalTo, 0))),
            Case(
                "contains(where:) with one comparison is ANY",
                #Predicate { $0.reviews.contains { $0.stars >= minimumStars } },
                .comparison(.keyPath("reviews.stars"), .greaterThanOrEqualTo, 4, modifier: .any)),
            Case(
                "contains(where:) with the constant first", #Predicate { $0.reviews.contains { 4 <= $0.stars } },
                .comparison(.keyPath("reviews.stars"), .greaterThanOrEqualTo, 4, modifier: .any)),
            Case(
                "contains(where:) with several conditions is a SUBQUERY",
                #Predicate { $0.reviews.contains { $0.stars > 3 && $0.text.contains("great") } },
                .comparison(
                    .keyPathOn(
                        .subquery(
                            collection: .keyPath("reviews"), variable: "v1",
                            predicate: .and([
                                .comparison(stars, .greaterThan, 3), .comparison(text, .contains, "great"),
                            ])),
                        "@count"), .greaterThan, 0)),
            Case(
                "allSatisfy with one comparison is ALL", #Predicate { $0.reviews.allSatisfy { $0.stars >= 2 } },
                .comparison(.keyPath("reviews.stars"), .greaterThanOrEqualTo, 2, modifier: .all)),
            Case(
                "allSatisfy with several conditions: no member fails",
                #Predicate { $0.reviews.allSatisfy { $0.stars >= 2 || $0.text == "" } },
                .comparison(
                    .keyPathOn(
                        .subquery(
                            collection: .keyPath("reviews"), variable: "v1",
                            predicate: .not(
                                .or([.comparison(stars, .greaterThanOrEqualTo, 2), .comparison(text, .equalTo, "")]))),
                        "@count"), .equalTo, 0)),
            Case(
                "filter + count", #Predicate { $0.reviews.filter { $0.stars > 3 }.count > 1 },
                .comparison(
                    .keyPathOn(
                        .subquery(
                            collection: .keyPath("reviews"), variable: "v1",
                            predicate: .comparison(stars, .greaterThan, 3)), "@count"),
                    .greaterThan, 1)),
            Case(
                "filter + isEmpty", #Predicate { $0.reviews.filter { $0.stars > 3 }.isEmpty },
                .comparison(
                    .keyPathOn(
                        .subquery(
                            collection: .keyPath("reviews"), variable: "v1",
                            predicate: .comparison(stars, .greaterThan, 3)), "@count"),
                    .equalTo, 0)),
            Case(
                "contains an object by ID", #Predicate { $0.reviews.contains { $0.objectID == review } },
                .comparison(.keyPath("reviews"), .contains, .objectID(reviewID))),
            Case(
                "to-one relationship by ID", #Predicate { $0.director?.objectID == person },
                .comparison(.keyPath("director"), .equalTo, .objectID(personID))),
            Case(
                "to-one relationship inside a closure", #Predicate { $0.cast.contains { $0.name == "Pacino" } },
                .comparison(.keyPath("cast.name"), .equalTo, "Pacino", modifier: .any)),
            Case(
                "nested closures",
                #Predicate { $0.cast.contains { person in person.directed.contains { $0.year > 2000 } } },
                .comparison(
                    .keyPathOn(
                        .subquery(
                            collection: .keyPath("cast"), variable: "v1",
                            predicate: .comparison(
                                .keyPathOn(.variable("v1"), "directed.year"), .greaterThan, 2000, modifier: .any)),
                        "@count"), .greaterThan, 0)),
            Case(
                "optional chaining inside a closure", #Predicate { $0.reviews.contains { $0.movie?.title == "Heat" } },
                .comparison(.keyPath("reviews.movie.title"), .equalTo, "Heat", modifier: .any)),
        ]
    }()

    @Test(arguments: relationships)
    func translatesToManyRelationships(_ testCase: Case<Movie>) throws {
        #expect(try FetchPredicate(testCase.predicate).tree == testCase.expected)
    }

    // MARK: Other models

    @Test func translatesBooleanAttributesUsedAsConditions() throws {
        #expect(
            try FetchPredicate(#Predicate<Bike> { $0.isElectric }).tree
                == .comparison(.keyPath("isElectric"), .equalTo, true))
        #expect(
            try FetchPredicate(#Predicate<Bike> { !$0.isElectric }).tree
                == .not(.comparison(.keyPath("isElectric"), .equalTo, true)))
        #expect(
            try FetchPredicate(#Predicate<Bike> { $0.isElectric == false }).tree
                == .comparison(.keyPath("isElectric"), .equalTo, false))
        #expect(
            try FetchPredicate(#Predicate<Bike> { $0.isElectric && $0.wheels == 2 }).tree
                == .and([
                    .comparison(.keyPath("isElectric"), .equalTo, true), .comparison(.keyPath("wheels"), .equalTo, 2),
                ]))
    }

    @Test func namesInheritedProperties() throws {
        #expect(
            try FetchPredicate(#Predicate<Car> { $0.wheels == 4 && $0.seats > 2 }).tree
                == .and([.comparison(.keyPath("wheels"), .equalTo, 4), .comparison(.keyPath("seats"), .greaterThan, 2)])
        )
    }

    @Test func translatesReviewsThroughTheirMovie() throws {
        #expect(
            try FetchPredicate(#Predicate<Review> { $0.movie?.director?.name == "Mann" }).tree
                == .comparison(.keyPath("movie.director.name"), .equalTo, "Mann"))
        #expect(
            try FetchPredicate(#Predicate<Review> { ($0.movie?.reviews.count ?? 0) > 3 }).tree
                == .and([
                    .comparison(.keyPath("movie.reviews.@count"), .notEqualTo, .null),
                    .comparison(.keyPath("movie.reviews.@count"), .greaterThan, 3),
                ]))
    }

    @Test func usesFreshVariableNamesForEachClosure() throws {
        let predicate = #Predicate<Movie> {
            $0.reviews.filter { $0.stars > 3 }.count > 1 && $0.reviews.filter { $0.text == "" }.isEmpty
        }
        let first: QueryExpression = .subquery(
            collection: .keyPath("reviews"), variable: "v1",
            predicate: .comparison(.keyPathOn(.variable("v1"), "stars"), .greaterThan, 3))
        let second: QueryExpression = .subquery(
            collection: .keyPath("reviews"), variable: "v2",
            predicate: .comparison(.keyPathOn(.variable("v2"), "text"), .equalTo, ""))
        #expect(
            try FetchPredicate(predicate).tree
                == .and([
                    .comparison(.keyPathOn(first, "@count"), .greaterThan, 1),
                    .comparison(.keyPathOn(second, "@count"), .equalTo, 0),
                ]))
    }

    // MARK: Errors

    /// Runs the translation and returns the error it throws.
    private func translationError<Model: ManagedObject>(_ predicate: Predicate<Model>) -> StrataError? {
        do {
            _ = try FetchPredicate(predicate)
            return nil
        } catch let error as StrataError {
            return error
        } catch {
            Issue.record("Unexpected error type: \(error)")
            return nil
        }
    }

    @Test func rejectsComputedProperties() throws {
        let error = try #require(translationError(#Predicate<Movie> { $0.loudTitle == "HEAT" }))
        #expect(error.code == .unknownKey)
        #expect(error.message.contains("Movie"))
        #expect(error.entityName == "Movie")
    }

    @Test func rejectsTransientProperties() throws {
        let error = try #require(translationError(#Predicate<Movie> { $0.cache > 0 }))
        #expect(error.code == .unknownKey)
    }

    /// An unsupported construct, and the name the error must mention.
    struct Unsupported: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let translate: @Sendable () throws -> Void
        let construct: String

        init<Model: ManagedObject>(_ construct: String, _ predicate: Predicate<Model>, _ label: String) {
            self.testDescription = label
            self.construct = construct
            self.translate = { _ = try FetchPredicate(predicate) }
        }
    }

    static let unsupported: [Unsupported] = [
        Unsupported("PredicateExpressions.TypeCheck", #Predicate<Vehicle> { $0 is Car }, "is"),
        Unsupported("PredicateExpressions.ConditionalCast", #Predicate<Vehicle> { ($0 as? Car)?.seats == 5 }, "as?"),
        Unsupported(
            "PredicateExpressions.Arithmetic", #Predicate<Movie> { $0.year + 1 > 2000 }, "arithmetic on a stored value"),
        Unsupported("PredicateExpressions.KeyPath", #Predicate<Movie> { $0.title.count > 3 }, "String.count"),
        Unsupported("PredicateExpressions.KeyPath", #Predicate<Movie> { $0.cast.first?.name == "Pacino" }, "first"),
        Unsupported(
            "PredicateExpressions.KeyPath", #Predicate<Movie> { $0.location?.latitude == 1 },
            "a property of a Codable value"),
        Unsupported(
            "PredicateExpressions.CollectionIndexSubscript", #Predicate<Movie> { $0.tags[0] == "x" }, "subscript"),
        Unsupported("PredicateExpressions.SequenceMaximum", #Predicate<Movie> { $0.tags.max() == "x" }, "max()"),
        Unsupported(
            "PredicateExpressions.SequenceContainsWhere", #Predicate<Movie> { $0.tags.contains { $0 == "x" } },
            "contains(where:) on values"),
        Unsupported(
            "the Movie being tested", #Predicate<Movie> { movie in movie.reviews.contains { $0.text == movie.title } },
            "the outer object inside a closure"),
    ]

    @Test(arguments: unsupported)
    func rejectsUnsupportedConstructs(_ testCase: Unsupported) throws {
        let error = try #require(throws: StrataError.self) { try testCase.translate() }
        #expect(error.code == .unsupportedPredicate)
        #expect(error.message.contains(testCase.construct), "\(error.message)")
    }

    @Test func rejectsRegularExpressions() throws {
        let predicate = #Predicate<Movie> { $0.title.contains(/H.at/) }
        let error = try #require(throws: StrataError.self) { try FetchPredicate(predicate) }
        #expect(error.code == .unsupportedPredicate)
        #expect(error.message.contains("PredicateExpressions.StringContainsRegex"))
    }

    @Test func rejectsConstantArithmeticThatOverflowsOrDividesByZero() throws {
        let largest = Int64.max
        let zero = 0
        let overflow = #Predicate<Sample> { $0.int64 > largest + 1 }
        let division = #Predicate<Sample> { $0.int > 10 / zero }
        for predicate in [overflow, division] {
            let error = try #require(throws: StrataError.self) { try FetchPredicate(predicate) }
            #expect(error.code == .unsupportedPredicate)
        }
    }
}
