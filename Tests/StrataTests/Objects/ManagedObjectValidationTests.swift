import Foundation
import Testing

@testable import Strata

/// `validateForSave()`: every rule of the entity, all failures reported together.
@Suite struct ManagedObjectValidationTests {
    static let earliest = Date(timeIntervalSince1970: 0)

    static func decimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
    }
    static let latest = Date(timeIntervalSince1970: 1_000_000)

    /// `Form` has one attribute or relationship per rule; a new `Form` with the values
    /// `makeValidForm()` sets is valid.
    static func makeSchema() throws -> Schema {
        let form = EntityDescription(
            name: "Form",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "nickname", type: .string, isOptional: true),
                AttributeDescription(
                    name: "score", type: .integer32, defaultValue: 5,
                    validation: ValidationRules(minimumValue: 1, maximumValue: 10)),
                AttributeDescription(
                    name: "ratio", type: .double, defaultValue: 0.5,
                    validation: ValidationRules(minimumValue: 0, maximumValue: 1)),
                AttributeDescription(
                    name: "price", type: .decimal, isOptional: true,
                    validation: ValidationRules(minimumValue: 0.01, maximumValue: 99.99)),
                AttributeDescription(
                    name: "when", type: .date, isOptional: true,
                    validation: ValidationRules(minimumValue: .date(earliest), maximumValue: .date(latest))),
                AttributeDescription(
                    name: "code", type: .string, defaultValue: "AB",
                    validation: ValidationRules(minimumLength: 2, maximumLength: 4, pattern: "[A-Z]+")),
                AttributeDescription(
                    name: "animal", type: .string, isOptional: true,
                    validation: ValidationRules(pattern: "cat|dog")),
                AttributeDescription(
                    name: "blob", type: .binaryData, isOptional: true,
                    validation: ValidationRules(minimumLength: 1, maximumLength: 3)),
                AttributeDescription(
                    name: "memo", type: .string, isOptional: true, isTransient: true,
                    validation: ValidationRules(maximumLength: 3)),
            ],
            relationships: [
                RelationshipDescription(name: "owner", destination: "Entry", inverse: "ownedForm", isOptional: false),
                RelationshipDescription(
                    name: "entries", destination: "Entry", inverse: "form", isToMany: true, minimumCount: 1,
                    maximumCount: 2),
            ])
        let entry = EntityDescription(
            name: "Entry",
            relationships: [
                RelationshipDescription(name: "form", destination: "Form", inverse: "entries"),
                RelationshipDescription(name: "ownedForm", destination: "Form", inverse: "owner"),
            ])
        return try Schema([form, entry])
    }

    let schema: Schema

    init() throws {
        schema = try Self.makeSchema()
    }

    func makeValidForm() throws -> ManagedObject {
        let form = try ClasslessModel.makeObject("Form", in: schema)
        try form.setValue("Ann", forKey: "name")
        try form.setValue(try ClasslessModel.makeObject("Entry", in: schema), forKey: "owner")
        try form.setValue([try ClasslessModel.makeObject("Entry", in: schema)], forKey: "entries")
        return form
    }

    func failures(of object: ManagedObject) -> [String: [StrataError.Code]] {
        var result: [String: [StrataError.Code]] = [:]
        for failure in object.validationFailures() {
            result[failure.propertyName ?? "", default: []].append(failure.code)
        }
        return result
    }

    @Test func validObjectPasses() throws {
        let form = try makeValidForm()
        #expect(form.validationFailures().isEmpty)
        try form.validateForSave()
    }

    @Test func everyFailureIsReportedTogether() throws {
        let form = try ClasslessModel.makeObject("Form", in: schema)
        try form.setValue(0, forKey: "score")
        try form.setValue("abcdef", forKey: "code")
        try form.setValue(Data(), forKey: "blob")

        let error = try #require(throws: StrataError.self) { try form.validateForSave() }
        #expect(error.code == .validationFailed)
        #expect(error.entityName == "Form")
        #expect(error.objectID == form.objectID)
        let found = Dictionary(grouping: error.details, by: { $0.propertyName ?? "" }).mapValues { $0.map(\.code) }
        #expect(found["name"] == [.missingValue])
        #expect(found["score"] == [.valueTooSmall])
        #expect(found["code"] == [.valueTooLarge, .patternMismatch])
        #expect(found["blob"] == [.valueTooSmall])
        #expect(found["owner"] == [.missingValue])
        #expect(found["entries"] == [.relationshipCountOutOfRange])
        #expect(error.details.count == 7)
        for detail in error.details {
            #expect(detail.entityName == "Form")
            #expect(detail.objectID == form.objectID)
            #expect(error.message.contains(detail.message), "\(detail.message) missing from \(error.message)")
        }
    }

    @Test func missingNonOptionalValueIsReported() throws {
        let form = try makeValidForm()
        try form.setValue(nil, forKey: "name")
        try form.setValue(nil, forKey: "score")
        #expect(failures(of: form) == ["name": [.missingValue], "score": [.missingValue]])
        let error = try #require(throws: StrataError.self) { try form.validateForSave() }
        let detail = try #require(error.details.first { $0.propertyName == "name" })
        #expect(detail.message == "Form.name is required but has no value.")
    }

    @Test func optionalAttributesMayBeNil() throws {
        let form = try makeValidForm()
        for key in ["nickname", "price", "when", "animal", "blob", "memo"] {
            #expect(try form.value(forKey: key) == nil)
        }
        #expect(form.validationFailures().isEmpty)
    }

    struct Bound: Sendable, CustomTestStringConvertible {
        let key: String
        let value: AttributeValue
        let code: StrataError.Code?
        var testDescription: String { "\(key) = \(value)" }
    }

    @Test(arguments: [
        Bound(key: "score", value: .integer(0), code: .valueTooSmall),
        Bound(key: "score", value: .integer(1), code: nil),
        Bound(key: "score", value: .integer(10), code: nil),
        Bound(key: "score", value: .integer(11), code: .valueTooLarge),
        Bound(key: "ratio", value: .double(-0.001), code: .valueTooSmall),
        Bound(key: "ratio", value: .double(1), code: nil),
        Bound(key: "ratio", value: .double(1.0001), code: .valueTooLarge),
        Bound(key: "price", value: .decimal(decimal("0.009")), code: .valueTooSmall),
        Bound(key: "price", value: .decimal(decimal("0.01")), code: nil),
        Bound(key: "price", value: .decimal(decimal("99.99")), code: nil),
        Bound(key: "price", value: .decimal(decimal("99.991")), code: .valueTooLarge),
        Bound(key: "when", value: .date(Date(timeIntervalSince1970: -1)), code: .valueTooSmall),
        Bound(key: "when", value: .date(earliest), code: nil),
        Bound(key: "when", value: .date(latest), code: nil),
        Bound(key: "when", value: .date(Date(timeIntervalSince1970: 1_000_000.5)), code: .valueTooLarge),
    ])
    func minimumAndMaximumValues(_ bound: Bound) throws {
        let form = try makeValidForm()
        try form.setValue(bound.value, forKey: bound.key)
        let expected: [String: [StrataError.Code]] = bound.code.map { [bound.key: [$0]] } ?? [:]
        #expect(failures(of: form) == expected)
    }

    struct Length: Sendable, CustomTestStringConvertible {
        let key: String
        let value: AttributeValue
        let codes: [StrataError.Code]
        var testDescription: String { "\(key) = \(value)" }
    }

    @Test(arguments: [
        Length(key: "code", value: "A", codes: [.valueTooSmall]),
        Length(key: "code", value: "AB", codes: []),
        Length(key: "code", value: "ABCD", codes: []),
        Length(key: "code", value: "ABCDE", codes: [.valueTooLarge]),
        // Characters, not bytes or UTF-16 units: 3 characters, 6 UTF-16 units.
        Length(key: "code", value: "🎬🎬🎬", codes: [.patternMismatch]),
        Length(key: "blob", value: .data(Data()), codes: [.valueTooSmall]),
        Length(key: "blob", value: .data(Data([1])), codes: []),
        Length(key: "blob", value: .data(Data([1, 2, 3])), codes: []),
        Length(key: "blob", value: .data(Data([1, 2, 3, 4])), codes: [.valueTooLarge]),
        // Transient attributes are validated too.
        Length(key: "memo", value: "abcd", codes: [.valueTooLarge]),
    ])
    func minimumAndMaximumLengths(_ length: Length) throws {
        let form = try makeValidForm()
        try form.setValue(length.value, forKey: length.key)
        let expected: [String: [StrataError.Code]] = length.codes.isEmpty ? [:] : [length.key: length.codes]
        #expect(failures(of: form) == expected)
    }

    @Test func lengthMessagesNameTheUnit() throws {
        let form = try makeValidForm()
        try form.setValue("ABCDEF", forKey: "code")
        try form.setValue(Data([1, 2, 3, 4]), forKey: "blob")
        let messages = form.validationFailures().map(\.message)
        #expect(messages.contains("Form.code has 6 characters, more than its maximum 4."))
        #expect(messages.contains("Form.blob has 4 bytes, more than its maximum 3."))
    }

    @Test(arguments: [
        ("AB", true), ("XYZ", true), ("ab", false), ("AB1", false), ("1AB", false), ("A B", false),
        ("AB\n", false), ("\nAB", false),
    ])
    func patternMustMatchTheWholeString(_ text: String, _ isValid: Bool) throws {
        let form = try makeValidForm()
        try form.setValue(text, forKey: "code")
        #expect((failures(of: form)["code"] ?? []).contains(.patternMismatch) == !isValid)
    }

    @Test(arguments: [("cat", true), ("dog", true), ("catdog", false), ("cats", false), ("hotdog", false)])
    func alternationsInPatternsAreAnchoredAsAWhole(_ text: String, _ isValid: Bool) throws {
        let form = try makeValidForm()
        try form.setValue(text, forKey: "animal")
        #expect(failures(of: form) == (isValid ? [:] : ["animal": [.patternMismatch]]))
    }

    @Test(arguments: [0, 1, 2, 3])
    func toManyCountBounds(_ count: Int) throws {
        let form = try makeValidForm()
        let entries = try (0..<count).map { _ in try ClasslessModel.makeObject("Entry", in: schema) }
        try form.setValue(entries, forKey: "entries")
        let failures = form.validationFailures()
        if (1...2).contains(count) {
            #expect(failures.isEmpty)
        } else {
            #expect(failures.map(\.code) == [.relationshipCountOutOfRange])
            #expect(failures.first?.propertyName == "entries")
            let word = count == 0 ? "fewer than its minimum 1" : "more than its maximum 2"
            #expect(failures.first?.message.contains(word) == true, "\(failures.first?.message ?? "")")
        }
    }

    @Test func nonOptionalToOneMustBeSet() throws {
        let form = try makeValidForm()
        try form.setValue(nil, forKey: "owner")
        let failures = form.validationFailures()
        #expect(failures.map(\.code) == [.missingValue])
        #expect(failures.first?.propertyName == "owner")
        #expect(failures.first?.message == "Form.owner is required but has no Entry.")
    }

    // MARK: Rules declared with @Attribute

    @Test(arguments: [(0, false), (1, true), (100, true), (101, false)])
    func movieTitleLength(_ length: Int, _ isValid: Bool) throws {
        let movie = Movie(title: String(repeating: "x", count: length), year: 1995)
        let failures = movie.validationFailures()
        if isValid {
            #expect(failures.isEmpty)
            try movie.validateForSave()
        } else {
            #expect(failures.map(\.propertyName) == ["title"])
            #expect(failures.map(\.code) == [length == 0 ? .valueTooSmall : .valueTooLarge])
            #expect(throws: StrataError.self) { try movie.validateForSave() }
        }
    }

    @Test(arguments: [(Int16(1887), false), (1888, true), (2100, true), (2101, false)])
    func movieYearRange(_ year: Int16, _ isValid: Bool) throws {
        let movie = Movie(title: "Heat", year: year)
        #expect(movie.validationFailures().map(\.propertyName) == (isValid ? [] : ["year"]))
    }

    @Test(arguments: [Int32(-1), 0, 3, 5, 6, 100])
    func reviewStarsRange(_ stars: Int32) throws {
        let review = Review()
        review.stars = stars
        let failures = review.validationFailures()
        switch stars {
        case ..<0: #expect(failures.map(\.code) == [.valueTooSmall])
        case 0...5: #expect(failures.isEmpty)
        default: #expect(failures.map(\.code) == [.valueTooLarge])
        }
        #expect(failures.allSatisfy { $0.entityName == "Review" && $0.propertyName == "stars" })
    }

    @Test func defaultMovieFailsOnlyOnItsEmptyTitle() throws {
        let error = try #require(throws: StrataError.self) { try Movie().validateForSave() }
        #expect(error.code == .validationFailed)
        #expect(error.details.map(\.code) == [.valueTooSmall])
        #expect(error.details.first?.message == "Movie.title has 0 characters, fewer than its minimum 1.")
    }

    @Test(arguments: [("abc", true), ("ABC", false), ("abc1", false), ("", false), ("abc\n", false)])
    func samplePattern(_ code: String, _ isValid: Bool) throws {
        let sample = Sample()
        sample.code = code
        #expect(sample.validationFailures().map(\.code) == (isValid ? [] : [.patternMismatch]))
    }
}
