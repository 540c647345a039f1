import Foundation

/// Declares a class as a Strata entity, SwiftData-style.
///
/// Stored properties become attributes (an optional type makes an optional attribute, an
/// initial value a default value); properties whose type is another `@Entity` class — `T?`,
/// `Set<T>` or `[T]` — become to-one, to-many and ordered to-many relationships. Computed
/// properties and properties marked ``Transient()`` are not stored.
///
/// ```swift
/// @Entity final class Movie: ManagedObject {
///     @Attribute(.unique) var id: UUID = UUID()
///     var title: String = ""
///     var releaseDate: Date?
///     @Relationship(deleteRule: .cascade, inverse: \Review.movie) var reviews: Set<Review> = []
///     var director: Person?
///
///     #Unique<Movie>([\.title, \.releaseDate])
///     #Index<Movie>([\.title])
/// }
/// ```
///
/// The macro generates accessors that read and write the object's value array directly, the
/// class's ``ManagedObject/entityDescription``, its ``ManagedObject/entity-swift.type.property``,
/// the key-path → property-name table (``ManagedObject/propertyName(for:)``) and, for final
/// classes, a `Sendable` value twin `Movie.Value` with `var value` and `update(from:)`
/// (see ``ValueSnapshotRepresentable``).
///
/// The class must inherit from ``ManagedObject`` or from another `@Entity` class (macros cannot
/// add a superclass, so write `: ManagedObject`). It must be `final`, unless it is meant to be
/// subclassed: mark such parents `@Entity(.inheritable)` or `@Entity(.abstract)`. Custom
/// initializers are convenience initializers that call `self.init()` first.
///
@attached(member, names: arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, ValueSnapshotRepresentable)
public macro Entity() = #externalMacro(module: "StrataMacros", type: "EntityMacro")

/// Declares a class as a Strata entity that other `@Entity` classes inherit from.
///
/// ```swift
/// @Entity(.abstract) class Vehicle: ManagedObject {
///     var wheels: Int = 4
/// }
/// @Entity final class Car: Vehicle {
///     var seats: Int16 = 5
/// }
/// ```
///
/// Such a parent class is not final and has a `Value` struct but no `value` property of its
/// own; each final subclass has a `Value` holding the parent's as `inherited` (whose
/// properties it also exposes directly) and conforms to ``ValueSnapshotRepresentable``.
///
/// - Parameter option: ``EntityOption/abstract`` (no instances of its own) or
///   ``EntityOption/inheritable``.
@attached(member, names: arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel)
public macro Entity(_ option: EntityOption) = #externalMacro(module: "StrataMacros", type: "EntityMacro")

/// Options of ``Entity(_:)``, for classes that other entities inherit from.
public enum EntityOption: Sendable {
    /// The entity cannot have instances of its own; only its subentities can.
    case abstract
    /// The class may be subclassed by other `@Entity` classes (subentities).
    case inheritable
}

/// Options of ``Attribute(_:originalName:minimumValue:maximumValue:minimumLength:maximumLength:pattern:)``.
public enum AttributeOption: Sendable {
    /// No two objects of the entity may have the same value.
    case unique
    /// Large binary values may be stored outside the main table.
    case externalStorage
    /// The value is kept in history tombstones when the object is deleted.
    case preserveValueOnDeletion
    /// The value is tracked in memory but never written to the store.
    case transient
    /// The store keeps an index on this attribute.
    case indexed
    /// The attribute holds a `Codable` value stored as JSON, even if its type is optional.
    case codable
}

/// Customizes how an `@Entity` property is stored.
///
/// ```swift
/// @Attribute(.unique) var isbn: String = ""
/// @Attribute(originalName: "name", minimumLength: 1, maximumLength: 200) var title: String = ""
/// @Attribute(minimumValue: 0, maximumValue: 10) var rating: Double = 0
/// ```
///
/// - Parameters:
///   - options: Storage options.
///   - originalName: The property's name in the previous schema version (its renaming identifier).
///   - minimumValue: The smallest allowed value (numbers and dates).
///   - maximumValue: The largest allowed value (numbers and dates).
///   - minimumLength: The smallest allowed length (strings and data).
///   - maximumLength: The largest allowed length (strings and data).
///   - pattern: A regular expression a string must match in full.
@attached(peer)
public macro Attribute(
    _ options: AttributeOption...,
    originalName: String? = nil,
    minimumValue: AttributeValue? = nil,
    maximumValue: AttributeValue? = nil,
    minimumLength: Int? = nil,
    maximumLength: Int? = nil,
    pattern: String? = nil
) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// Customizes a relationship of an `@Entity` class.
///
/// ```swift
/// @Relationship(deleteRule: .cascade, inverse: \Review.movie) var reviews: Set<Review> = []
/// ```
///
/// - Parameters:
///   - deleteRule: What happens to related objects when this object is deleted.
///   - inverse: The relationship in the destination that points back.
///   - minimumCount: The fewest related objects a to-many relationship may hold.
///   - maximumCount: The most related objects a to-many relationship may hold (0: no maximum).
///   - originalName: The relationship's name in the previous schema version.
@attached(peer)
public macro Relationship(
    deleteRule: DeleteRule = .nullify,
    inverse: AnyKeyPath? = nil,
    minimumCount: Int = 0,
    maximumCount: Int = 0,
    originalName: String? = nil
) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// Declares a relationship whose inverse is named by its property name, so that both sides can
/// name each other, as Core Data models do.
///
/// ```swift
/// @Entity final class Author: ManagedObject {
///     @Relationship(inverse: "author") var books: Set<Book> = []
/// }
/// @Entity final class Book: ManagedObject {
///     @Relationship(inverse: "books") var author: Author?   // or inverse: \Author.books
/// }
/// ```
///
/// Swift cannot check two key paths that name each other in macro arguments (each needs the
/// other's property expanded first; SwiftData's `@Relationship` has the same limit), so at most
/// one side may use a key path. The schema checks that both sides agree: naming different
/// inverses is ``StrataError/Code/invalidSchema``.
///
/// - Parameters:
///   - deleteRule: What deleting the object does to the related objects.
///   - inverse: The name of the inverse relationship on the destination class.
///   - minimumCount: The fewest related objects a to-many relationship may hold.
///   - maximumCount: The most related objects a to-many relationship may hold (0: no maximum).
///   - originalName: The relationship's name in the previous schema version.
@attached(peer)
public macro Relationship(
    deleteRule: DeleteRule = .nullify,
    inverse: String,
    minimumCount: Int = 0,
    maximumCount: Int = 0,
    originalName: String? = nil
) = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// Marks a property of an `@Entity` class as not stored: it is an ordinary Swift property.
@attached(peer)
public macro Transient() = #externalMacro(module: "StrataMacros", type: "MarkerMacro")

/// Declares a compound uniqueness constraint inside an `@Entity` class.
///
/// ```swift
/// #Unique<Person>([\.givenName, \.familyName], [\.email])
/// ```
@freestanding(declaration)
public macro Unique<Model>(_ constraints: [PartialKeyPath<Model>]...) =
    #externalMacro(module: "StrataMacros", type: "MarkerDeclarationMacro")

/// Declares indexes inside an `@Entity` class, each over one or more properties.
///
/// ```swift
/// #Index<Movie>([\.title], [\.releaseDate, \.title])
/// ```
@freestanding(declaration)
public macro Index<Model>(_ indexes: [PartialKeyPath<Model>]...) =
    #externalMacro(module: "StrataMacros", type: "MarkerDeclarationMacro")

/// Generates the accessors of one stored property of an `@Entity` class. Added by `@Entity`;
/// not for direct use.
@attached(accessor, names: named(init), named(get), named(set))
public macro _PersistedProperty(_ kind: String, _ index: String, _ type: String) =
    #externalMacro(module: "StrataMacros", type: "PersistedPropertyMacro")

extension AttributeDescription {
    /// Applies the arguments of an `@Attribute` annotation. Called by generated code.
    public func _applying(
        _ options: AttributeOption...,
        originalName: String? = nil,
        minimumValue: AttributeValue? = nil,
        maximumValue: AttributeValue? = nil,
        minimumLength: Int? = nil,
        maximumLength: Int? = nil,
        pattern: String? = nil
    ) -> AttributeDescription {
        var attribute = self
        for option in options {
            switch option {
            case .unique, .codable: break
            case .externalStorage: attribute.allowsExternalBinaryDataStorage = true
            case .preserveValueOnDeletion: attribute.preservesValueOnDeletion = true
            case .transient: attribute.isTransient = true
            case .indexed: attribute.isIndexed = true
            }
        }
        attribute.renamingIdentifier = originalName ?? attribute.renamingIdentifier
        attribute.validation = ValidationRules(
            minimumValue: minimumValue, maximumValue: maximumValue, minimumLength: minimumLength,
            maximumLength: maximumLength, pattern: pattern)
        return attribute
    }
}

extension RelationshipDescription {
    /// Applies the arguments of a `@Relationship` annotation. Called by generated code.
    public func _applying(
        deleteRule: DeleteRule = .nullify,
        inverse: AnyKeyPath? = nil,
        minimumCount: Int = 0,
        maximumCount: Int = 0,
        originalName: String? = nil
    ) -> RelationshipDescription {
        var relationship = self
        relationship.deleteRule = deleteRule
        relationship.minimumCount = minimumCount
        relationship.maximumCount = maximumCount
        relationship.renamingIdentifier = originalName
        return relationship
    }

    /// The relationship with the options of `@Relationship(inverse: "name", …)`; the macro has
    /// already recorded the inverse's name.
    public func _applying(
        deleteRule: DeleteRule = .nullify,
        inverse: String,
        minimumCount: Int = 0,
        maximumCount: Int = 0,
        originalName: String? = nil
    ) -> RelationshipDescription {
        _applying(
            deleteRule: deleteRule, inverse: nil as AnyKeyPath?, minimumCount: minimumCount, maximumCount: maximumCount,
            originalName: originalName)
    }
}
