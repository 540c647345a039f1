import Foundation

/// Names that no property may use: they would shadow `ManagedObject` API. (Store columns of
/// their own start with an underscore, which no valid property name can share.)
let reservedPropertyNames: Set<String> = [
    "objectID", "entity", "context", "managedObjectContext", "isInserted", "isUpdated",
    "isDeleted", "isFault", "hasChanges", "description", "debugDescription", "hashValue",
    "self", "Type", "Protocol", "init", "changedValues", "committedValues",
]

private func isValidIdentifier(_ name: String) -> Bool {
    // Most names are ASCII; checking their bytes keeps CharacterSet (slow to build and query)
    // out of the path every name of every schema takes.
    if name.utf8.allSatisfy({ $0 < 0x80 }) {
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard let first = name.utf8.first, isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }
    guard let first = name.unicodeScalars.first else { return false }
    // Names start with a letter: stores name their own tables and columns with a leading underscore.
    guard identifierStartCharacters.contains(first) else { return false }
    return name.unicodeScalars.allSatisfy { identifierCharacters.contains($0) }
}

private let identifierStartCharacters = CharacterSet.letters
private let identifierCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_"))

/// Turns declarations into resolved entities, collecting every problem on the way.
struct SchemaResolver {
    struct Resolution {
        var entities: [Entity] = []
        var problems: [StrataError] = []
        var warnings: [String] = []
    }

    let descriptions: [EntityDescription]
    let configurations: [String: [String]]
    let objectTypes: [String: AnyClass]
    var byName: [String: EntityDescription] = [:]
    var problems: [StrataError] = []
    var warnings: [String] = []

    // State the steps of `resolve()` hand on to the later ones.
    /// The declarations, first of each name, in declaration order.
    private var unique: [EntityDescription] = []
    private var sortedEntityNames: [String]?
    /// Each entity's parent, inheritance cycles cut.
    private var parent: [String: String] = [:]
    private var ancestorsByName: [String: [String]] = [:]
    private var relationshipIndexes: [String: RelationshipIndex] = [:]
    /// Each entity's own relationships with their inverses resolved.
    private var resolvedRelationships: [String: [RelationshipDescription]] = [:]

    /// Whether two unpaired relationships between two entities become each other's inverse
    /// (SwiftData's inference for `@Entity` classes). Xcode models say exactly which
    /// relationships are inverses, as Core Data reads them, so they infer none.
    private let infersInverses: Bool

    init(
        _ descriptions: [EntityDescription], configurations: [String: [String]], objectTypes: [String: AnyClass],
        infersInverses: Bool = true
    ) {
        self.descriptions = descriptions
        self.configurations = configurations
        self.objectTypes = objectTypes
        self.infersInverses = infersInverses
    }

    mutating func problem(_ code: StrataError.Code, _ message: String, entity: String?, property: String? = nil) {
        problems.append(StrataError(code, message, entityName: entity, propertyName: property))
    }

    /// Resolves and checks the declarations.
    ///
    /// - Complexity: Linear in the number of entities and properties (times the depth of
    ///   inheritance, since entities copy what they inherit). Each step looks entities and
    ///   relationships up in dictionaries built once, never by scanning every entity per entity:
    ///   models of tens of thousands of entities build in a fraction of a second.
    mutating func resolve() -> Resolution {
        collectEntityNames()
        resolveInheritance()
        checkProperties()
        indexRelationships()
        resolveRelationships()
        checkConstraintsAndIndexes()
        checkConfigurations()
        let entities = buildEntities()
        // Names that SQL would take for one (SQLite ignores the case of ASCII letters).
        reportIdentifierCollisions(in: entities)
        return Resolution(entities: entities, problems: problems, warnings: warnings)
    }

    // MARK: Steps, in order

    /// Entity names. The first declaration of a name is the one kept.
    private mutating func collectEntityNames() {
        unique.reserveCapacity(descriptions.count)
        for description in descriptions {
            if !isValidIdentifier(description.name) {
                problem(
                    .reservedName, "Entity name '\(description.name)' is not a valid identifier.",
                    entity: description.name)
            }
            if byName[description.name] != nil {
                problem(
                    .duplicateName, "Entity '\(description.name)' is declared more than once.", entity: description.name
                )
                continue
            }
            byName[description.name] = description
            unique.append(description)
        }
    }

    /// Every entity name, sorted (for "did you mean" suggestions); computed on first use.
    private mutating func entityNames() -> [String] {
        if let sortedEntityNames { return sortedEntityNames }
        let names = byName.keys.sorted()
        sortedEntityNames = names
        return names
    }

    /// Inheritance: unknown parents and cycles. A broken chain is cut so that the rest of
    /// the checks can go on.
    private mutating func resolveInheritance() {
        for entity in unique {
            guard let superName = entity.superentityName else { continue }
            if byName[superName] == nil {
                let names = entityNames()
                problem(
                    .unknownSuperentity,
                    "Entity '\(entity.name)' inherits from '\(superName)', which is not in the schema."
                        + didYouMean(superName, in: names),
                    entity: entity.name)
            } else {
                parent[entity.name] = superName
            }
        }
        var parent = self.parent
        cutInheritanceCycles(in: unique, parent: &parent)
        self.parent = parent
        // Every entity's ancestors, nearest first, each chain computed once from its parent's.
        // With cycles cut, parents form a forest, so every walk up ends.
        ancestorsByName.reserveCapacity(unique.count)
        for entity in unique where ancestorsByName[entity.name] == nil {
            var unknown: [String] = []
            var current: String? = entity.name
            while let name = current, ancestorsByName[name] == nil {
                unknown.append(name)
                current = parent[name]
            }
            for name in unknown.reversed() {
                ancestorsByName[name] = parent[name].map { [$0] + (ancestorsByName[$0] ?? []) } ?? []
            }
        }
    }

    /// An entity's ancestors, nearest first.
    private func ancestors(of name: String) -> [String] { ancestorsByName[name] ?? [] }

    /// Whether `name` is `other` or one of its subentities.
    private func isKind(_ name: String, of other: String) -> Bool {
        name == other || ancestors(of: name).contains(other)
    }

    /// An entity's attributes, inherited ones first.
    private func allAttributes(_ name: String) -> [AttributeDescription] {
        (ancestors(of: name).reversed() + [name]).flatMap { byName[$0]?.attributes ?? [] }
    }

    /// Properties: names, duplicates along the inheritance chain, defaults, rules.
    private mutating func checkProperties() {
        var normalized: [String: EntityDescription] = [:]
        normalized.reserveCapacity(unique.count)
        for var entity in unique {
            var seen = Set(ancestors(of: entity.name).flatMap { byName[$0]?.propertyNames ?? [] })
            for name in entity.propertyNames {
                if !isValidIdentifier(name) {
                    problem(
                        .reservedName, "\(entity.name).\(name) is not a valid property name.", entity: entity.name,
                        property: name)
                } else if reservedPropertyNames.contains(name) {
                    problem(
                        .reservedName, "\(entity.name).\(name) uses a name reserved by Strata; rename the property.",
                        entity: entity.name, property: name)
                }
                if !seen.insert(name).inserted {
                    problem(
                        .duplicateName,
                        "\(entity.name).\(name) is declared more than once (inherited properties included).",
                        entity: entity.name, property: name)
                }
            }
            for index in entity.attributes.indices {
                entity.attributes[index] = checked(entity.attributes[index], in: entity.name)
            }
            for relationship in entity.relationships {
                if relationship.minimumCount < 0 || relationship.maximumCount < 0
                    || (relationship.maximumCount > 0 && relationship.minimumCount > relationship.maximumCount)
                {
                    problem(
                        .invalidValidationRule,
                        "\(entity.name).\(relationship.name) has an invalid count range \(relationship.minimumCount)...\(relationship.maximumCount).",
                        entity: entity.name, property: relationship.name)
                }
                if relationship.isOrdered && !relationship.isToMany {
                    problem(
                        .invalidValidationRule, "\(entity.name).\(relationship.name) is ordered but not to-many.",
                        entity: entity.name, property: relationship.name)
                }
            }
            normalized[entity.name] = entity
        }
        byName = normalized
    }

    /// Each entity's relationships as declared (inherited ones first), indexed once for the
    /// inverse lookups of step 4 and the checks of step 5.
    private mutating func indexRelationships() {
        relationshipIndexes.reserveCapacity(unique.count)
        for entity in unique {
            let all = (ancestors(of: entity.name).reversed() + [entity.name]).flatMap {
                byName[$0]?.relationships ?? []
            }
            relationshipIndexes[entity.name] = RelationshipIndex(all)
        }
    }

    /// An entity's relationships, inherited ones first, indexed.
    private func allRelationships(_ name: String) -> RelationshipIndex {
        relationshipIndexes[name] ?? RelationshipIndex([])
    }

    /// Relationships: destinations and inverses.
    private mutating func resolveRelationships() {
        resolvedRelationships.reserveCapacity(unique.count)
        for entity in unique {
            var own: [RelationshipDescription] = []
            own.reserveCapacity(entity.relationships.count)
            let here = allRelationships(entity.name)
            for var relationship in entity.relationships {
                defer { own.append(relationship) }
                let destinationName = relationship.destinationEntityName
                guard byName[destinationName] != nil else {
                    let names = entityNames()
                    problem(
                        .unknownDestination,
                        "\(entity.name).\(relationship.name) points to '\(destinationName)', which is not in the schema."
                            + didYouMean(destinationName, in: names),
                        entity: entity.name, property: relationship.name)
                    continue
                }
                let candidates = allRelationships(destinationName)
                if let inverseName = relationship.inverseName {
                    guard let inverse = candidates.first(named: inverseName) else {
                        problem(
                            .missingInverse,
                            "\(entity.name).\(relationship.name) names the inverse '\(inverseName)', but \(destinationName) has no such relationship."
                                + didYouMean(inverseName, in: candidates.all.map(\.name)),
                            entity: entity.name, property: relationship.name)
                        continue
                    }
                    if !isKind(entity.name, of: inverse.destinationEntityName) {
                        problem(
                            .mismatchedInverse,
                            "\(entity.name).\(relationship.name) names \(destinationName).\(inverseName) as its inverse, but that relationship points to '\(inverse.destinationEntityName)', not to \(entity.name).",
                            entity: entity.name, property: relationship.name)
                    } else if let back = inverse.inverseName, back != relationship.name {
                        problem(
                            .mismatchedInverse,
                            "\(entity.name).\(relationship.name) names \(destinationName).\(inverseName) as its inverse, but that relationship names '\(back)' as its own inverse.",
                            entity: entity.name, property: relationship.name)
                    }
                    continue
                }
                // Adopt an inverse named from the other side.
                let kinds = [entity.name] + ancestors(of: entity.name)
                if let adopted = candidates.first(naming: relationship.name, pointingToAnyOf: kinds) {
                    relationship.inverseName = adopted.name
                    continue
                }
                // Infer when each side has exactly one unpaired relationship to the other.
                func isNamedAsInverse(_ name: String) -> Bool {
                    here.namedAsInverse.contains(name) || candidates.namedAsInverse.contains(name)
                }
                let fromHere = here.unpaired(to: destinationName).filter { !isNamedAsInverse($0.name) }
                let fromThere = candidates.unpaired(to: entity.name).filter { !isNamedAsInverse($0.name) }
                if infersInverses, fromHere.count == 1, fromThere.count == 1 {
                    relationship.inverseName = fromThere[0].name
                } else if infersInverses, fromThere.count > 1 {
                    warnings.append(
                        "\(entity.name).\(relationship.name) has no inverse and \(destinationName) has several candidates (\(fromThere.map(\.name).joined(separator: ", "))); name the inverse."
                    )
                } else {
                    warnings.append(
                        "\(entity.name).\(relationship.name) has no inverse; the other side will not be kept in step.")
                }
            }
            resolvedRelationships[entity.name] = own
        }
    }

    /// Constraints and indexes name stored attributes or stored to-one relationships.
    private mutating func checkConstraintsAndIndexes() {
        for entity in unique {
            let relationships = allRelationships(entity.name)
            guard
                !entity.uniquenessConstraints.isEmpty || !entity.indexes.isEmpty
                    || entity.attributes.contains(where: { $0.isIndexed && $0.isTransient })
            else { continue }
            let attributes = allAttributes(entity.name)
            let stored = Set(attributes.filter { !$0.isTransient }.map(\.name))
            let toOne = Set(relationships.all.filter { !$0.isToMany && !$0.isTransient }.map(\.name))
            let usable = stored.union(toOne)
            func check(_ names: [String], what: String) {
                if names.isEmpty {
                    problem(.unknownConstraintProperty, "\(entity.name) has an empty \(what).", entity: entity.name)
                }
                for name in names where !usable.contains(name) {
                    let relationship = relationships.first(named: name)
                    let attribute = attributes.first(where: { $0.name == name })
                    let reason =
                        if attribute?.isTransient == true || relationship?.isTransient == true {
                            "is transient and not stored"
                        } else if relationship != nil {
                            "is a to-many relationship"
                        } else {
                            "is not a property of \(entity.name)"
                        }
                    problem(
                        .unknownConstraintProperty,
                        "The \(what) on \(entity.name) uses '\(name)', which \(reason)."
                            + didYouMean(name, in: usable.sorted()),
                        entity: entity.name, property: name)
                }
            }
            for constraint in entity.uniquenessConstraints { check(constraint, what: "uniqueness constraint") }
            for attribute in entity.attributes where attribute.isIndexed && attribute.isTransient {
                problem(
                    .unknownConstraintProperty,
                    "\(entity.name).\(attribute.name) is indexed but transient; transient attributes are not stored.",
                    entity: entity.name, property: attribute.name)
            }
            var indexNames = Set<String>()
            for index in entity.indexes {
                check(index.elements.map(\.propertyName), what: "index '\(index.name)'")
                // Stores name an index after its entity and its name joined with dots; a name
                // with a dot could take the name of another index.
                if !isValidIdentifier(index.name) {
                    problem(
                        .reservedName,
                        "\(entity.name) declares an index named '\(index.name)', which is not a valid identifier.",
                        entity: entity.name)
                }
                if !indexNames.insert(index.name).inserted {
                    problem(
                        .duplicateName, "\(entity.name) declares the index '\(index.name)' twice.", entity: entity.name)
                }
            }
        }
    }

    /// Configurations name known entities.
    private mutating func checkConfigurations() {
        for (configuration, members) in configurations.sorted(by: { $0.key < $1.key }) {
            for member in members where byName[member] == nil {
                let names = entityNames()
                problem(
                    .unknownConfigurationEntity,
                    "Configuration '\(configuration)' lists '\(member)', which is not in the schema."
                        + didYouMean(member, in: names),
                    entity: member)
            }
        }
    }

    /// Build entities, parents first. Children and kinds are gathered in one pass over the
    /// entities (each entity adds itself to its parent's children and to every ancestor's
    /// kinds), in declaration order.
    private mutating func buildEntities() -> [Entity] {
        var children: [String: [String]] = [:]
        var kinds: [String: Set<String>] = [:]
        for entity in unique {
            if let parentName = parent[entity.name] { children[parentName, default: []].append(entity.name) }
            kinds[entity.name, default: []].insert(entity.name)
            for ancestor in ancestors(of: entity.name) { kinds[ancestor, default: []].insert(entity.name) }
        }
        // A stable sort by depth keeps declaration order among entities of the same depth.
        let ordered = unique.enumerated()
            .map { (depth: ancestors(of: $0.element.name).count, offset: $0.offset, entity: $0.element) }
            .sorted { ($0.depth, $0.offset) < ($1.depth, $1.offset) }
            .map(\.entity)
        var built: [String: Entity] = [:]
        built.reserveCapacity(unique.count)
        for description in ordered {
            guard let entity = byName[description.name] else { continue }
            let subentityNames = children[entity.name] ?? []
            let relationships = resolvedRelationships[entity.name] ?? entity.relationships
            let superentity = parent[entity.name].flatMap { built[$0] }
            let hash = VersionHasher.entityHash(
                entity, superentityName: superentity?.name,
                attributes: (superentity?.attributes ?? []) + entity.attributes,
                relationships: (superentity?.relationships ?? []) + relationships,
                constraints: (superentity?.uniquenessConstraints ?? []) + entity.uniquenessConstraints)
            if entity.isAbstract && subentityNames.isEmpty {
                warnings.append("\(entity.name) is abstract but has no subentities, so it can have no instances.")
            }
            built[entity.name] = Entity(
                declaration: entity, superentity: superentity, subentityNames: subentityNames,
                kindNames: kinds[entity.name] ?? [entity.name],
                ownRelationships: relationships, versionHash: hash, objectType: objectTypes[entity.name])
        }
        return unique.compactMap { built[$0.name] }
    }

    /// Reports each inheritance cycle once, at the member declared first, and cuts it there by
    /// removing that member's parent. Every entity is walked at most once.
    private mutating func cutInheritanceCycles(in entities: [EntityDescription], parent: inout [String: String]) {
        var position: [String: Int] = [:]
        for (offset, entity) in entities.enumerated() { position[entity.name] = offset }
        var finished = Set<String>()
        for entity in entities where !finished.contains(entity.name) {
            // Walk up until a root, an entity already finished, or an entity on this walk (a cycle).
            var path: [String] = []
            var onPath: [String: Int] = [:]
            var current = entity.name
            while true {
                onPath[current] = path.count
                path.append(current)
                guard let next = parent[current], !finished.contains(next) else { break }
                if let start = onPath[next] {
                    let cycle = Array(path[start...])
                    // Start from the member declared first: the chain from it, parent by parent.
                    let first = cycle.min { (position[$0] ?? 0) < (position[$1] ?? 0) } ?? next
                    var members = [first]
                    var member = first
                    while let up = parent[member], up != first {
                        members.append(up)
                        member = up
                    }
                    problem(
                        .inheritanceCycle,
                        "Entity '\(first)' inherits from itself: \((members + [first]).joined(separator: " -> ")).",
                        entity: first)
                    parent[first] = nil
                    break
                }
                current = next
            }
            finished.formUnion(path)
        }
    }

    /// Checks an attribute's default value and validation rules; returns it with values
    /// converted to the attribute's type where an exact conversion exists.
    mutating func checked(_ attribute: AttributeDescription, in entity: String) -> AttributeDescription {
        var attribute = attribute
        let name = attribute.name
        if !attribute.defaultValue.isNull {
            if let converted = attribute.defaultValue.converted(to: attribute.type) {
                attribute.defaultValue = converted
            } else {
                problem(
                    .invalidDefaultValue,
                    "\(entity).\(name) is \(attribute.type); its default value \(attribute.defaultValue) is a \(attribute.defaultValue.kindName).",
                    entity: entity, property: name)
            }
        }
        var rules = attribute.validation
        let ordered = attribute.type.isNumeric || attribute.type == .date
        for (label, bound) in [("minimum", rules.minimumValue), ("maximum", rules.maximumValue)] {
            guard let bound else { continue }
            if !ordered {
                problem(
                    .invalidValidationRule, "\(entity).\(name) is \(attribute.type), which has no \(label) value.",
                    entity: entity, property: name)
            } else if let converted = bound.converted(to: attribute.type), !converted.isNull {
                if label == "minimum" { rules.minimumValue = converted } else { rules.maximumValue = converted }
            } else {
                problem(
                    .invalidValidationRule,
                    "\(entity).\(name) is \(attribute.type); its \(label) value \(bound) is a \(bound.kindName).",
                    entity: entity, property: name)
            }
        }
        if let minimum = rules.minimumValue, let maximum = rules.maximumValue,
            let order = AttributeValue.compare(minimum, maximum), order == .orderedDescending
        {
            problem(
                .invalidValidationRule,
                "\(entity).\(name) has a minimum value \(minimum) above its maximum \(maximum).",
                entity: entity, property: name)
        }
        if rules.minimumLength != nil || rules.maximumLength != nil {
            if attribute.type != .string && attribute.type != .binaryData {
                problem(
                    .invalidValidationRule, "\(entity).\(name) is \(attribute.type), which has no length.",
                    entity: entity, property: name)
            }
            if (rules.minimumLength ?? 0) < 0 || (rules.maximumLength ?? 0) < 0
                || (rules.maximumLength.map { (rules.minimumLength ?? 0) > $0 } ?? false)
            {
                problem(
                    .invalidValidationRule,
                    "\(entity).\(name) has an invalid length range \(rules.minimumLength ?? 0)...\(rules.maximumLength.map(String.init) ?? "").",
                    entity: entity, property: name)
            }
        }
        if let pattern = rules.pattern {
            if attribute.type != .string {
                problem(
                    .invalidValidationRule, "\(entity).\(name) is \(attribute.type); only strings can match a pattern.",
                    entity: entity, property: name)
            } else if (try? NSRegularExpression(pattern: pattern)) == nil {
                problem(
                    .invalidValidationRule,
                    "\(entity).\(name) has a pattern that is not a valid regular expression: \(pattern)",
                    entity: entity, property: name)
            }
        }
        attribute.validation = rules
        return attribute
    }
}

/// The relationships of one entity (inherited ones first), looked up by name, by the inverse
/// they name and their destination, and by destination among those that name no inverse.
private struct RelationshipIndex {
    private struct Pairing: Hashable {
        var inverseName: String
        var destination: String
    }

    let all: [RelationshipDescription]
    /// The names that some relationship of the entity names as its inverse.
    let namedAsInverse: Set<String>
    private let byName: [String: RelationshipDescription]
    /// The position in `all` of the first relationship naming each (inverse, destination) pair.
    private let byPairing: [Pairing: Int]
    private let unpairedByDestination: [String: [RelationshipDescription]]

    init(_ relationships: [RelationshipDescription]) {
        all = relationships
        var byName: [String: RelationshipDescription] = [:]
        var byPairing: [Pairing: Int] = [:]
        var unpaired: [String: [RelationshipDescription]] = [:]
        for (position, relationship) in relationships.enumerated() {
            if byName[relationship.name] == nil { byName[relationship.name] = relationship }
            if let inverse = relationship.inverseName {
                let pairing = Pairing(inverseName: inverse, destination: relationship.destinationEntityName)
                if byPairing[pairing] == nil { byPairing[pairing] = position }
            } else {
                unpaired[relationship.destinationEntityName, default: []].append(relationship)
            }
        }
        self.byName = byName
        self.byPairing = byPairing
        self.unpairedByDestination = unpaired
        self.namedAsInverse = Set(byPairing.keys.map(\.inverseName))
    }

    /// The first relationship named `name`.
    func first(named name: String) -> RelationshipDescription? { byName[name] }

    /// The first relationship, in declaration order, that names `inverseName` as its inverse
    /// and points to one of `destinations` (an entity and its ancestors).
    func first(naming inverseName: String, pointingToAnyOf destinations: [String]) -> RelationshipDescription? {
        let positions = destinations.compactMap { byPairing[Pairing(inverseName: inverseName, destination: $0)] }
        return positions.min().map { all[$0] }
    }

    /// The relationships to `destination` that name no inverse, in declaration order.
    func unpaired(to destination: String) -> [RelationshipDescription] { unpairedByDestination[destination] ?? [] }
}
