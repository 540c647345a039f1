import Foundation

/// The base class of every object Strata manages.
///
/// A managed object keeps its attribute values in an array indexed by attribute number (see
/// ``Entity/attributes``), next to a snapshot of the values last committed to a store; its
/// relationships live in a second array. `@Entity` classes read and write these arrays through
/// generated accessors; models loaded from Xcode model files use plain `ManagedObject`
/// instances through ``value(forKey:)`` and ``setValue(_:forKey:)``.
///
/// ```swift
/// @Entity final class Movie: ManagedObject {
///     var title: String = ""
/// }
/// let movie = Movie()
/// movie.title = "Heat"
/// movie.changedValues()   // ["title": "Heat"]
///
/// // No class needed for a model loaded from a file:
/// let book = ManagedObject(entity: schema.entity(named: "Book")!)
/// try book.setValue("Dune", forKey: "title")
/// ```
///
/// Managed objects are not `Sendable`: each belongs to one context, used in one isolation
/// domain. Pass ``objectID`` (or a value snapshot) across domains instead.
///
/// A subclass's `deinit` may read the object's own values, but must not fetch from its context
/// (or ask it for objects by ID): the context still knows the object until the base class's
/// `deinit` has run, and could hand it out again. As in Core Data, clean-up that needs the
/// store belongs in ``ObjectContext/delete(_:)-(ManagedObject)``'s delete rules or in a save.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The entity of the object.
    @exclusivity(unchecked) public internal(set) final var entity: Entity
    /// The object's identifier: temporary until the object is saved, permanent afterwards.
    @exclusivity(unchecked) public internal(set) final var objectID: ObjectID
    /// The context the object belongs to, if it has been inserted into one or loaded by one.
    ///
    /// An object keeps its context alive, so objects fetched through a short-lived context
    /// (`try container.newBackgroundContext().fetch(Movie.self)`) can still load their
    /// relationships.
    @exclusivity(unchecked) public internal(set) final var context: ObjectContext?

    // Object storage. The hot properties below are exempt from dynamic exclusivity checks
    // (`swift_beginAccess` was 12–14% of an insert benchmark): a managed object is not
    // `Sendable` and is only touched in its context's isolation domain, so accesses cannot
    // overlap across threads; and no access to them calls out while it is open (they are read
    // or assigned whole or by subscript, never passed `inout` to code that could reach the same
    // object again), so they cannot overlap on one thread either.
    @exclusivity(unchecked) @usableFromInline final var _values: [AttributeValue]
    @exclusivity(unchecked) @usableFromInline final var _committedValues: [AttributeValue]?
    @exclusivity(unchecked) @usableFromInline final var _relationships: [RelationshipValue]
    @exclusivity(unchecked) final var _committedRelationships: [RelationshipValue]?
    @exclusivity(unchecked) @usableFromInline final var _isFault = false
    @exclusivity(unchecked) final var _isInserted = false
    @exclusivity(unchecked) final var _isDeleted = false
    /// The optimistic-lock version of the row the committed values came from.
    @exclusivity(unchecked) final var _version: Int64 = 0
    /// The identity map the object is registered in, which it leaves in `deinit`. Set and
    /// cleared by the map only.
    @exclusivity(unchecked) final var _registry: IdentityMap?
    /// The table of the identity map holding the object, for a saved object (`nil` while its
    /// ID is temporary). Set and cleared by the map only.
    @exclusivity(unchecked) final var _registryTable: Unmanaged<KeyTable>?
    /// Whether the object's deletion was saved: it no longer exists in any store.
    final var _wasDeletedAndSaved = false

    /// Whether the object was created in memory and never saved.
    final var isNew: Bool { objectID.isTemporaryID && _committedValues == nil && !_wasDeletedAndSaved }
    /// Why the last attempt to load the object's values failed, if it did.
    public internal(set) final var faultingError: StrataError?

    /// Creates a new object of `entity`, with the entity's default values and the initial
    /// values of the class's property declarations.
    ///
    /// Subclasses made with `@Entity` inherit this initializer; plain `ManagedObject`
    /// instances use it with an entity from a schema (for example one loaded from an Xcode
    /// model file).
    ///
    /// For example:
    ///
    /// ```swift
    /// // A model loaded from a file has no classes: its objects are plain ManagedObject instances.
    /// guard let entity = schema.entity(named: "Book") else { return }
    /// let book = ManagedObject(entity: entity)   // default values, in no context yet
    /// try book.setValue("Dune", forKey: "title")
    /// context.insert(book)
    /// ```
    ///
    /// - Parameter entity: The entity of the new object. It must not be abstract.
    public required init(entity: Entity) {
        precondition(!entity.isAbstract, "Cannot create an instance of the abstract entity \(entity.name).")
        self.entity = entity
        self.objectID = ObjectID(entityName: entity.name, entityNameHash: entity.nameHash)
        self._values = entity.defaultValues
        self._relationships = entity.toManyFlags.map { $0 ? .toMany([]) : .toOne(nil) }
        _strataApplyInitialValues()
    }

    /// Creates an object for a row loaded from a store; its values are filled in by the context.
    /// Not for direct use: it skips the class's initial values and `awakeFromInsert()`.
    ///
    /// For example:
    ///
    /// ```swift
    /// // What contexts do for a row they load, whatever the entity's class:
    /// let type = entity.objectType as? ManagedObject.Type ?? ManagedObject.self
    /// let object = type.init(_storedEntity: entity)   // the context fills in the row's values
    /// ```
    public required convenience init(_storedEntity entity: Entity) {
        self.init(_storedEntity: entity, objectID: ObjectID(entityName: entity.name, entityNameHash: entity.nameHash))
    }

    /// Creates an object for the stored row with `objectID`; its values are filled in by the
    /// context. Not for direct use.
    ///
    /// For example:
    ///
    /// ```swift
    /// // What contexts do to make a fault for a stored object:
    /// let type = entity.objectType as? ManagedObject.Type ?? ManagedObject.self
    /// let fault = type.init(_storedEntity: entity, objectID: objectID)
    /// ```
    public required init(_storedEntity entity: Entity, objectID: ObjectID) {
        self.entity = entity
        self.objectID = objectID
        self._values = entity.defaultValues
        self._relationships = entity.toManyFlags.map { $0 ? .toManyFault : .toOne(nil) }
    }

    /// Creates a new object of the class's entity (``entity-swift.type.property``), not yet in
    /// any context.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = Movie()   // in no context yet
    /// movie.title = "Heat"
    /// context.insert(movie)
    /// ```
    public convenience init() {
        self.init(entity: Self.entity)
    }

    /// Creates a new object and inserts it into `context`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = Movie(context: context)   // inserted
    /// movie.title = "Heat"
    /// try context.save()
    /// ```
    ///
    /// - Parameter context: The context that will own the object. Its schema must contain the
    ///   class's entity.
    public convenience init(context: ObjectContext) {
        guard let entity = context.schemaEntity(for: Self.entity) else {
            preconditionFailure(
                "The context's schema has no entity \(Self.entity.name); add \(Self.self) to the schema.")
        }
        self.init(entity: entity)
        context.insert(self)
    }

    deinit {
        // The identity map holding the object does not retain it; its entry goes with it.
        _registry?.objectWasReleased(self)
    }

    // MARK: Class-level model information (generated by @Entity)

    /// The entity of the class, resolved in a schema made of the class and the classes it is
    /// related to. `@Entity` classes override this; plain `ManagedObject` has no entity of its own.
    open class var entity: Entity {
        preconditionFailure(
            "\(self) has no entity: declare it with @Entity, or create plain objects with init(entity:).")
    }

    /// The class's own entity declaration, generated by `@Entity`; `nil` for `ManagedObject`.
    open class var entityDescription: EntityDescription? { nil }

    /// The `@Entity` classes this class refers to: its parent class and its relationships'
    /// destinations. Schemas built from classes follow these to find the whole model.
    open class var relatedModelTypes: [ManagedObject.Type] { [] }

    /// The attribute or relationship name a key path of this class refers to.
    ///
    /// `@Entity` generates this table; queries and sort descriptors use it to turn
    /// `\Movie.title` into `"title"`.
    ///
    /// For example:
    ///
    /// ```swift
    /// Movie.propertyName(for: \Movie.title)      // "title"
    /// Movie.propertyName(for: \Movie.objectID)   // nil: not a persistent property
    /// ```
    ///
    /// - Parameter keyPath: A key path rooted in this class.
    /// - Returns: The property name, or `nil` when the key path is not a stored property.
    open class func propertyName(for keyPath: AnyKeyPath) -> String? { nil }

    /// Every key path of the class's persistent properties with its property name, inherited
    /// ones included, rooted at this class (`\Movie.director`). Generated by `@Entity`; queries
    /// start from it to name key paths that go through relationships (`\Movie.director?.name`).
    open class var _keyPathNames: [(AnyKeyPath, String)] { [] }

    /// The same properties reached through an optional of this class (`\Movie?.?.title`), the
    /// rest of a key path through a to-one relationship to this class. Generated by `@Entity`.
    open class var _optionalKeyPathNames: [(AnyKeyPath, String)] { [] }

    /// Applies the initial values written in the class's property declarations. `@Entity`
    /// overrides this; it runs once, when a new object is created (never for fetched objects).
    open func _strataApplyInitialValues() {}

    /// Called when the object is first inserted into a context. Override to set up values that
    /// depend on the context; call `super`.
    ///
    /// For example:
    ///
    /// ```swift
    /// @Entity final class Review: ManagedObject {
    ///     var text: String = ""
    ///     var created: Date = .distantPast
    ///
    ///     override func awakeFromInsert() {
    ///         super.awakeFromInsert()
    ///         created = Date()   // once, when first inserted; never for fetched reviews
    ///     }
    /// }
    /// ```
    open func awakeFromInsert() {}

    // MARK: State

    /// Whether the object has been inserted into a context and not yet saved.
    public final var isInserted: Bool { _isInserted }
    /// Whether the object has been deleted from its context and the deletion not yet saved.
    public final var isDeleted: Bool { _isDeleted }
    /// Whether the object has committed values and some of them changed since.
    public final var isUpdated: Bool { !_isInserted && !_isDeleted && _committedValues != nil && hasChangedProperties }
    /// Whether the object's values have not been loaded from its store yet.
    public final var isFault: Bool { _isFault }
    /// Whether the object has unsaved changes: it is inserted, deleted, or has changed values.
    public final var hasChanges: Bool { _isInserted || _isDeleted || hasChangedProperties }

    // MARK: Hashable (identity, as for every reference-type model object)

    /// Whether two references are the same object: managed objects compare by identity.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    /// Hashes the object by identity.
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// A readable rendering, for logs, messages and tools.
    open var description: String {
        var parts: [String] = []
        for (index, attribute) in entity.attributes.enumerated() {
            parts.append("\(attribute.name): \(_values[index])")
        }
        for (index, relationship) in entity.relationships.enumerated() {
            switch _relationships[index] {
            case .toOne(let object):
                parts.append("\(relationship.name): \(object.map { $0.objectID.description } ?? "nil")")
            case .toMany(let objects): parts.append("\(relationship.name): \(objects.count) objects")
            case .toManyFault: parts.append("\(relationship.name): not loaded")
            }
        }
        return "<\(entity.name) \(objectID)> { " + parts.joined(separator: ", ") + " }"
    }
}

@available(
    *, unavailable,
    message: "Managed objects belong to one context; pass objectID or a value snapshot across isolation domains."
)
extension ManagedObject: Sendable {}

/// The stored form of one relationship of one object.
@usableFromInline
enum RelationshipValue {
    case toOne(ManagedObject?)
    case toMany([ManagedObject])
    /// A to-many relationship of a stored object whose contents have not been loaded yet; use
    /// `ManagedObject.relationshipValue(at:)`, which loads it.
    case toManyFault

    /// The related objects that are loaded (none for a fault).
    var objects: [ManagedObject] {
        switch self {
        case .toOne(let object): object.map { [$0] } ?? []
        case .toMany(let objects): objects
        case .toManyFault: []
        }
    }

    var isFault: Bool {
        if case .toManyFault = self { return true }
        return false
    }

    func isSame(as other: RelationshipValue, ordered: Bool) -> Bool {
        switch (self, other) {
        case (.toOne(let a), .toOne(let b)): return a === b
        case (.toManyFault, .toManyFault): return true
        case (.toMany(let a), .toMany(let b)):
            guard a.count == b.count else { return false }
            if ordered { return zip(a, b).allSatisfy { $0 === $1 } }
            return Set(a.map(ObjectIdentifier.init)) == Set(b.map(ObjectIdentifier.init))
        default: return false
        }
    }
}
