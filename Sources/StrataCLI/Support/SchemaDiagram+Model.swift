import Foundation
import Strata

// MARK: - What every format draws

extension SchemaDiagram {
    /// The entities, relationship edges and inheritance edges of a schema, in drawing order.
    struct Model {
        /// The schema's entities, sorted by name.
        let entities: [Entity]
        /// One edge per relationship and its inverse.
        let links: [Link]
        /// One edge per entity with a superentity.
        let generalizations: [Generalization]

        init(_ schema: Schema) {
            entities = schema.entities.sorted { $0.name < $1.name }
            generalizations = entities.compactMap { entity in
                entity.superentity.map { Generalization(subentity: entity.name, superentity: $0.name) }
            }
            // A relationship and its inverse make one edge: the first of the two in name order
            // draws it and marks the other as drawn.
            var links: [Link] = []
            var drawn: Set<PropertyKey> = []
            for entity in entities {
                for relationship in SchemaDiagram.ownRelationships(of: entity) {
                    let key = PropertyKey(entity: entity.name, property: relationship.name)
                    // A destination outside the schema (a schema built without validation) has
                    // no box to point at.
                    guard drawn.insert(key).inserted,
                        let destination = schema.entity(named: relationship.destinationEntityName)
                    else { continue }
                    var link = Link(
                        source: entity.name, forward: relationship, destination: destination.name, inverse: nil,
                        isOwnInverse: false)
                    if let inverseName = relationship.inverseName,
                        let inverse = destination.relationship(named: inverseName)
                    {
                        let owner = SchemaDiagram.declaringEntity(ofRelationship: inverseName, from: destination)
                        let inverseKey = PropertyKey(entity: owner.name, property: inverseName)
                        if inverseKey == key {
                            link.isOwnInverse = true
                        } else if drawn.insert(inverseKey).inserted {
                            link.inverse = inverse
                        }
                    }
                    links.append(link)
                }
            }
            self.links = links
        }
    }

    /// A relationship edge: a relationship and, when it has one, its inverse.
    struct Link {
        /// The entity that declares ``forward``.
        var source: String
        /// The relationship drawn from ``source`` to ``destination``.
        var forward: RelationshipDescription
        /// The entity ``forward`` points at.
        var destination: String
        /// The relationship that points back, drawn on the same edge; `nil` for a one-way
        /// relationship, or when ``forward`` is its own inverse.
        var inverse: RelationshipDescription?
        /// Whether ``forward`` is its own inverse (`Person.spouse`), so that one label serves both ends.
        var isOwnInverse: Bool
    }

    /// An inheritance edge.
    struct Generalization {
        /// The inheriting entity.
        var subentity: String
        /// The entity it inherits from.
        var superentity: String
    }

    /// A property of an entity, to remember which relationships an edge already shows.
    struct PropertyKey: Hashable {
        var entity: String
        var property: String
    }

    /// The entity's own attributes, sorted by name; inherited ones show on the superentity.
    static func ownAttributes(of entity: Entity) -> [AttributeDescription] {
        entity.declaration.attributes.sorted { $0.name < $1.name }
    }

    /// The entity's own relationships with inverses resolved, sorted by name. (The declaration's
    /// relationships lack inverses the schema inferred; ``Entity/relationships`` lists inherited
    /// ones first.)
    static func ownRelationships(of entity: Entity) -> [RelationshipDescription] {
        entity.relationships.dropFirst(entity.superentity?.relationships.count ?? 0).sorted { $0.name < $1.name }
    }

    /// The entity, `entity` or one of its ancestors, that declares the relationship `name`, so
    /// that an inherited inverse is found where its edge starts.
    static func declaringEntity(ofRelationship name: String, from entity: Entity) -> Entity {
        var declaring = entity
        while let parent = declaring.superentity, parent.relationship(named: name) != nil { declaring = parent }
        return declaring
    }

    /// Uniqueness constraints over more than one property, which no attribute row can mark.
    static func compositeUniquenessConstraints(of entity: Entity) -> [[String]] {
        entity.declaration.uniquenessConstraints.filter { $0.count > 1 }
    }

    /// The attribute's type as people read it: the Xcode name, or `Codable<Type>`.
    static func typeName(of attribute: AttributeDescription) -> String {
        attribute.type == .codable ? "Codable<\(attribute.valueTypeName ?? "JSON")>" : attribute.type.description
    }

    /// What an attribute row notes besides name and type.
    static func marks(of attribute: AttributeDescription, in entity: Entity) -> [String] {
        var marks: [String] = []
        if entity.declaration.uniquenessConstraints.contains([attribute.name]) { marks.append("unique") }
        if attribute.isIndexed { marks.append("indexed") }
        if attribute.isTransient { marks.append("transient") }
        return marks
    }

    /// An attribute row: `title: String? [unique, indexed]`.
    static func attributeLine(_ attribute: AttributeDescription, in entity: Entity) -> String {
        let marks = marks(of: attribute, in: entity)
        return "\(attribute.name): \(typeName(of: attribute))\(attribute.isOptional ? "?" : "")"
            + (marks.isEmpty ? "" : " [\(marks.joined(separator: ", "))]")
    }

    /// The row for a uniqueness constraint over several properties.
    static func constraintLine(_ constraint: [String]) -> String {
        "unique(\(constraint.joined(separator: ", ")))"
    }

    /// UML-style cardinality: `0..1`, `1`, `0..*`, `1..*`, `2..5`.
    static func cardinality(of relationship: RelationshipDescription) -> String {
        guard relationship.isToMany else { return relationship.isOptional ? "0..1" : "1" }
        let lower = max(relationship.minimumCount, 0)
        guard relationship.maximumCount > 0 else { return "\(lower)..*" }
        return lower == relationship.maximumCount ? "\(lower)" : "\(lower)..\(relationship.maximumCount)"
    }

    /// The label of the edge end a relationship points at: `movies 0..* {ordered, cascade}`.
    static func endLabel(for relationship: RelationshipDescription) -> String {
        "\(relationship.name) \(endDetails(for: relationship))"
    }

    /// A relationship's cardinality, then whether it is ordered and its delete rule unless that
    /// is the usual nullify: `0..* {ordered, cascade}`.
    static func endDetails(for relationship: RelationshipDescription) -> String {
        var notes: [String] = []
        if relationship.isOrdered { notes.append("ordered") }
        if relationship.deleteRule != .nullify { notes.append(relationship.deleteRule.xcodeName.lowercased()) }
        return cardinality(of: relationship) + (notes.isEmpty ? "" : " {\(notes.joined(separator: ", "))}")
    }

    /// Whether the end a relationship points at can hold more than one object (crow's foot).
    static func isToManyEnd(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany && relationship.maximumCount != 1
    }

    /// Whether the end a relationship points at must hold at least one object.
    static func isRequiredEnd(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany ? relationship.minimumCount > 0 : !relationship.isOptional
    }

    /// `text` with XML's special characters escaped, for SVG and Graphviz HTML-like labels.
    /// Characters XML 1.0 cannot carry at all (control characters) become U+FFFD, and line
    /// breaks spaces, so that no name can break the document.
    static func xmlEscaped(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\t", "\n", "\r": result += " "
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    result.unicodeScalars.append("\u{FFFD}")
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
