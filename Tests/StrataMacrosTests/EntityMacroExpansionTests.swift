import StrataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Whole expansions, compared line by line. (The test expansion drops an initializer such as
/// `= ""` once `@_PersistedProperty` makes the property computed; the compiler keeps it for the
/// `init` accessor.)
@Suite("@Entity expansion")
struct EntityMacroExpansionTests {
    @Test("A final root entity with plain attributes")
    func rootEntity() {
        assertExpansion(
            """
            @Entity final class Note: ManagedObject {
                var title: String = ""
                var priority: Int16 = 1
                var dueDate: Date?
                var id: UUID = UUID()
            }
            """,
            expandedSource: """
                final class Note: ManagedObject {
                    var title: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var priority: Int16 {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 1, as: (Int16).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 1)
                        }
                    }
                    var dueDate: Date? {
                        get {
                            _attributeValue(at: 2, as: (Date?).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 2)
                        }
                    }
                    var id: UUID {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 3, as: (UUID).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 3)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Note",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "title", type: (String).attributeType, isOptional: false, defaultValue: ""),
                                AttributeDescription(name: "priority", type: (Int16).attributeType, isOptional: false, defaultValue: 1),
                                AttributeDescription(name: "dueDate", type: (Date).attributeType, isOptional: true),
                                AttributeDescription(name: "id", type: (UUID).attributeType, isOptional: false)
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Note")
                    }

                    private static let __strata_Note_entity = Schema._defaultEntity(for: Note.self)

                    override class var entity: Entity {
                        __strata_Note_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Note_keyPathNames<Root: Note>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.title, "title"), (\\Root.priority, "priority"), (\\Root.dueDate, "dueDate"), (\\Root.id, "id")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Note_keyPathNames(Note.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Note_keyPathNames(Note.self)
                    }

                    static func __strata_Note_optionalKeyPathNames<Root: Note>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.title, "title"), (\\Root?.?.priority, "priority"), (\\Root?.?.dueDate, "dueDate"), (\\Root?.?.id, "id")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Note_optionalKeyPathNames(Note.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()
                        self.id = UUID()
                    }

                    /// A `Sendable` snapshot of a `Note`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var title: String
                        var priority: Int16
                        var dueDate: Date?
                        var id: UUID

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Note

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, title: String = "", priority: Int16 = 1, dueDate: Date? = nil, id: UUID = UUID()) {
                            self.objectID = objectID
                            self.title = title
                            self.priority = priority
                            self.dueDate = dueDate
                            self.id = id
                        }
                    }

                    func __strata_Note_makeValue() -> Note.Value {
                        Note.Value(objectID: objectID, title: self.title, priority: self.priority, dueDate: self.dueDate, id: self.id)
                    }

                    func __strata_Note_update(from value: Note.Value) throws {
                        self.title = value.title
                        self.priority = value.priority
                        self.dueDate = value.dueDate
                        self.id = value.id
                    }

                    var value: Value {
                        __strata_Note_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Note_update(from: value)
                    }
                }

                extension Note: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("@Attribute options and validation are forwarded to the description")
    func attributeOptions() {
        assertExpansion(
            """
            @Entity final class Book: ManagedObject {
                @Attribute(originalName: "name", minimumLength: 1, maximumLength: 200) var title: String = ""
                @Attribute(minimumValue: 0, maximumValue: 10) var rating: Double = 0
                @Attribute(.externalStorage, .preserveValueOnDeletion) var cover: Data?
            }
            """,
            expandedSource: """
                final class Book: ManagedObject {
                    var title: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var rating: Double {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 1, as: (Double).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 1)
                        }
                    }
                    var cover: Data? {
                        get {
                            _attributeValue(at: 2, as: (Data?).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 2)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Book",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "title", type: (String).attributeType, isOptional: false, defaultValue: "")._applying(originalName: "name", minimumLength: 1, maximumLength: 200),
                                AttributeDescription(name: "rating", type: (Double).attributeType, isOptional: false, defaultValue: 0)._applying(minimumValue: 0, maximumValue: 10),
                                AttributeDescription(name: "cover", type: (Data).attributeType, isOptional: true)._applying(.externalStorage, .preserveValueOnDeletion)
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Book")
                    }

                    private static let __strata_Book_entity = Schema._defaultEntity(for: Book.self)

                    override class var entity: Entity {
                        __strata_Book_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Book_keyPathNames<Root: Book>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.title, "title"), (\\Root.rating, "rating"), (\\Root.cover, "cover")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Book_keyPathNames(Book.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Book_keyPathNames(Book.self)
                    }

                    static func __strata_Book_optionalKeyPathNames<Root: Book>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.title, "title"), (\\Root?.?.rating, "rating"), (\\Root?.?.cover, "cover")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Book_optionalKeyPathNames(Book.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Book`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var title: String
                        var rating: Double
                        var cover: Data?

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Book

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, title: String = "", rating: Double = 0, cover: Data? = nil) {
                            self.objectID = objectID
                            self.title = title
                            self.rating = rating
                            self.cover = cover
                        }
                    }

                    func __strata_Book_makeValue() -> Book.Value {
                        Book.Value(objectID: objectID, title: self.title, rating: self.rating, cover: self.cover)
                    }

                    func __strata_Book_update(from value: Book.Value) throws {
                        self.title = value.title
                        self.rating = value.rating
                        self.cover = value.cover
                    }

                    var value: Value {
                        __strata_Book_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Book_update(from: value)
                    }
                }

                extension Book: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("Unique attributes, #Unique and #Index")
    func constraints() {
        assertExpansion(
            """
            @Entity final class Person: ManagedObject {
                @Attribute(.unique) var email: String = ""
                var givenName: String = ""
                var familyName: String = ""

                #Unique<Person>([\\.givenName, \\.familyName])
                #Index<Person>([\\.familyName], [\\.givenName, \\.familyName])
            }
            """,
            expandedSource: """
                final class Person: ManagedObject {
                    var email: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var givenName: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 1, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 1)
                        }
                    }
                    var familyName: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 2, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 2)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Person",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "email", type: (String).attributeType, isOptional: false, defaultValue: "")._applying(.unique),
                                AttributeDescription(name: "givenName", type: (String).attributeType, isOptional: false, defaultValue: ""),
                                AttributeDescription(name: "familyName", type: (String).attributeType, isOptional: false, defaultValue: "")
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [["email"], ["givenName", "familyName"]],
                            indexes: [IndexDescription(["familyName"]), IndexDescription(["givenName", "familyName"])],
                            managedObjectClassName: "Person")
                    }

                    private static let __strata_Person_entity = Schema._defaultEntity(for: Person.self)

                    override class var entity: Entity {
                        __strata_Person_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Person_keyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.email, "email"), (\\Root.givenName, "givenName"), (\\Root.familyName, "familyName")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Person_keyPathNames(Person.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Person_keyPathNames(Person.self)
                    }

                    static func __strata_Person_optionalKeyPathNames<Root: Person>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.email, "email"), (\\Root?.?.givenName, "givenName"), (\\Root?.?.familyName, "familyName")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Person_optionalKeyPathNames(Person.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Person`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var email: String
                        var givenName: String
                        var familyName: String

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Person

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, email: String = "", givenName: String = "", familyName: String = "") {
                            self.objectID = objectID
                            self.email = email
                            self.givenName = givenName
                            self.familyName = familyName
                        }
                    }

                    func __strata_Person_makeValue() -> Person.Value {
                        Person.Value(objectID: objectID, email: self.email, givenName: self.givenName, familyName: self.familyName)
                    }

                    func __strata_Person_update(from value: Person.Value) throws {
                        self.email = value.email
                        self.givenName = value.givenName
                        self.familyName = value.familyName
                    }

                    var value: Value {
                        __strata_Person_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Person_update(from: value)
                    }
                }

                extension Person: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("To-one, Set and Array relationships")
    func relationships() {
        assertExpansion(
            """
            @Entity final class Movie: ManagedObject {
                var title: String = ""
                @Relationship(deleteRule: .cascade, inverse: \\Review.movie) var reviews: Set<Review> = []
                @Relationship(inverse: \\Person.directed) var director: Person?
                @Relationship(deleteRule: .nullify, inverse: \\Person.actedIn) var cast: [Person] = []
                var studio: Studio?
            }
            """,
            expandedSource: """
                final class Movie: ManagedObject {
                    var title: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var reviews: Set<Review> {
                        init(initialValue) {
                        }
                        get {
                            _toManySet(at: 0, as: Review.self)
                        }
                        set {
                            _setToMany(newValue, at: 0)
                        }
                    }
                    var director: Person? {
                        get {
                            _toOneValue(at: 1, as: Person.self)
                        }
                        set {
                            _setToOne(newValue, at: 1)
                        }
                    }
                    var cast: [Person] {
                        init(initialValue) {
                        }
                        get {
                            _toManyArray(at: 2, as: Person.self)
                        }
                        set {
                            _setToMany(newValue, at: 2)
                        }
                    }
                    var studio: Studio? {
                        get {
                            _toOneValue(at: 3, as: Studio.self)
                        }
                        set {
                            _setToOne(newValue, at: 3)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Movie",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "title", type: (String).attributeType, isOptional: false, defaultValue: "")
                            ],
                            relationships: [
                                RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie", isToMany: true, isOrdered: false, isOptional: true)._applying(deleteRule: .cascade, inverse: \\Review.movie),
                                RelationshipDescription(name: "director", destination: "Person", inverse: "directed", isToMany: false, isOrdered: false, isOptional: true)._applying(inverse: \\Person.directed),
                                RelationshipDescription(name: "cast", destination: "Person", inverse: "actedIn", isToMany: true, isOrdered: true, isOptional: true)._applying(deleteRule: .nullify, inverse: \\Person.actedIn),
                                RelationshipDescription(name: "studio", destination: "Studio", inverse: nil, isToMany: false, isOrdered: false, isOptional: true)
                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Movie")
                    }

                    private static let __strata_Movie_entity = Schema._defaultEntity(for: Movie.self)

                    override class var entity: Entity {
                        __strata_Movie_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        [Review.self, Person.self, Studio.self]
                    }

                    static func __strata_Movie_keyPathNames<Root: Movie>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.title, "title"), (\\Root.reviews, "reviews"), (\\Root.director, "director"), (\\Root.cast, "cast"), (\\Root.studio, "studio")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Movie_keyPathNames(Movie.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Movie_keyPathNames(Movie.self)
                    }

                    static func __strata_Movie_optionalKeyPathNames<Root: Movie>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.title, "title"), (\\Root?.?.reviews, "reviews"), (\\Root?.?.director, "director"), (\\Root?.?.cast, "cast"), (\\Root?.?.studio, "studio")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Movie_optionalKeyPathNames(Movie.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Movie`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var title: String
                        var reviews: [ObjectID]
                        var director: ObjectID?
                        var cast: [ObjectID]
                        var studio: ObjectID?

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Movie

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, title: String = "", reviews: [ObjectID] = [], director: ObjectID? = nil, cast: [ObjectID] = [], studio: ObjectID? = nil) {
                            self.objectID = objectID
                            self.title = title
                            self.reviews = reviews
                            self.director = director
                            self.cast = cast
                            self.studio = studio
                        }
                    }

                    func __strata_Movie_makeValue() -> Movie.Value {
                        Movie.Value(objectID: objectID, title: self.title, reviews: _relatedObjectIDs(at: 0), director: _relatedObjectID(at: 1), cast: _relatedObjectIDs(at: 2), studio: _relatedObjectID(at: 3))
                    }

                    func __strata_Movie_update(from value: Movie.Value) throws {
                        self.title = value.title
                        try _updateToMany(value.reviews, at: 0)
                        try _updateToOne(value.director, at: 1)
                        try _updateToMany(value.cast, at: 2)
                        try _updateToOne(value.studio, at: 3)
                    }

                    var value: Value {
                        __strata_Movie_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Movie_update(from: value)
                    }
                }

                extension Movie: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("@Transient, computed, static and lazy properties are left alone")
    func untouchedProperties() {
        assertExpansion(
            """
            @Entity final class Counter: ManagedObject {
                var count: Int = 0
                @Transient var cache: [String: Int] = [:]
                var doubled: Int { count * 2 }
                var label: String {
                    get { "\\(count)" }
                    set { count = Int(newValue) ?? 0 }
                }
                static var instances: Int = 0
                lazy var formatter: Formatter = Formatter()
            }
            """,
            expandedSource: """
                final class Counter: ManagedObject {
                    var count: Int {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (Int).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var cache: [String: Int] = [:]
                    var doubled: Int { count * 2 }
                    var label: String {
                        get { "\\(count)" }
                        set { count = Int(newValue) ?? 0 }
                    }
                    static var instances: Int = 0
                    lazy var formatter: Formatter = Formatter()

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Counter",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "count", type: (Int).attributeType, isOptional: false, defaultValue: 0)
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Counter")
                    }

                    private static let __strata_Counter_entity = Schema._defaultEntity(for: Counter.self)

                    override class var entity: Entity {
                        __strata_Counter_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Counter_keyPathNames<Root: Counter>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.count, "count")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Counter_keyPathNames(Counter.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Counter_keyPathNames(Counter.self)
                    }

                    static func __strata_Counter_optionalKeyPathNames<Root: Counter>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.count, "count")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Counter_optionalKeyPathNames(Counter.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Counter`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var count: Int

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Counter

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, count: Int = 0) {
                            self.objectID = objectID
                            self.count = count
                        }
                    }

                    func __strata_Counter_makeValue() -> Counter.Value {
                        Counter.Value(objectID: objectID, count: self.count)
                    }

                    func __strata_Counter_update(from value: Counter.Value) throws {
                        self.count = value.count
                    }

                    var value: Value {
                        __strata_Counter_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Counter_update(from: value)
                    }
                }

                extension Counter: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("Codable properties")
    func codableProperties() {
        assertExpansion(
            """
            @Entity final class Place: ManagedObject {
                var location: Location = Location(latitude: 0, longitude: 0)
                @Attribute(.codable) var previous: Location?
                var tags: [String] = []
            }
            """,
            expandedSource: """
                final class Place: ManagedObject {
                    var location: Location {
                        init(initialValue) {
                        }
                        get {
                            _codableValue(at: 0, fallback: Location(latitude: 0, longitude: 0))
                        }
                        set {
                            _setCodableValue(newValue, at: 0)
                        }
                    }
                    var previous: Location? {
                        get {
                            _codableValue(at: 1)
                        }
                        set {
                            _setCodableValue(newValue, at: 1)
                        }
                    }
                    var tags: [String] {
                        init(initialValue) {
                        }
                        get {
                            _codableValue(at: 2, fallback: [])
                        }
                        set {
                            _setCodableValue(newValue, at: 2)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Place",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "location", type: .codable, isOptional: false, valueTypeName: "Location"),
                                AttributeDescription(name: "previous", type: .codable, isOptional: true, valueTypeName: "Location")._applying(.codable),
                                AttributeDescription(name: "tags", type: .codable, isOptional: false, valueTypeName: "[String]")
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Place")
                    }

                    private static let __strata_Place_entity = Schema._defaultEntity(for: Place.self)

                    override class var entity: Entity {
                        __strata_Place_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Place_keyPathNames<Root: Place>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.location, "location"), (\\Root.previous, "previous"), (\\Root.tags, "tags")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Place_keyPathNames(Place.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Place_keyPathNames(Place.self)
                    }

                    static func __strata_Place_optionalKeyPathNames<Root: Place>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.location, "location"), (\\Root?.?.previous, "previous"), (\\Root?.?.tags, "tags")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Place_optionalKeyPathNames(Place.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()
                        self.location = Location(latitude: 0, longitude: 0)
                        self.tags = []
                    }

                    /// A `Sendable` snapshot of a `Place`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var location: Location
                        var previous: Location?
                        var tags: [String]

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Place

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, location: Location = Location(latitude: 0, longitude: 0), previous: Location? = nil, tags: [String] = []) {
                            self.objectID = objectID
                            self.location = location
                            self.previous = previous
                            self.tags = tags
                        }
                    }

                    func __strata_Place_makeValue() -> Place.Value {
                        Place.Value(objectID: objectID, location: self.location, previous: self.previous, tags: self.tags)
                    }

                    func __strata_Place_update(from value: Place.Value) throws {
                        self.location = value.location
                        self.previous = value.previous
                        self.tags = value.tags
                    }

                    var value: Value {
                        __strata_Place_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Place_update(from: value)
                    }
                }

                extension Place: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("An abstract parent and a final subentity")
    func inheritance() {
        assertExpansion(
            """
            @Entity(.abstract) class Vehicle: ManagedObject {
                var wheels: Int = 4
                var owner: Person?
            }

            @Entity final class Car: Vehicle {
                var seats: Int16 = 5
                var drivers: Set<Person> = []
            }
            """,
            expandedSource: """
                class Vehicle: ManagedObject {
                    var wheels: Int {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (Int).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var owner: Person? {
                        get {
                            _toOneValue(at: 0, as: Person.self)
                        }
                        set {
                            _setToOne(newValue, at: 0)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Vehicle",
                            isAbstract: true,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "wheels", type: (Int).attributeType, isOptional: false, defaultValue: 4)
                            ],
                            relationships: [
                                RelationshipDescription(name: "owner", destination: "Person", inverse: nil, isToMany: false, isOrdered: false, isOptional: true)
                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Vehicle")
                    }

                    private static let __strata_Vehicle_entity = Schema._defaultEntity(for: Vehicle.self)

                    override class var entity: Entity {
                        __strata_Vehicle_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        [Person.self]
                    }

                    static func __strata_Vehicle_keyPathNames<Root: Vehicle>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.wheels, "wheels"), (\\Root.owner, "owner")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Vehicle_keyPathNames(Vehicle.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Vehicle_keyPathNames(Vehicle.self)
                    }

                    static func __strata_Vehicle_optionalKeyPathNames<Root: Vehicle>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.wheels, "wheels"), (\\Root?.?.owner, "owner")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Vehicle_optionalKeyPathNames(Vehicle.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Vehicle`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable {
                        var objectID: ObjectID?
                        var wheels: Int
                        var owner: ObjectID?

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, wheels: Int = 4, owner: ObjectID? = nil) {
                            self.objectID = objectID
                            self.wheels = wheels
                            self.owner = owner
                        }
                    }

                    func __strata_Vehicle_makeValue() -> Vehicle.Value {
                        Vehicle.Value(objectID: objectID, wheels: self.wheels, owner: _relatedObjectID(at: 0))
                    }

                    func __strata_Vehicle_update(from value: Vehicle.Value) throws {
                        self.wheels = value.wheels
                        try _updateToOne(value.owner, at: 0)
                    }
                }

                final class Car: Vehicle {
                    var seats: Int16 {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: Car.__strata_Car_attributeBase + 0, as: (Int16).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: Car.__strata_Car_attributeBase + 0)
                        }
                    }
                    var drivers: Set<Person> {
                        init(initialValue) {
                        }
                        get {
                            _toManySet(at: Car.__strata_Car_relationshipBase + 0, as: Person.self)
                        }
                        set {
                            _setToMany(newValue, at: Car.__strata_Car_relationshipBase + 0)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Car",
                            isAbstract: false,
                            superentity: "Vehicle",
                            attributes: [
                                AttributeDescription(name: "seats", type: (Int16).attributeType, isOptional: false, defaultValue: 5)
                            ],
                            relationships: [
                                RelationshipDescription(name: "drivers", destination: "Person", inverse: nil, isToMany: true, isOrdered: false, isOptional: true)
                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Car")
                    }

                    private static let __strata_Car_entity = Schema._defaultEntity(for: Car.self)

                    override class var entity: Entity {
                        __strata_Car_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        [Vehicle.self, Person.self]
                    }

                    static func __strata_Car_keyPathNames<Root: Car>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        Vehicle.__strata_Vehicle_keyPathNames(Root.self) + [(\\Root.seats, "seats"), (\\Root.drivers, "drivers")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Car_keyPathNames(Car.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Car_keyPathNames(Car.self)
                    }

                    static func __strata_Car_optionalKeyPathNames<Root: Car>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        Vehicle.__strata_Vehicle_optionalKeyPathNames(Root.self) + [(\\Root?.?.seats, "seats"), (\\Root?.?.drivers, "drivers")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Car_optionalKeyPathNames(Car.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Car`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    @dynamicMemberLookup
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var inherited: Vehicle.Value
                        var seats: Int16
                        var drivers: [ObjectID]

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Car

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, inherited: Vehicle.Value, seats: Int16 = 5, drivers: [ObjectID] = []) {
                            self.objectID = objectID
                            self.inherited = inherited
                            self.seats = seats
                            self.drivers = drivers
                        }

                        /// The inherited properties, read and written as if they were declared here.
                        subscript <T>(dynamicMember keyPath: WritableKeyPath<Vehicle.Value, T>) -> T {
                            get {
                                inherited[keyPath: keyPath]
                            }
                            set {
                                inherited[keyPath: keyPath] = newValue
                            }
                        }
                    }

                    func __strata_Car_makeValue() -> Car.Value {
                        Car.Value(objectID: objectID, inherited: __strata_Vehicle_makeValue(), seats: self.seats, drivers: _relatedObjectIDs(at: Car.__strata_Car_relationshipBase + 0))
                    }

                    func __strata_Car_update(from value: Car.Value) throws {
                        try __strata_Vehicle_update(from: value.inherited)
                        self.seats = value.seats
                        try _updateToMany(value.drivers, at: Car.__strata_Car_relationshipBase + 0)
                    }

                    static let __strata_Car_attributeBase = Vehicle.entity.attributes.count

                    static let __strata_Car_relationshipBase = Vehicle.entity.relationships.count

                    var value: Value {
                        __strata_Car_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Car_update(from: value)
                    }
                }

                extension Vehicle: PersistentModel {
                }

                extension Car: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("A public class gets public members")
    func publicEntity() {
        assertExpansion(
            """
            @Entity public final class Tag: ManagedObject {
                public var name: String = ""
            }
            """,
            expandedSource: """
                public final class Tag: ManagedObject {
                    public var name: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }

                    override public class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Tag",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "name", type: (String).attributeType, isOptional: false, defaultValue: "")
                            ],
                            relationships: [

                            ],
                            uniquenessConstraints: [],
                            indexes: [],
                            managedObjectClassName: "Tag")
                    }

                    private static let __strata_Tag_entity = Schema._defaultEntity(for: Tag.self)

                    override public class var entity: Entity {
                        __strata_Tag_entity
                    }

                    override public class var relatedModelTypes: [ManagedObject.Type] {
                        []
                    }

                    static func __strata_Tag_keyPathNames<Root: Tag>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.name, "name")]
                    }

                    override public class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Tag_keyPathNames(Tag.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override public class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Tag_keyPathNames(Tag.self)
                    }

                    static func __strata_Tag_optionalKeyPathNames<Root: Tag>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.name, "name")]
                    }

                    override public class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Tag_optionalKeyPathNames(Tag.self)
                    }

                    override public func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Tag`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    public struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        public var objectID: ObjectID?
                        public var name: String

                        /// The class the snapshot is taken of.
                        public typealias ManagedModel = Tag

                        /// Creates a snapshot.
                        public init(objectID: ObjectID? = nil, name: String = "") {
                            self.objectID = objectID
                            self.name = name
                        }
                    }

                    public func __strata_Tag_makeValue() -> Tag.Value {
                        Tag.Value(objectID: objectID, name: self.name)
                    }

                    public func __strata_Tag_update(from value: Tag.Value) throws {
                        self.name = value.name
                    }

                    public var value: Value {
                        __strata_Tag_makeValue()
                    }

                    public func update(from value: Value) throws {
                        try __strata_Tag_update(from: value)
                    }
                }

                extension Tag: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }

    @Test("Names escaped with backticks are stored without them")
    func escapedNames() {
        assertExpansion(
            """
            @Entity final class Lesson: ManagedObject {
                @Attribute(.unique) var `class`: String = ""
                @Relationship(inverse: \\Teacher.`default`) var teacher: Teacher?
            }
            """,
            expandedSource: """
                final class Lesson: ManagedObject {
                    var `class`: String {
                        init(initialValue) {
                        }
                        get {
                            _attributeValue(at: 0, as: (String).self)
                        }
                        set {
                            _setAttributeValue(newValue, at: 0)
                        }
                    }
                    var teacher: Teacher? {
                        get {
                            _toOneValue(at: 0, as: Teacher.self)
                        }
                        set {
                            _setToOne(newValue, at: 0)
                        }
                    }

                    override class var entityDescription: EntityDescription? {
                        EntityDescription(
                            name: "Lesson",
                            isAbstract: false,
                            superentity: nil,
                            attributes: [
                                AttributeDescription(name: "class", type: (String).attributeType, isOptional: false, defaultValue: "")._applying(.unique)
                            ],
                            relationships: [
                                RelationshipDescription(name: "teacher", destination: "Teacher", inverse: "default", isToMany: false, isOrdered: false, isOptional: true)._applying(inverse: \\Teacher.`default`)
                            ],
                            uniquenessConstraints: [["class"]],
                            indexes: [],
                            managedObjectClassName: "Lesson")
                    }

                    private static let __strata_Lesson_entity = Schema._defaultEntity(for: Lesson.self)

                    override class var entity: Entity {
                        __strata_Lesson_entity
                    }

                    override class var relatedModelTypes: [ManagedObject.Type] {
                        [Teacher.self]
                    }

                    static func __strata_Lesson_keyPathNames<Root: Lesson>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root.`class`, "class"), (\\Root.teacher, "teacher")]
                    }

                    override class func propertyName(for keyPath: AnyKeyPath) -> String? {
                        for (candidate, name) in __strata_Lesson_keyPathNames(Lesson.self) where candidate == keyPath {
                            return name
                        }
                        return nil
                    }

                    override class var _keyPathNames: [(AnyKeyPath, String)] {
                        __strata_Lesson_keyPathNames(Lesson.self)
                    }

                    static func __strata_Lesson_optionalKeyPathNames<Root: Lesson>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                        [(\\Root?.?.`class`, "class"), (\\Root?.?.teacher, "teacher")]
                    }

                    override class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                        __strata_Lesson_optionalKeyPathNames(Lesson.self)
                    }

                    override func _strataApplyInitialValues() {
                        super._strataApplyInitialValues()

                    }

                    /// A `Sendable` snapshot of a `Lesson`: its stored properties, its relationships as
                    /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
                    struct Value: Sendable, Hashable, Codable, RepositoryValue {
                        var objectID: ObjectID?
                        var `class`: String
                        var teacher: ObjectID?

                        /// The class the snapshot is taken of.
                        typealias ManagedModel = Lesson

                        /// Creates a snapshot.
                        init(objectID: ObjectID? = nil, `class`: String = "", teacher: ObjectID? = nil) {
                            self.objectID = objectID
                            self.`class` = `class`
                            self.teacher = teacher
                        }
                    }

                    func __strata_Lesson_makeValue() -> Lesson.Value {
                        Lesson.Value(objectID: objectID, class: self.`class`, teacher: _relatedObjectID(at: 0))
                    }

                    func __strata_Lesson_update(from value: Lesson.Value) throws {
                        self.`class` = value.`class`
                        try _updateToOne(value.teacher, at: 0)
                    }

                    var value: Value {
                        __strata_Lesson_makeValue()
                    }

                    func update(from value: Value) throws {
                        try __strata_Lesson_update(from: value)
                    }
                }

                extension Lesson: PersistentModel, ValueSnapshotRepresentable {
                }
                """)
    }
}
