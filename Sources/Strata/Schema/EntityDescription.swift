/// The declaration of an entity: its name, place in an inheritance tree, properties,
/// uniqueness constraints and indexes.
///
/// An `EntityDescription` lists only the entity's own properties; a ``Schema`` resolves
/// inheritance, inverses and validation into ``Entity`` values.
///
/// ```swift
/// let movie = EntityDescription(
///     name: "Movie",
///     attributes: [
///         AttributeDescription(name: "id", type: .uuid),
///         AttributeDescription(name: "title", type: .string, defaultValue: ""),
///     ],
///     relationships: [
///         RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie", isToMany: true),
///     ],
///     uniquenessConstraints: [["id"]])
/// ```
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name, unique in its schema.
    public var name: String
    /// Whether the entity only serves as a parent and cannot have instances of its own.
    public var isAbstract: Bool
    /// The name of the parent entity, whose properties this entity inherits.
    public var superentityName: String?
    /// The entity's own attributes, in declaration order.
    public var attributes: [AttributeDescription]
    /// The entity's own relationships, in declaration order.
    public var relationships: [RelationshipDescription]
    /// Sets of property names whose combined values must be unique among all instances of the
    /// entity and its subentities. A single-element set is a single-attribute constraint.
    public var uniquenessConstraints: [[String]]
    /// Indexes the store keeps to speed up fetches.
    public var indexes: [IndexDescription]
    /// The entity's name in the previous schema version.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash to force a new version without another change.
    public var versionHashModifier: String?
    /// The name of the Swift class that represents instances (informational).
    public var managedObjectClassName: String?

    /// Creates an entity description.
    public init(
        name: String,
        isAbstract: Bool = false,
        superentity: String? = nil,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [],
        indexes: [IndexDescription] = [],
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        managedObjectClassName: String? = nil
    ) {
        self.name = name
        self.isAbstract = isAbstract
        self.superentityName = superentity
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.managedObjectClassName = managedObjectClassName
    }

    /// The names of the entity's own attributes and relationships.
    public var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}

/// An index on one or more properties of an entity.
public struct IndexDescription: Sendable, Hashable, Codable {
    /// One property of an index and its direction.
    public struct Element: Sendable, Hashable, Codable {
        /// The indexed attribute or to-one relationship.
        public var propertyName: String
        /// Whether the index sorts this property in ascending order.
        public var isAscending: Bool

        /// Creates an index element.
        public init(_ propertyName: String, ascending: Bool = true) {
            self.propertyName = propertyName
            self.isAscending = ascending
        }
    }

    /// The index's name, unique within its entity.
    public var name: String
    /// The indexed properties, most significant first.
    public var elements: [Element]

    /// Creates an index over `elements`.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// Creates an ascending index over `propertyNames`, named after them unless `name` is given.
    public init(name: String? = nil, _ propertyNames: [String]) {
        self.name = name ?? "by_" + propertyNames.joined(separator: "_")
        self.elements = propertyNames.map { Element($0) }
    }
}
