import Foundation

/// An entity of a validated ``Schema``: its declaration with inheritance and inverses resolved.
///
/// An entity's ``attributes`` and ``relationships`` include inherited ones first, in the
/// parent's order, then its own. The position of an attribute in ``attributes`` is its
/// *attribute number*: managed objects store their values in an array in that order.
///
/// Entities are immutable and `Sendable`; compare them by identity or by ``name``.
public final class Entity: Sendable, CustomStringConvertible {
    /// The entity as it was declared (its own properties only).
    public let declaration: EntityDescription
    /// The parent entity, if any.
    public let superentity: Entity?
    /// The names of the entities that inherit directly from this one.
    public let subentityNames: [String]
    /// The names of this entity and every entity that inherits from it, directly or not.
    public let kindNames: Set<String>
    /// All attributes, inherited ones first; an attribute's position is its attribute number.
    public let attributes: [AttributeDescription]
    /// All relationships, inherited ones first, with inverses resolved.
    public let relationships: [RelationshipDescription]
    /// Uniqueness constraints, inherited ones included.
    public let uniquenessConstraints: [[String]]
    /// Indexes: the parent's, the declared ones, and one per attribute marked
    /// ``AttributeDescription/isIndexed`` that no declared index already covers.
    public let indexes: [IndexDescription]
    /// A hash of everything about the entity that affects how its instances are stored.
    public let versionHash: String
    /// The class that represents instances, or `nil` when instances are plain managed objects.
    public let objectType: AnyClass?

    private let attributeNumbers: [String: Int]
    private let relationshipNumbers: [String: Int]

    // Precomputed for the per-object paths (creating, validating and loading objects), so they
    // do not walk the attribute descriptions for every object.
    /// The default value of each attribute, by attribute number.
    package let defaultValues: [AttributeValue]
    /// The hash of ``name`` that object IDs of the entity carry (`ObjectID.entityNameHash`).
    package let nameHash: UInt64
    /// Whether each relationship, by relationship number, is to-many.
    let toManyFlags: [Bool]
    /// The attribute numbers of non-optional attributes.
    let requiredAttributeNumbers: [Int]
    /// The attribute numbers of attributes with validation rules.
    let ruledAttributeNumbers: [Int]
    /// The attribute numbers of transient attributes.
    let transientAttributeNumbers: [Int]
    /// Whether any relationship is required or has count limits, so that validation must look
    /// at relationships at all.
    let hasRelationshipRules: Bool

    init(
        declaration: EntityDescription,
        superentity: Entity?,
        subentityNames: [String],
        kindNames: Set<String>,
        ownRelationships: [RelationshipDescription],
        versionHash: String,
        objectType: AnyClass?
    ) {
        self.declaration = declaration
        self.superentity = superentity
        self.subentityNames = subentityNames
        self.kindNames = kindNames
        let attributes = (superentity?.attributes ?? []) + declaration.attributes
        let relationships = (superentity?.relationships ?? []) + ownRelationships
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = (superentity?.uniquenessConstraints ?? []) + declaration.uniquenessConstraints
        // Subentities share their root's table, so they inherit its indexes; an attribute marked
        // indexed adds a single-column index unless a declared index already covers exactly it.
        var indexes = (superentity?.indexes ?? []) + declaration.indexes
        for attribute in declaration.attributes where attribute.isIndexed {
            let name = "by_" + attribute.name
            if !indexes.contains(where: { $0.name == name || $0.elements.map(\.propertyName) == [attribute.name] }) {
                indexes.append(IndexDescription(name: name, [attribute.name]))
            }
        }
        self.indexes = indexes
        self.nameHash = ObjectID.hash(ofEntityName: declaration.name)
        self.versionHash = versionHash
        self.objectType = objectType
        self.defaultValues = attributes.map(\.defaultValue)
        self.toManyFlags = relationships.map(\.isToMany)
        self.requiredAttributeNumbers = attributes.indices.filter { !attributes[$0].isOptional }
        self.ruledAttributeNumbers = attributes.indices.filter { !attributes[$0].validation.isEmpty }
        self.transientAttributeNumbers = attributes.indices.filter { attributes[$0].isTransient }
        self.hasRelationshipRules = relationships.contains {
            (!$0.isToMany && !$0.isOptional) || $0.minimumCount > 0 || $0.maximumCount > 0
        }
        self.attributeNumbers = Dictionary(
            attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.relationshipNumbers = Dictionary(
            relationships.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entity's name.
    public var name: String { declaration.name }
    /// Whether the entity cannot have instances of its own.
    public var isAbstract: Bool { declaration.isAbstract }
    /// The entity at the top of this entity's inheritance tree (itself when it has no parent).
    public var rootEntity: Entity { superentity?.rootEntity ?? self }
    /// The names of all attributes and relationships.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }

    /// The attribute number of the attribute named `name`.
    public func attributeNumber(named name: String) -> Int? { attributeNumbers[name] }
    /// The position of the relationship named `name` in ``relationships``.
    public func relationshipNumber(named name: String) -> Int? { relationshipNumbers[name] }
    /// The attribute named `name`, own or inherited.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeNumbers[name].map { attributes[$0] }
    }
    /// The relationship named `name`, own or inherited.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipNumbers[name].map { relationships[$0] }
    }

    /// Whether this entity is `other` or inherits from it.
    public func isKind(of other: Entity) -> Bool {
        other.kindNames.contains(name)
    }

    /// A readable rendering, for logs, messages and tools.
    public var description: String {
        var lines = ["entity \(name)" + (isAbstract ? " (abstract)" : "") + (superentity.map { " : \($0.name)" } ?? "")]
        for attribute in attributes {
            let type =
                attribute.type == .codable
                ? "Codable<\(attribute.valueTypeName ?? "JSON")>" : attribute.type.description
            var line = "  \(attribute.name): \(type)" + (attribute.isOptional ? "?" : "")
            if !attribute.defaultValue.isNull { line += " = \(attribute.defaultValue)" }
            if attribute.isTransient { line += " [transient]" }
            lines.append(line)
        }
        for relationship in relationships {
            var line = "  \(relationship.name) -> \(relationship.destinationEntityName) (\(relationship.kindName)"
            if let inverse = relationship.inverseName { line += ", inverse \(inverse)" }
            line += ", \(relationship.deleteRule.rawValue))"
            lines.append(line)
        }
        for constraint in uniquenessConstraints {
            lines.append("  unique(\(constraint.joined(separator: ", ")))")
        }
        for index in indexes {
            lines.append("  index \(index.name)(\(index.elements.map(\.propertyName).joined(separator: ", ")))")
        }
        return lines.joined(separator: "\n")
    }
}
