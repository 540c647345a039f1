import StrataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@_PersistedProperty` on its own, with the arguments `@Entity` would give it.
@Suite("@_PersistedProperty expansion")
struct PersistedPropertyMacroTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var testDescription: String
        /// The property with its `@_PersistedProperty` attribute.
        var source: String
        /// The `get` and `set` accessors expected for it.
        var accessors: String
    }

    static let cases: [Case] = [
        Case(
            testDescription: "attribute",
            source: #"@_PersistedProperty("attribute", "3", "String") var title: String"#,
            accessors: """
                get {
                    _attributeValue(at: 3, as: (String).self)
                }
                set {
                    _setAttributeValue(newValue, at: 3)
                }
                """),
        Case(
            testDescription: "optional attribute",
            source: #"@_PersistedProperty("attribute", "0", "Date") var releaseDate: Date?"#,
            accessors: """
                get {
                    _attributeValue(at: 0, as: (Date?).self)
                }
                set {
                    _setAttributeValue(newValue, at: 0)
                }
                """),
        Case(
            testDescription: "attribute of a subentity",
            source: #"@_PersistedProperty("attribute", "Car.__strata_Car_attributeBase + 1", "Int16") var seats: Int16"#,
            accessors: """
                get {
                    _attributeValue(at: Car.__strata_Car_attributeBase + 1, as: (Int16).self)
                }
                set {
                    _setAttributeValue(newValue, at: Car.__strata_Car_attributeBase + 1)
                }
                """),
        Case(
            testDescription: "codable",
            source: #"@_PersistedProperty("codable", "2", "Location") var location: Location"#,
            accessors: """
                get {
                    _codableValue(at: 2, fallback: preconditionFailure())
                }
                set {
                    _setCodableValue(newValue, at: 2)
                }
                """),
        Case(
            testDescription: "optional codable",
            source: #"@_PersistedProperty("codableOptional", "4", "Location") var previous: Location?"#,
            accessors: """
                get {
                    _codableValue(at: 4)
                }
                set {
                    _setCodableValue(newValue, at: 4)
                }
                """),
        Case(
            testDescription: "to-one",
            source: #"@_PersistedProperty("toOne", "1", "Person") var director: Person?"#,
            accessors: """
                get {
                    _toOneValue(at: 1, as: Person.self)
                }
                set {
                    _setToOne(newValue, at: 1)
                }
                """),
        Case(
            testDescription: "to-many set",
            source: #"@_PersistedProperty("toManySet", "0", "Review") var reviews: Set<Review>"#,
            accessors: """
                get {
                    _toManySet(at: 0, as: Review.self)
                }
                set {
                    _setToMany(newValue, at: 0)
                }
                """),
        Case(
            testDescription: "to-many array",
            source: #"@_PersistedProperty("toManyArray", "2", "Person") var cast: [Person]"#,
            accessors: """
                get {
                    _toManyArray(at: 2, as: Person.self)
                }
                set {
                    _setToMany(newValue, at: 2)
                }
                """),
    ]

    @Test("Without an initial value there is no init accessor", arguments: cases)
    func withoutInitialValue(_ testCase: Case) {
        let declaration = testCase.source.split(separator: ") ", maxSplits: 1)[1]
        assertExpansion(
            testCase.source,
            expandedSource: """
                \(declaration) {
                \(indented(testCase.accessors))
                }
                """,
            macroSpecs: persistedPropertyMacroSpecs)
    }

    /// Initial values by kind; the codable getter falls back to it.
    static let initializedCases: [Case] = [
        Case(
            testDescription: "attribute",
            source: #"@_PersistedProperty("attribute", "3", "String") var title: String = "Untitled""#,
            accessors: """
                get {
                    _attributeValue(at: 3, as: (String).self)
                }
                set {
                    _setAttributeValue(newValue, at: 3)
                }
                """),
        Case(
            testDescription: "codable",
            source:
                #"@_PersistedProperty("codable", "2", "Location") var location: Location = Location(latitude: 1, longitude: 2)"#,
            accessors: """
                get {
                    _codableValue(at: 2, fallback: Location(latitude: 1, longitude: 2))
                }
                set {
                    _setCodableValue(newValue, at: 2)
                }
                """),
        Case(
            testDescription: "optional codable",
            source: #"@_PersistedProperty("codableOptional", "4", "Location") var previous: Location? = nil"#,
            accessors: """
                get {
                    _codableValue(at: 4)
                }
                set {
                    _setCodableValue(newValue, at: 4)
                }
                """),
        Case(
            testDescription: "to-one",
            source: #"@_PersistedProperty("toOne", "1", "Person") var director: Person? = nil"#,
            accessors: """
                get {
                    _toOneValue(at: 1, as: Person.self)
                }
                set {
                    _setToOne(newValue, at: 1)
                }
                """),
        Case(
            testDescription: "to-many set",
            source: #"@_PersistedProperty("toManySet", "0", "Review") var reviews: Set<Review> = []"#,
            accessors: """
                get {
                    _toManySet(at: 0, as: Review.self)
                }
                set {
                    _setToMany(newValue, at: 0)
                }
                """),
        Case(
            testDescription: "to-many array",
            source: #"@_PersistedProperty("toManyArray", "2", "Person") var cast: [Person] = []"#,
            accessors: """
                get {
                    _toManyArray(at: 2, as: Person.self)
                }
                set {
                    _setToMany(newValue, at: 2)
                }
                """),
    ]

    @Test("An initial value adds an init accessor", arguments: initializedCases)
    func withInitialValue(_ testCase: Case) {
        // The test expansion drops the initializer that the compiler keeps for the init accessor.
        let declaration = testCase.source.split(separator: ") ", maxSplits: 1)[1].split(separator: " = ", maxSplits: 1)[0]
        assertExpansion(
            testCase.source,
            expandedSource: """
                \(declaration) {
                    init(initialValue) {
                    }
                \(indented(testCase.accessors))
                }
                """,
            macroSpecs: persistedPropertyMacroSpecs)
    }

    @Test("An unknown kind or a missing argument leaves the property stored")
    func malformedArguments() {
        assertExpansion(
            #"""
            @_PersistedProperty("relationship", "0", "Person") var director: Person?
            @_PersistedProperty("attribute", "0") var title: String
            """#,
            expandedSource: """
                var director: Person?
                var title: String
                """,
            macroSpecs: persistedPropertyMacroSpecs)
    }

    private func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }
}
