import StrataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Each test passes the expected expanded source in full. For a final class, or a declaration
/// that is not a class, it is the original without its macro attributes, which proves that
/// `@Entity` generated no member, accessor or extension once it reported an error. A class that
/// is not final may be subclassed, and the compiler crashes on a subclass when a conformance
/// the macro declares is missing: such a class gets its conformances and empty stand-ins, and
/// nothing else (see "Classes that may be subclassed" below).
@Suite("@Entity diagnostics")
struct EntityMacroDiagnosticsTests {
    // MARK: The declaration

    @Test("@Entity on a struct offers to make it a final class")
    func onStruct() {
        assertExpansion(
            """
            @Entity struct Movie {
                var title: String = ""
            }
            """,
            expandedSource: """
                struct Movie {
                    var title: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity applies to classes; a struct cannot be a managed object.",
                    line: 1, column: 1, severity: .error,
                    fixIts: [FixItSpec(message: "Make it a final class inheriting from ManagedObject")])
            ],
            fixedSource: """
                @Entity final class Movie: ManagedObject {
                    var title: String = ""
                }
                """)
    }

    @Test("@Entity on a struct with conformances keeps them after ManagedObject")
    func onStructWithConformances() {
        assertExpansion(
            """
            @Entity struct Movie: Codable {
                var title: String = ""
            }
            """,
            expandedSource: """
                struct Movie: Codable {
                    var title: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity applies to classes; a struct cannot be a managed object.",
                    line: 1, column: 1, severity: .error,
                    fixIts: [FixItSpec(message: "Make it a final class inheriting from ManagedObject")])
            ],
            fixedSource: """
                @Entity final class Movie: ManagedObject, Codable {
                    var title: String = ""
                }
                """)
    }

    @Test("@Entity on an enum")
    func onEnum() {
        assertExpansion(
            """
            @Entity enum Genre {
                case drama
            }
            """,
            expandedSource: """
                enum Genre {
                    case drama
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity applies to classes; an enum cannot be a managed object.",
                    line: 1, column: 1, severity: .error)
            ])
    }

    @Test("@Entity on an actor")
    func onActor() {
        assertExpansion(
            """
            @Entity actor Counter {
                var count: Int = 0
            }
            """,
            expandedSource: """
                actor Counter {
                    var count: Int = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity applies to classes; an actor cannot be a managed object.",
                    line: 1, column: 1, severity: .error)
            ])
    }

    @Test("A class that is neither final nor marked for subclassing")
    func notFinal() {
        assertExpansion(
            """
            @Entity class Movie: ManagedObject {
                var title: String = ""
            }
            """,
            expandedSource: """
                class Movie: ManagedObject {
                    var title: String = ""

                    /// Stands in, empty, until the errors `@Entity` reported on `Movie` are fixed.
                    struct Value: Sendable, Hashable, Codable {
                        init() {
                        }
                    }

                    static func __strata_Movie_keyPathNames<Root: Movie>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    static func __strata_Movie_optionalKeyPathNames<Root: Movie>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    func __strata_Movie_makeValue() -> Movie.Value {
                        Movie.Value()
                    }

                    func __strata_Movie_update(from value: Movie.Value) throws {
                    }

                    var value: Value {
                        __strata_Movie_makeValue()
                    }

                    func update(from value: Value) throws {
                    }
                }

                extension Movie: PersistentModel, ValueSnapshotRepresentable {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Entity class 'Movie' must be final; mark it @Entity(.inheritable) or @Entity(.abstract) if other entities inherit from it.",
                    line: 1, column: 9, severity: .error,
                    fixIts: [FixItSpec(message: "Add 'final'"), FixItSpec(message: "Mark it @Entity(.inheritable)")])
            ],
            applyFixIts: ["Add 'final'"],
            fixedSource: """
                @Entity final class Movie: ManagedObject {
                    var title: String = ""
                }
                """)
    }

    /// A literal port of Core Data's `class Student: Person` leaves the parent without `final`
    /// and without an option; the second fix-it makes it a parent entity.
    @Test("A class that is neither final nor marked for subclassing can be marked inheritable")
    func notFinalMarkedInheritable() {
        assertExpansion(
            """
            @Entity class Person: ManagedObject {
                var name: String = ""
            }
            """,
            expandedSource: """
                class Person: ManagedObject {
                    var name: String = ""

                    /// Stands in, empty, until the errors `@Entity` reported on `Person` are fixed.
                    struct Value: Sendable, Hashable, Codable {
                        init() {
                        }
                    }

                    static func __strata_Person_keyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    static func __strata_Person_optionalKeyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    func __strata_Person_makeValue() -> Person.Value {
                        Person.Value()
                    }

                    func __strata_Person_update(from value: Person.Value) throws {
                    }

                    var value: Value {
                        __strata_Person_makeValue()
                    }

                    func update(from value: Value) throws {
                    }
                }

                extension Person: PersistentModel, ValueSnapshotRepresentable {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Entity class 'Person' must be final; mark it @Entity(.inheritable) or @Entity(.abstract) if other entities inherit from it.",
                    line: 1, column: 9, severity: .error,
                    fixIts: [FixItSpec(message: "Add 'final'"), FixItSpec(message: "Mark it @Entity(.inheritable)")])
            ],
            applyFixIts: ["Mark it @Entity(.inheritable)"],
            fixedSource: """
                @Entity(.inheritable) class Person: ManagedObject {
                    var name: String = ""
                }
                """)
    }

    @Test("A class without a superclass")
    func missingSuperclass() {
        assertExpansion(
            """
            @Entity final class Movie {
                var title: String = ""
            }
            """,
            expandedSource: """
                final class Movie {
                    var title: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity class 'Movie' must inherit from ManagedObject or from another @Entity class.",
                    line: 1, column: 21, severity: .error,
                    fixIts: [FixItSpec(message: "Inherit from ManagedObject")])
            ],
            fixedSource: """
                @Entity final class Movie: ManagedObject {
                    var title: String = ""
                }
                """)
    }

    @Test("A class that only conforms to protocols gets ManagedObject first")
    func missingSuperclassWithConformances() {
        assertExpansion(
            """
            @Entity final class Movie: Identifiable {
                var title: String = ""
            }
            """,
            expandedSource: """
                final class Movie: Identifiable {
                    var title: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Entity class 'Movie' must inherit from ManagedObject or from another @Entity class.",
                    line: 1, column: 21, severity: .error,
                    fixIts: [FixItSpec(message: "Inherit from ManagedObject")])
            ],
            fixedSource: """
                @Entity final class Movie: ManagedObject, Identifiable {
                    var title: String = ""
                }
                """)
    }

    // MARK: Properties

    @Test("A 'let' property")
    func letProperty() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                let title: String = ""
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    let title: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'title' is a 'let'; @Entity properties must be 'var' so that fetched objects can be filled in.",
                    line: 2, column: 5, severity: .error,
                    fixIts: [FixItSpec(message: "Replace 'let' with 'var'")])
            ],
            fixedSource: """
                @Entity final class Movie: ManagedObject {
                    var title: String = ""
                }
                """)
    }

    @Test("A property without a type annotation")
    func missingType() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                var title = ""
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var title = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'title' needs an explicit type: @Entity reads the type to choose how the property is stored.",
                    line: 2, column: 9, severity: .error)
            ])
    }

    struct UnsupportedType: Sendable, CustomTestStringConvertible {
        var type: String
        var hint: String
        var testDescription: String { type }
    }

    @Test(
        "Types Strata cannot store",
        arguments: [
            UnsupportedType(type: "UInt8", hint: " Use Int16, Int32, Int64 or Int."),
            UnsupportedType(type: "UInt64?", hint: " Use Int16, Int32, Int64 or Int."),
            UnsupportedType(type: "(Int, Int)", hint: ""),
            UnsupportedType(type: "() -> Void", hint: ""),
            UnsupportedType(type: "Any", hint: ""),
            UnsupportedType(type: "any Error", hint: ""),
        ])
    func unsupportedType(_ unsupported: UnsupportedType) {
        assertExpansion(
            """
            @Entity final class Gadget: ManagedObject {
                var field: \(unsupported.type)
            }
            """,
            expandedSource: """
                final class Gadget: ManagedObject {
                    var field: \(unsupported.type)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'field' has the type \(unsupported.type), which Strata cannot store.\(unsupported.hint)",
                    line: 2, column: 16, severity: .error)
            ])
    }

    @Test("Every unsupported property of a class is reported")
    func severalUnsupportedTypes() {
        assertExpansion(
            """
            @Entity final class Gadget: ManagedObject {
                var flags: UInt8 = 0
                var title: String = ""
                var size: (Int, Int) = (0, 0)
            }
            """,
            expandedSource: """
                final class Gadget: ManagedObject {
                    var flags: UInt8 = 0
                    var title: String = ""
                    var size: (Int, Int) = (0, 0)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'flags' has the type UInt8, which Strata cannot store. Use Int16, Int32, Int64 or Int.",
                    line: 2, column: 16, severity: .error),
                DiagnosticSpec(
                    message: "'size' has the type (Int, Int), which Strata cannot store.",
                    line: 4, column: 15, severity: .error),
            ])
    }

    @Test("A non-optional Codable property without an initial value")
    func codableWithoutInitialValue() {
        assertExpansion(
            """
            @Entity final class Place: ManagedObject {
                var location: Location
            }
            """,
            expandedSource: """
                final class Place: ManagedObject {
                    var location: Location
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'location' stores a Codable Location and needs an initial value (or an optional type), which it reads as when nothing is stored.",
                    line: 2, column: 9, severity: .error)
            ])
    }

    @Test("Names ManagedObject already uses", arguments: ["value", "objectID"])
    func reservedName(_ name: String) {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                var \(name): Int = 0
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var \(name): Int = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'\(name)' is reserved by Strata on managed objects; rename the property.",
                    line: 2, column: 9, severity: .error)
            ])
    }

    @Test("A property with observers")
    func propertyObservers() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                var title: String = "" {
                    didSet { print(title) }
                }
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var title: String = "" {
                        didSet { print(title) }
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'title' has property observers; @Entity properties cannot, use a computed property or @Transient.",
                    line: 2, column: 28, severity: .error)
            ])
    }

    @Test("Several properties in one declaration")
    func multipleBindings() {
        assertExpansion(
            """
            @Entity final class Point: ManagedObject {
                var x: Double = 0, y: Double = 0
                var (width, height): (Double, Double) = (0, 0)
            }
            """,
            expandedSource: """
                final class Point: ManagedObject {
                    var x: Double = 0, y: Double = 0
                    var (width, height): (Double, Double) = (0, 0)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'x', 'y' must be declared one per 'var': @Entity turns each stored property into accessors of its own.",
                    line: 2, column: 5, severity: .error),
                DiagnosticSpec(
                    message:
                        "'(width, height)' must be declared one per 'var': @Entity turns each stored property into accessors of its own.",
                    line: 3, column: 5, severity: .error),
            ])
    }

    // MARK: Relationships and constraints

    @Test("A non-optional to-one relationship")
    func nonOptionalToOne() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                @Relationship var director: Person
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var director: Person
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'director' is a to-one relationship and must be optional ('Person?'): the related object may not exist yet.",
                    line: 2, column: 33, severity: .error)
            ])
    }

    @Test("Two relationships naming the same inverse")
    func ambiguousInverse() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                @Relationship(inverse: \\Person.directed) var director: Person?
                @Relationship(inverse: \\Person.directed) var producer: Person?
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var director: Person?
                    var producer: Person?
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'producer' and 'director' both name Person.directed as their inverse; a relationship has one inverse, so pair Person.directed with one of them.",
                    line: 3, column: 50, severity: .error)
            ])
    }

    @Test("#Unique with an element that is not a key path")
    func uniqueWithoutKeyPath() {
        assertExpansion(
            """
            @Entity final class Person: ManagedObject {
                var name: String = ""

                #Unique<Person>([\\.name, "email"])
            }
            """,
            expandedSource: """
                final class Person: ManagedObject {
                    var name: String = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "#Unique takes key paths to stored properties, like \\.title.",
                    line: 4, column: 30, severity: .error)
            ])
    }

    // MARK: Classes that may be subclassed

    /// A parent entity with an error still gets the conformance its macro declares
    /// (PersistentModel only, for `@Entity(.inheritable)`) and the members its subclasses'
    /// generated code uses, empty: the compiler crashes on a subclass without the former, and
    /// the subclass would fail on the latter's absence.
    @Test("An inheritable class with an error gets its conformance and empty stand-ins")
    func inheritableWithError() {
        assertExpansion(
            """
            @Entity(.inheritable) public class Person: ManagedObject {
                let name: String = ""
            }
            """,
            expandedSource: """
                public class Person: ManagedObject {
                    let name: String = ""

                    /// Stands in, empty, until the errors `@Entity` reported on `Person` are fixed.
                    public struct Value: Sendable, Hashable, Codable {
                        public init() {
                        }
                    }

                    static func __strata_Person_keyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    static func __strata_Person_optionalKeyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        []
                    }

                    public func __strata_Person_makeValue() -> Person.Value {
                        Person.Value()
                    }

                    public func __strata_Person_update(from value: Person.Value) throws {
                    }
                }

                extension Person: PersistentModel {
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'name' is a 'let'; @Entity properties must be 'var' so that fetched objects can be filled in.",
                    line: 2, column: 5, severity: .error,
                    fixIts: [FixItSpec(message: "Replace 'let' with 'var'")])
            ],
            fixedSource: """
                @Entity(.inheritable) public class Person: ManagedObject {
                    var name: String = ""
                }
                """)
    }
}
