/// The differences between two schemas, with renames recognised through renaming identifiers.
///
/// ```swift
/// let difference = newSchema.difference(from: storedSchema)
/// for change in difference.changes { print(change) }
/// // property Movie.name renamed to title
/// // property Movie.rating added
/// ```
public struct SchemaDifference: Sendable, Hashable, CustomStringConvertible {
    /// One difference between two schemas.
    public enum Change: Sendable, Hashable, CustomStringConvertible {
        /// An entity exists only in the new schema.
        case entityAdded(String)
        /// An entity exists only in the old schema.
        case entityRemoved(String)
        /// An entity's renaming identifier names an entity of the old schema.
        case entityRenamed(from: String, to: String)
        /// Something about an entity itself changed (parent, abstractness, constraints).
        case entityChanged(String, detail: String)
        /// A property exists only in the new entity.
        case propertyAdded(entity: String, property: String)
        /// A property exists only in the old entity.
        case propertyRemoved(entity: String, property: String)
        /// A property's renaming identifier names a property of the old entity.
        case propertyRenamed(entity: String, from: String, to: String)
        /// A property's type, optionality, kind or destination changed.
        case propertyChanged(entity: String, property: String, detail: String)

        /// A readable rendering, for logs, messages and tools.
        public var description: String {
            switch self {
            case .entityAdded(let name): "entity \(name) added"
            case .entityRemoved(let name): "entity \(name) removed"
            case .entityRenamed(let old, let new): "entity \(old) renamed to \(new)"
            case .entityChanged(let name, let detail): "entity \(name) changed: \(detail)"
            case .propertyAdded(let entity, let property): "property \(entity).\(property) added"
            case .propertyRemoved(let entity, let property): "property \(entity).\(property) removed"
            case .propertyRenamed(let entity, let old, let new): "property \(entity).\(old) renamed to \(new)"
            case .propertyChanged(let entity, let property, let detail): "property \(entity).\(property) changed: \(detail)"
            }
        }
    }

    /// Every change, entities in name order.
    public let changes: [Change]

    /// Whether the schemas store objects the same way.
    public var isEmpty: Bool { changes.isEmpty }

    /// A readable rendering, for logs, messages and tools.
    public var description: String {
        changes.isEmpty ? "no differences" : changes.map(\.description).joined(separator: "\n")
    }
}

extension Schema {
    /// Lists how this schema differs from `old`, recognising renamed entities and properties by
    /// their renaming identifiers.
    ///
    /// - Parameter old: The earlier schema (for instance the one a store was written with).
    /// - Returns: The differences; empty when both schemas have the same ``versionHash``.
    public func difference(from old: Schema) -> SchemaDifference {
        var changes: [SchemaDifference.Change] = []
        var matchedOld = Set<String>()
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            let oldEntity: Entity
            if let same = old.entity(named: entity.name) {
                oldEntity = same
            } else if let previous = entity.declaration.renamingIdentifier, let renamed = old.entity(named: previous) {
                oldEntity = renamed
                changes.append(.entityRenamed(from: previous, to: entity.name))
            } else {
                changes.append(.entityAdded(entity.name))
                continue
            }
            matchedOld.insert(oldEntity.name)
            if entity.versionHash == oldEntity.versionHash && entity.name == oldEntity.name { continue }
            changes += Self.entityChanges(entity, from: oldEntity)
        }
        for entity in old.entities.sorted(by: { $0.name < $1.name }) where !matchedOld.contains(entity.name) {
            changes.append(.entityRemoved(entity.name))
        }
        return SchemaDifference(changes: changes)
    }

    private static func entityChanges(_ entity: Entity, from old: Entity) -> [SchemaDifference.Change] {
        var changes: [SchemaDifference.Change] = []
        let name = entity.name
        if entity.superentity?.name != old.superentity?.name {
            changes.append(
                .entityChanged(name, detail: "parent \(old.superentity?.name ?? "none") -> \(entity.superentity?.name ?? "none")"))
        }
        if entity.isAbstract != old.isAbstract {
            changes.append(.entityChanged(name, detail: entity.isAbstract ? "now abstract" : "no longer abstract"))
        }
        let constraints = Set(entity.uniquenessConstraints.map { $0.sorted() })
        let oldConstraints = Set(old.uniquenessConstraints.map { $0.sorted() })
        if constraints != oldConstraints {
            changes.append(.entityChanged(name, detail: "uniqueness constraints changed"))
        }
        if entity.declaration.versionHashModifier != old.declaration.versionHashModifier {
            changes.append(.entityChanged(name, detail: "version hash modifier changed"))
        }

        struct Property {
            var name: String
            var renamingIdentifier: String?
            var signature: String
        }
        // A signature covers everything the version hash covers, so that a difference is empty
        // exactly when the hashes agree.
        func properties(_ entity: Entity) -> [Property] {
            entity.attributes.map {
                Property(
                    name: $0.name, renamingIdentifier: $0.renamingIdentifier,
                    signature: "\($0.type)\($0.isOptional ? "?" : "")\($0.isTransient ? " transient" : "")"
                        + ($0.allowsExternalBinaryDataStorage ? " external" : ""))
            }
                + entity.relationships.map {
                    Property(
                        name: $0.name, renamingIdentifier: $0.renamingIdentifier,
                        signature: "\($0.kindName) \($0.destinationEntityName)\($0.isOptional ? "?" : "")"
                            + ($0.inverseName.map { " inverse \($0)" } ?? "") + ($0.isTransient ? " transient" : ""))
                }
        }
        let oldProperties = Dictionary(properties(old).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var matched = Set<String>()
        for property in properties(entity).sorted(by: { $0.name < $1.name }) {
            let previous: Property
            if let same = oldProperties[property.name] {
                previous = same
            } else if let oldName = property.renamingIdentifier, let renamed = oldProperties[oldName] {
                previous = renamed
                changes.append(.propertyRenamed(entity: name, from: oldName, to: property.name))
            } else {
                changes.append(.propertyAdded(entity: name, property: property.name))
                continue
            }
            matched.insert(previous.name)
            if previous.signature != property.signature {
                changes.append(
                    .propertyChanged(entity: name, property: property.name, detail: "\(previous.signature) -> \(property.signature)"))
            }
        }
        for property in properties(old).sorted(by: { $0.name < $1.name }) where !matched.contains(property.name) {
            changes.append(.propertyRemoved(entity: name, property: property.name))
        }
        return changes
    }
}
