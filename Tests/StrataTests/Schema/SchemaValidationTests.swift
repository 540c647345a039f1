import Foundation
import Testing

@testable import Strata

/// Builds a schema that must be invalid and returns the individual problems.
private func problems(
    _ entities: [EntityDescription],
    configurations: [String: [String]] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) -> [StrataError] {
    do {
        let schema = try Schema(entities, configurations: configurations)
        Issue.record("Expected an invalid schema, got:\n\(schema)", sourceLocation: sourceLocation)
        return []
    } catch let error as StrataError {
        #expect(error.code == .invalidSchema, sourceLocation: sourceLocation)
        #expect(error.message.contains("\(error.details.count) problem"), sourceLocation: sourceLocation)
        return error.details
    } catch {
        Issue.record("Expected a StrataError, got \(error)", sourceLocation: sourceLocation)
        return []
    }
}

/// One invalid model and the single problem it must report.
struct InvalidSchemaCase: Sendable, CustomTestStringConvertible {
    var label: String
    var entities: [EntityDescription]
    var configurations: [String: [String]] = [:]
    var code: StrataError.Code
    var entityName: String?
    var propertyName: String?
    /// A fragment the problem's message must contain (a hint, the offending value).
    var messageFragment: String?

    var testDescription: String { label }

    static let all: [InvalidSchemaCase] = [
        // MARK: Names
        InvalidSchemaCase(
            label: "duplicate entity",
            entities: [
                EntityDescription(name: "Movie", attributes: [.init(name: "title", type: .string)]),
                EntityDescription(name: "Movie", attributes: [.init(name: "year", type: .integer16)]),
            ],
            code: .duplicateName, entityName: "Movie", propertyName: nil),
        InvalidSchemaCase(
            label: "duplicate attribute",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "title", type: .string), .init(name: "title", type: .string)])
            ],
            code: .duplicateName, entityName: "Movie", propertyName: "title"),
        InvalidSchemaCase(
            label: "attribute and relationship share a name",
            entities: [
                EntityDescription(
                    name: "Movie", attributes: [.init(name: "director", type: .string)],
                    relationships: [.init(name: "director", destination: "Person", inverse: "movies")]),
                EntityDescription(
                    name: "Person",
                    relationships: [.init(name: "movies", destination: "Movie", inverse: "director", isToMany: true)]),
            ],
            code: .duplicateName, entityName: "Movie", propertyName: "director"),
        InvalidSchemaCase(
            label: "property repeats an inherited one",
            entities: [
                EntityDescription(name: "Person", attributes: [.init(name: "name", type: .string)]),
                EntityDescription(
                    name: "Student", superentity: "Person", attributes: [.init(name: "name", type: .string)]),
            ],
            code: .duplicateName, entityName: "Student", propertyName: "name"),
        InvalidSchemaCase(
            label: "property repeats a grandparent's",
            entities: [
                EntityDescription(name: "Person", attributes: [.init(name: "name", type: .string)]),
                EntityDescription(name: "Student", superentity: "Person"),
                EntityDescription(
                    name: "Graduate", superentity: "Student", attributes: [.init(name: "name", type: .string)]),
            ],
            code: .duplicateName, entityName: "Graduate", propertyName: "name"),
        InvalidSchemaCase(
            label: "duplicate index name",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "title", type: .string), .init(name: "year", type: .integer16)],
                    indexes: [IndexDescription(name: "lookup", ["title"]), IndexDescription(name: "lookup", ["year"])])
            ],
            code: .duplicateName, entityName: "Movie", propertyName: nil, messageFragment: "lookup"),
        InvalidSchemaCase(
            label: "reserved property name objectID",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "objectID", type: .string)])],
            code: .reservedName, entityName: "Movie", propertyName: "objectID"),
        InvalidSchemaCase(
            label: "reserved relationship name context",
            entities: [
                EntityDescription(name: "Movie", relationships: [.init(name: "context", destination: "Movie")])
            ],
            code: .reservedName, entityName: "Movie", propertyName: "context"),
        InvalidSchemaCase(
            label: "property name with a space",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "release year", type: .integer16)])],
            code: .reservedName, entityName: "Movie", propertyName: "release year"),
        InvalidSchemaCase(
            label: "property name starting with a digit",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "3d", type: .boolean)])],
            code: .reservedName, entityName: "Movie", propertyName: "3d"),
        InvalidSchemaCase(
            label: "property name starting with two underscores",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "__pk", type: .integer64)])],
            code: .reservedName, entityName: "Movie", propertyName: "__pk"),
        InvalidSchemaCase(
            label: "property name starting with an underscore (store columns do)",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "_version", type: .integer64)])],
            code: .reservedName, entityName: "Movie", propertyName: "_version"),
        InvalidSchemaCase(
            label: "empty property name",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "", type: .string)])],
            code: .reservedName, entityName: "Movie", propertyName: ""),
        InvalidSchemaCase(
            label: "entity name that is not an identifier",
            entities: [EntityDescription(name: "Movie-Night", attributes: [.init(name: "date", type: .date)])],
            code: .reservedName, entityName: "Movie-Night", propertyName: nil),

        // MARK: Inheritance
        InvalidSchemaCase(
            label: "unknown superentity with a near miss",
            entities: [
                EntityDescription(name: "Person", attributes: [.init(name: "name", type: .string)]),
                EntityDescription(name: "Student", superentity: "Persn"),
            ],
            code: .unknownSuperentity, entityName: "Student", propertyName: nil,
            messageFragment: "Did you mean 'Person'?"),
        InvalidSchemaCase(
            label: "inheritance cycle A -> B -> A",
            entities: [
                EntityDescription(name: "A", superentity: "B"),
                EntityDescription(name: "B", superentity: "A"),
            ],
            code: .inheritanceCycle, entityName: "A", propertyName: nil, messageFragment: "A -> B -> A"),
        InvalidSchemaCase(
            label: "entity inherits from itself",
            entities: [EntityDescription(name: "Loop", superentity: "Loop")],
            code: .inheritanceCycle, entityName: "Loop", propertyName: nil),

        // MARK: Relationships
        InvalidSchemaCase(
            label: "unknown destination with a near miss",
            entities: [
                EntityDescription(
                    name: "Movie", relationships: [.init(name: "reviews", destination: "Reveiw", isToMany: true)]),
                EntityDescription(name: "Review", attributes: [.init(name: "stars", type: .integer16)]),
            ],
            code: .unknownDestination, entityName: "Movie", propertyName: "reviews",
            messageFragment: "Did you mean 'Review'?"),
        InvalidSchemaCase(
            label: "inverse that does not exist",
            entities: [
                EntityDescription(
                    name: "Movie",
                    relationships: [.init(name: "reviews", destination: "Review", inverse: "movi", isToMany: true)]),
                EntityDescription(name: "Review", relationships: [.init(name: "movie", destination: "Movie")]),
            ],
            code: .missingInverse, entityName: "Movie", propertyName: "reviews",
            messageFragment: "Did you mean 'movie'?"),
        InvalidSchemaCase(
            label: "inverse that points at another entity",
            entities: [
                EntityDescription(
                    name: "Person",
                    relationships: [.init(name: "pets", destination: "Pet", inverse: "owner", isToMany: true)]),
                EntityDescription(name: "Pet", relationships: [.init(name: "owner", destination: "Shelter")]),
                EntityDescription(name: "Shelter", attributes: [.init(name: "city", type: .string)]),
            ],
            code: .mismatchedInverse, entityName: "Person", propertyName: "pets", messageFragment: "Shelter"),
        InvalidSchemaCase(
            label: "inverse that names a different inverse",
            entities: [
                EntityDescription(
                    name: "Person",
                    relationships: [
                        .init(name: "pets", destination: "Pet", inverse: "owner", isToMany: true),
                        .init(name: "favorites", destination: "Pet", isToMany: true),
                    ]),
                EntityDescription(
                    name: "Pet", relationships: [.init(name: "owner", destination: "Person", inverse: "favorites")]),
            ],
            code: .mismatchedInverse, entityName: "Person", propertyName: "pets", messageFragment: "'favorites'"),
        InvalidSchemaCase(
            label: "ordered to-one relationship",
            entities: [
                EntityDescription(name: "Movie", relationships: [.init(name: "sequel", destination: "Movie", isOrdered: true)])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "sequel"),
        InvalidSchemaCase(
            label: "minimum count above maximum count",
            entities: [
                EntityDescription(
                    name: "Movie",
                    relationships: [
                        .init(name: "related", destination: "Movie", isToMany: true, minimumCount: 5, maximumCount: 2)
                    ])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "related"),

        // MARK: Constraints and indexes
        InvalidSchemaCase(
            label: "uniqueness constraint on an unknown attribute",
            entities: [
                EntityDescription(
                    name: "Book", attributes: [.init(name: "isbn", type: .string)], uniquenessConstraints: [["isnb"]])
            ],
            code: .unknownConstraintProperty, entityName: "Book", propertyName: "isnb",
            messageFragment: "Did you mean 'isbn'?"),
        InvalidSchemaCase(
            label: "uniqueness constraint on a to-many relationship",
            entities: [
                EntityDescription(
                    name: "Author", attributes: [.init(name: "name", type: .string)],
                    relationships: [.init(name: "books", destination: "Book", inverse: "author", isToMany: true)],
                    uniquenessConstraints: [["name", "books"]]),
                EntityDescription(name: "Book", relationships: [.init(name: "author", destination: "Author")]),
            ],
            code: .unknownConstraintProperty, entityName: "Author", propertyName: "books",
            messageFragment: "to-many"),
        InvalidSchemaCase(
            label: "empty uniqueness constraint",
            entities: [
                EntityDescription(name: "Book", attributes: [.init(name: "isbn", type: .string)], uniquenessConstraints: [[]])
            ],
            code: .unknownConstraintProperty, entityName: "Book", propertyName: nil),
        InvalidSchemaCase(
            label: "index on an unknown property",
            entities: [
                EntityDescription(
                    name: "Book", attributes: [.init(name: "title", type: .string)],
                    indexes: [IndexDescription(["title", "rating"])])
            ],
            code: .unknownConstraintProperty, entityName: "Book", propertyName: "rating", messageFragment: "by_title_rating"),
        InvalidSchemaCase(
            label: "uniqueness constraint on a transient attribute",
            entities: [
                EntityDescription(
                    name: "Book", attributes: [.init(name: "slug", type: .string, isTransient: true)],
                    uniquenessConstraints: [["slug"]])
            ],
            code: .unknownConstraintProperty, entityName: "Book", propertyName: "slug", messageFragment: "transient"),
        InvalidSchemaCase(
            label: "indexed transient attribute",
            entities: [
                EntityDescription(
                    name: "Book", attributes: [.init(name: "slug", type: .string, isTransient: true, isIndexed: true)])
            ],
            code: .unknownConstraintProperty, entityName: "Book", propertyName: "slug", messageFragment: "transient"),

        // MARK: Default values
        InvalidSchemaCase(
            label: "string default on an integer attribute",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "year", type: .integer32, defaultValue: "1999")])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "year", messageFragment: "String"),
        InvalidSchemaCase(
            label: "integer default outside Integer 16",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "year", type: .integer16, defaultValue: 40_000)])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "year", messageFragment: "40000"),
        InvalidSchemaCase(
            label: "fractional default on an integer attribute",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "year", type: .integer64, defaultValue: 2.5)])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "year"),
        InvalidSchemaCase(
            label: "malformed UUID string default",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "id", type: .uuid, defaultValue: "not-a-uuid")])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "id"),
        InvalidSchemaCase(
            label: "boolean default on a date attribute",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "released", type: .date, defaultValue: true)])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "released"),
        InvalidSchemaCase(
            label: "double default beyond Float's range",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "score", type: .float, defaultValue: 1e300)])],
            code: .invalidDefaultValue, entityName: "Movie", propertyName: "score"),

        // MARK: Validation rules
        InvalidSchemaCase(
            label: "minimum value above maximum value",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [
                        .init(name: "rating", type: .double, validation: ValidationRules(minimumValue: 10, maximumValue: 1))
                    ])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "rating", messageFragment: "above its maximum"),
        InvalidSchemaCase(
            label: "regular expression that does not compile",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "code", type: .string, validation: ValidationRules(pattern: "[A-Z"))])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "code", messageFragment: "[A-Z"),
        InvalidSchemaCase(
            label: "length rule on an integer attribute",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "year", type: .integer16, validation: ValidationRules(maximumLength: 4))])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "year", messageFragment: "no length"),
        InvalidSchemaCase(
            label: "minimum length above maximum length",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [
                        .init(name: "title", type: .string, validation: ValidationRules(minimumLength: 10, maximumLength: 3))
                    ])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "title"),
        InvalidSchemaCase(
            label: "pattern on an integer attribute",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "year", type: .integer16, validation: ValidationRules(pattern: "[0-9]+"))])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "year"),
        InvalidSchemaCase(
            label: "value bound on a string attribute",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "title", type: .string, validation: ValidationRules(minimumValue: "A"))])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "title"),
        InvalidSchemaCase(
            label: "string bound on a number attribute",
            entities: [
                EntityDescription(
                    name: "Movie",
                    attributes: [.init(name: "rating", type: .double, validation: ValidationRules(maximumValue: "ten"))])
            ],
            code: .invalidValidationRule, entityName: "Movie", propertyName: "rating"),

        // MARK: Configurations
        InvalidSchemaCase(
            label: "configuration lists an unknown entity",
            entities: [EntityDescription(name: "Movie", attributes: [.init(name: "title", type: .string)])],
            configurations: ["Cloud": ["Movie", "Movei"]],
            code: .unknownConfigurationEntity, entityName: "Movei", propertyName: nil,
            messageFragment: "Did you mean 'Movie'?"),
    ]
}

@Suite struct SchemaValidationTests {
    // MARK: - One problem per model

    @Test(arguments: InvalidSchemaCase.all)
    func reportsProblem(_ testCase: InvalidSchemaCase) throws {
        let details = problems(testCase.entities, configurations: testCase.configurations)
        #expect(details.map(\.code) == [testCase.code], "\(details)")
        let detail = try #require(details.first)
        #expect(detail.entityName == testCase.entityName)
        #expect(detail.propertyName == testCase.propertyName)
        #expect(!detail.message.isEmpty)
        #expect(detail.details.isEmpty)
        if let fragment = testCase.messageFragment {
            #expect(detail.message.contains(fragment), "\(detail.message)")
        }
    }

    @Test func unknownDestinationWithoutNearMissHasNoHint() throws {
        let details = problems([
            EntityDescription(name: "Movie", relationships: [.init(name: "studio", destination: "Xyzzy")]),
            EntityDescription(name: "Review", attributes: [.init(name: "stars", type: .integer16)]),
        ])
        let detail = try #require(details.first)
        #expect(details.map(\.code) == [.unknownDestination])
        #expect(detail.message.contains("'Xyzzy'"))
        #expect(!detail.message.contains("Did you mean"))
    }

    @Test func everyProblemIsReportedInOneError() throws {
        let details = problems(
            [
                EntityDescription(
                    name: "Movie",
                    attributes: [
                        .init(name: "objectID", type: .string),
                        .init(name: "year", type: .integer16, defaultValue: "soon"),
                        .init(name: "title", type: .string, validation: ValidationRules(pattern: "(")),
                    ],
                    relationships: [.init(name: "studio", destination: "Studo")],
                    uniquenessConstraints: [["imdbID"]]),
                EntityDescription(name: "Review", superentity: "Post"),
            ],
            configurations: ["Local": ["Reviews"]])
        let found = details.map { "\($0.code)|\($0.entityName ?? "-")|\($0.propertyName ?? "-")" }
        #expect(
            Set(found) == [
                "reservedName|Movie|objectID",
                "invalidDefaultValue|Movie|year",
                "invalidValidationRule|Movie|title",
                "unknownDestination|Movie|studio",
                "unknownConstraintProperty|Movie|imdbID",
                "unknownSuperentity|Review|-",
                "unknownConfigurationEntity|Reviews|-",
            ])
        #expect(details.count == 7)
    }

    @Test func invalidSchemaErrorDescriptionListsEveryProblem() {
        do {
            _ = try Schema([
                EntityDescription(name: "Movie", attributes: [.init(name: "self", type: .string)]),
                EntityDescription(name: "Movie"),
            ])
            Issue.record("Expected an invalid schema")
        } catch let error as StrataError {
            #expect(error.code == .invalidSchema)
            #expect(error.message.hasPrefix("The schema has 2 problems:"))
            #expect(error.description.contains("[reservedName]"))
            #expect(error.description.contains("[duplicateName]"))
        } catch {
            Issue.record("Unexpected error \(error)")
        }
    }

    @Test func validSchemaHasNoProblems() throws {
        let schema = try Schema(
            [
                EntityDescription(
                    name: "Movie",
                    attributes: [
                        .init(name: "id", type: .uuid),
                        .init(name: "privateNote", type: .string, isOptional: true),
                        .init(name: "title", type: .string, defaultValue: "", validation: ValidationRules(maximumLength: 200)),
                        .init(name: "rating", type: .double, validation: ValidationRules(minimumValue: 0, maximumValue: 10)),
                    ],
                    relationships: [.init(name: "reviews", destination: "Review", inverse: "movie", isToMany: true)],
                    uniquenessConstraints: [["id"]]),
                EntityDescription(name: "Review", relationships: [.init(name: "movie", destination: "Movie", inverse: "reviews")]),
            ],
            configurations: ["Cloud": ["Movie"]])
        #expect(schema.entities.map(\.name) == ["Movie", "Review"])
        #expect(schema.warnings.isEmpty)
        #expect(schema.entities(inConfiguration: "Cloud").map(\.name) == ["Movie"])
        #expect(schema.entities(inConfiguration: Schema.defaultConfigurationName).map(\.name) == ["Movie", "Review"])
    }

    // MARK: - Inverses

    @Test func inverseNamedOnOneSideIsAdoptedByTheOther() throws {
        let schema = try Schema([
            EntityDescription(name: "Person", relationships: [.init(name: "pets", destination: "Pet", inverse: "owner", isToMany: true)]),
            EntityDescription(name: "Pet", relationships: [.init(name: "owner", destination: "Person")]),
        ])
        #expect(schema.entity(named: "Pet")?.relationship(named: "owner")?.inverseName == "pets")
        #expect(schema.entity(named: "Person")?.relationship(named: "pets")?.inverseName == "owner")
        #expect(schema.warnings.isEmpty)
        // The declaration keeps what was written.
        #expect(schema.entity(named: "Pet")?.declaration.relationships.first?.inverseName == nil)
    }

    @Test func inverseNamedOnNeitherSideIsInferredForAUniquePair() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Person",
                relationships: [
                    .init(name: "pets", destination: "Pet", isToMany: true),
                    .init(name: "home", destination: "House"),
                ]),
            EntityDescription(name: "Pet", relationships: [.init(name: "owner", destination: "Person")]),
            EntityDescription(name: "House", relationships: [.init(name: "residents", destination: "Person", isToMany: true)]),
        ])
        #expect(schema.entity(named: "Person")?.relationship(named: "pets")?.inverseName == "owner")
        #expect(schema.entity(named: "Pet")?.relationship(named: "owner")?.inverseName == "pets")
        #expect(schema.entity(named: "Person")?.relationship(named: "home")?.inverseName == "residents")
        #expect(schema.entity(named: "House")?.relationship(named: "residents")?.inverseName == "home")
        #expect(schema.warnings.isEmpty)
    }

    @Test func inferenceSkipsRelationshipsAlreadyPairedByName() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Person",
                relationships: [
                    .init(name: "pets", destination: "Pet", inverse: "owner", isToMany: true),
                    .init(name: "formerPets", destination: "Pet", isToMany: true),
                ]),
            EntityDescription(
                name: "Pet",
                relationships: [
                    .init(name: "owner", destination: "Person"),
                    .init(name: "previousOwner", destination: "Person"),
                ]),
        ])
        let person = try #require(schema.entity(named: "Person"))
        let pet = try #require(schema.entity(named: "Pet"))
        #expect(person.relationship(named: "formerPets")?.inverseName == "previousOwner")
        #expect(pet.relationship(named: "previousOwner")?.inverseName == "formerPets")
        #expect(pet.relationship(named: "owner")?.inverseName == "pets")
        #expect(schema.warnings.isEmpty)
    }

    @Test func ambiguousInverseIsLeftUnsetWithAWarning() throws {
        let schema = try Schema([
            EntityDescription(name: "Person", relationships: [.init(name: "pets", destination: "Pet", isToMany: true)]),
            EntityDescription(
                name: "Pet",
                relationships: [
                    .init(name: "owner", destination: "Person"),
                    .init(name: "vet", destination: "Person"),
                ]),
        ])
        #expect(schema.entity(named: "Person")?.relationship(named: "pets")?.inverseName == nil)
        #expect(schema.entity(named: "Pet")?.relationship(named: "owner")?.inverseName == nil)
        #expect(schema.entity(named: "Pet")?.relationship(named: "vet")?.inverseName == nil)
        let warning = try #require(schema.warnings.first { $0.hasPrefix("Person.pets") })
        #expect(warning.contains("several candidates"))
        #expect(warning.contains("owner, vet"))
        #expect(schema.warnings.contains { $0.hasPrefix("Pet.owner has no inverse") })
        #expect(schema.warnings.contains { $0.hasPrefix("Pet.vet has no inverse") })
        #expect(schema.warnings.count == 3)
    }

    @Test func oneWayRelationshipWarns() throws {
        let schema = try Schema([
            EntityDescription(name: "Movie", relationships: [.init(name: "poster", destination: "Image")]),
            EntityDescription(name: "Image", attributes: [.init(name: "bytes", type: .binaryData)]),
        ])
        #expect(schema.entity(named: "Movie")?.relationship(named: "poster")?.inverseName == nil)
        #expect(schema.warnings == ["Movie.poster has no inverse; the other side will not be kept in step."])
    }

    @Test func inverseMayPointAtASuperentity() throws {
        let schema = try Schema([
            EntityDescription(name: "Media", isAbstract: true, relationships: [.init(name: "library", destination: "Library")]),
            EntityDescription(name: "Book", superentity: "Media"),
            EntityDescription(
                name: "Library", relationships: [.init(name: "items", destination: "Media", inverse: "library", isToMany: true)]),
        ])
        let book = try #require(schema.entity(named: "Book"))
        #expect(book.relationship(named: "library")?.inverseName == "items")
        #expect(schema.entity(named: "Media")?.relationship(named: "library")?.inverseName == "items")
    }

    // MARK: - Inheritance

    @Test func subentitiesAndKindNamesCoverTheWholeTree() throws {
        let schema = try Schema([
            EntityDescription(name: "Graduate", superentity: "Student", attributes: [.init(name: "thesis", type: .string)]),
            EntityDescription(name: "Person", isAbstract: true, attributes: [.init(name: "name", type: .string)]),
            EntityDescription(name: "Teacher", superentity: "Person", attributes: [.init(name: "subject", type: .string)]),
            EntityDescription(name: "Student", superentity: "Person", attributes: [.init(name: "grade", type: .integer16)]),
        ])
        let person = try #require(schema.entity(named: "Person"))
        let student = try #require(schema.entity(named: "Student"))
        let graduate = try #require(schema.entity(named: "Graduate"))
        let teacher = try #require(schema.entity(named: "Teacher"))

        #expect(schema.entities.map(\.name) == ["Graduate", "Person", "Teacher", "Student"])
        #expect(person.subentityNames == ["Teacher", "Student"])
        #expect(student.subentityNames == ["Graduate"])
        #expect(graduate.subentityNames.isEmpty)
        #expect(person.kindNames == ["Person", "Student", "Graduate", "Teacher"])
        #expect(student.kindNames == ["Student", "Graduate"])
        #expect(graduate.kindNames == ["Graduate"])
        #expect(graduate.superentity === student)
        #expect(graduate.rootEntity === person)
        #expect(person.superentity == nil)
        #expect(graduate.isKind(of: person))
        #expect(!teacher.isKind(of: student))
        #expect(graduate.attributes.map(\.name) == ["name", "grade", "thesis"])
        #expect(graduate.attributeNumber(named: "thesis") == 2)
        #expect(graduate.declaration.attributes.map(\.name) == ["thesis"])
        #expect(person.isAbstract)
        #expect(schema.warnings.isEmpty)
    }

    @Test func abstractEntityWithoutSubentitiesWarns() throws {
        let schema = try Schema([EntityDescription(name: "Shape", isAbstract: true)])
        #expect(schema.warnings == ["Shape is abstract but has no subentities, so it can have no instances."])
    }

    // MARK: - Constraints and indexes

    @Test func uniquenessConstraintsAreInherited() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Account", attributes: [.init(name: "email", type: .string)], uniquenessConstraints: [["email"]]),
            EntityDescription(
                name: "Admin", superentity: "Account", attributes: [.init(name: "badge", type: .integer32)],
                uniquenessConstraints: [["badge", "email"]]),
        ])
        #expect(schema.entity(named: "Account")?.uniquenessConstraints == [["email"]])
        #expect(schema.entity(named: "Admin")?.uniquenessConstraints == [["email"], ["badge", "email"]])
    }

    @Test func constraintsAndIndexesMayUseInheritedAndToOneProperties() throws {
        let schema = try Schema([
            EntityDescription(name: "Item", attributes: [.init(name: "sku", type: .string)]),
            EntityDescription(
                name: "Shirt", superentity: "Item", attributes: [.init(name: "size", type: .string)],
                relationships: [.init(name: "brand", destination: "Brand", inverse: "shirts")],
                uniquenessConstraints: [["brand", "sku"]],
                indexes: [IndexDescription(name: "bySize", elements: [.init("size", ascending: false), .init("sku")])]),
            EntityDescription(name: "Brand", relationships: [.init(name: "shirts", destination: "Shirt", isToMany: true)]),
        ])
        let shirt = try #require(schema.entity(named: "Shirt"))
        #expect(shirt.uniquenessConstraints == [["brand", "sku"]])
        #expect(shirt.indexes.map(\.name) == ["bySize"])
        #expect(shirt.indexes.first?.elements.map(\.isAscending) == [false, true])
    }

    @Test func indexedAttributeAddsAnIndex() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Movie",
                attributes: [
                    .init(name: "title", type: .string, isIndexed: true),
                    .init(name: "year", type: .integer16),
                    .init(name: "studio", type: .string, isIndexed: true),
                ],
                indexes: [IndexDescription(["year", "title"])])
        ])
        let movie = try #require(schema.entity(named: "Movie"))
        #expect(movie.indexes.map(\.name) == ["by_year_title", "by_title", "by_studio"])
        #expect(movie.indexes.map { $0.elements.map(\.propertyName) } == [["year", "title"], ["title"], ["studio"]])
        #expect(movie.declaration.indexes.count == 1)
    }

    // MARK: - Defaults and bounds

    @Test func integerDefaultOnDoubleAttributeBecomesDouble() throws {
        let schema = try Schema([
            EntityDescription(name: "Movie", attributes: [.init(name: "rating", type: .double, defaultValue: 5)])
        ])
        let rating = try #require(schema.entity(named: "Movie")?.attribute(named: "rating"))
        #expect(rating.defaultValue == .double(5))
        #expect(schema.entityDescriptions.first?.attributes.first?.defaultValue == .double(5))
    }

    struct DefaultConversion: Sendable, CustomTestStringConvertible {
        var type: AttributeType
        var written: AttributeValue
        var stored: AttributeValue
        var testDescription: String { "\(written.kindName) \(written) as \(type)" }
    }

    @Test(arguments: [
        DefaultConversion(type: .double, written: .integer(-3), stored: .double(-3)),
        DefaultConversion(type: .float, written: .integer(7), stored: .float(7)),
        DefaultConversion(type: .float, written: .double(0.5), stored: .float(0.5)),
        DefaultConversion(type: .decimal, written: .integer(12), stored: .decimal(12)),
        DefaultConversion(type: .decimal, written: .double(0.1), stored: .decimal(Decimal(string: "0.1")!)),
        DefaultConversion(type: .integer16, written: .double(42), stored: .integer(42)),
        DefaultConversion(type: .integer16, written: .integer(-32768), stored: .integer(-32768)),
        DefaultConversion(type: .uri, written: .string("https://example.com/a"), stored: .url(URL(string: "https://example.com/a")!)),
        DefaultConversion(
            type: .uuid, written: .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
            stored: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        DefaultConversion(type: .string, written: .string("x"), stored: .string("x")),
    ])
    func defaultValueIsConvertedToTheAttributeType(_ conversion: DefaultConversion) throws {
        let schema = try Schema([
            EntityDescription(
                name: "Thing", attributes: [.init(name: "value", type: conversion.type, defaultValue: conversion.written)])
        ])
        let value = try #require(schema.entity(named: "Thing")?.attribute(named: "value")?.defaultValue)
        #expect(value == conversion.stored)
        #expect(value.matches(conversion.type))
    }

    @Test func validationBoundsAreConvertedToTheAttributeType() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Movie",
                attributes: [
                    .init(name: "rating", type: .double, validation: ValidationRules(minimumValue: 0, maximumValue: 10)),
                    .init(name: "price", type: .decimal, validation: ValidationRules(minimumValue: 0.25)),
                ])
        ])
        let movie = try #require(schema.entity(named: "Movie"))
        #expect(movie.attribute(named: "rating")?.validation.minimumValue == .double(0))
        #expect(movie.attribute(named: "rating")?.validation.maximumValue == .double(10))
        #expect(movie.attribute(named: "price")?.validation.minimumValue == .decimal(Decimal(string: "0.25")!))
    }

    @Test func equalBoundsAndDateBoundsAreAccepted() throws {
        let early = Date(timeIntervalSince1970: 0)
        let late = Date(timeIntervalSince1970: 1_000)
        let schema = try Schema([
            EntityDescription(
                name: "Event",
                attributes: [
                    .init(name: "count", type: .integer32, validation: ValidationRules(minimumValue: 3, maximumValue: 3)),
                    .init(name: "at", type: .date, validation: ValidationRules(minimumValue: .date(early), maximumValue: .date(late))),
                ])
        ])
        #expect(schema.entity(named: "Event")?.attribute(named: "at")?.validation.maximumValue == .date(late))
    }

    @Test func dateBoundsInTheWrongOrderAreRejected() throws {
        let details = problems([
            EntityDescription(
                name: "Event",
                attributes: [
                    .init(
                        name: "at", type: .date,
                        validation: ValidationRules(
                            minimumValue: .date(Date(timeIntervalSince1970: 1_000)),
                            maximumValue: .date(Date(timeIntervalSince1970: 0))))
                ])
        ])
        #expect(details.map(\.code) == [.invalidValidationRule])
        #expect(details.first?.propertyName == "at")
    }
}
