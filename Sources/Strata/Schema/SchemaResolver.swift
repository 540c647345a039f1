import Foundation

/// Names that no property may use: they would shadow `ManagedObject` API. (Store columns of
/// their own start with an underscore, which no valid property name can share.)
let reservedPropertyNames: Set<String> = [
    "objectID", "entity", "context", "managedObjectContext", "isInserted", "isUpdated",
    "isDeleted", "isFault", "hasChanges", "description", "debugDescription", "hashValue",
    "self", "Type", "Protocol", "init", "changedValues", "committedValues",
]

private func isValidIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first else { return false }
    // Names start with a letter: stores name their own tables and columns with a leading underscore.
    guard CharacterSet.letters.contains(first) else { return false }
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_"))
    return name.unicodeScalars.allSatisfy { allowed.contains($0) }
}

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

    init(_ descriptions: [EntityDescription], configurations: [String: [String]], objectTypes: [String: AnyClass]) {
        self.descriptions = descriptions
        self.configurations = configurations
        self.objectTypes = objectTypes
    }

    mutating func problem(_ code: StrataError.Code, _ message: String, entity: String?, property: String? = nil) {
        problems.append(StrataError(code, message, entityName: entity, propertyName: property))
    }

    mutating func resolve() -> Resolution {
        // 1. Entity names.
        for description in descriptions {
            if !isValidIdentifier(description.name) {
                problem(.reservedName, "Entity name '\(description.name)' is not a valid identifier.", entity: description.name)
            }
            if byName[description.name] != nil {
                problem(.duplicateName, "Entity '\(description.name)' is declared more than once.", entity: description.name)
                continue
            }
            byName[description.name] = description
        }
        let unique = descriptions.filter { byName[$0.name] == $0 }
            .reduce(into: [EntityDescription]()) { list, entity in
                if !list.contains(where: { $0.name == entity.name }) { list.append(entity) }
            }

        // 2. Inheritance: unknown parents and cycles. A broken chain is cut so that the rest of
        // the checks can go on.
        var parent: [String: String] = [:]
        for entity in unique {
            guard let superName = entity.superentityName else { continue }
            if byName[superName] == nil {
                problem(
                    .unknownSuperentity,
                    "Entity '\(entity.name)' inherits from '\(superName)', which is not in the schema."
                        + didYouMean(superName, in: byName.keys.sorted()),
                    entity: entity.name)
            } else {
                parent[entity.name] = superName
            }
        }
        for entity in unique {
            var seen: [String] = [entity.name]
            var current = entity.name
            while let next = parent[current] {
                if next == entity.name {
                    problem(
                        .inheritanceCycle,
                        "Entity '\(entity.name)' inherits from itself: \((seen + [next]).joined(separator: " -> ")).",
                        entity: entity.name)
                    parent[entity.name] = nil
                    break
                }
                if seen.contains(next) { break }
                seen.append(next)
                current = next
            }
        }
        func ancestors(of name: String) -> [String] {
            var chain: [String] = []
            var current = name
            while let next = parent[current], !chain.contains(next), next != name {
                chain.append(next)
                current = next
            }
            return chain
        }
        func isKind(_ name: String, of other: String) -> Bool {
            name == other || ancestors(of: name).contains(other)
        }

        // 3. Properties: names, duplicates along the inheritance chain, defaults, rules.
        func allAttributes(_ name: String) -> [AttributeDescription] {
            (ancestors(of: name).reversed() + [name]).flatMap { byName[$0]?.attributes ?? [] }
        }
        func allRelationships(_ name: String) -> [RelationshipDescription] {
            (ancestors(of: name).reversed() + [name]).flatMap { byName[$0]?.relationships ?? [] }
        }
        var normalized: [String: EntityDescription] = [:]
        for var entity in unique {
            var seen = Set(ancestors(of: entity.name).flatMap { byName[$0]?.propertyNames ?? [] })
            for name in entity.propertyNames {
                if !isValidIdentifier(name) {
                    problem(.reservedName, "\(entity.name).\(name) is not a valid property name.", entity: entity.name, property: name)
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

        // 4. Relationships: destinations and inverses.
        var resolvedRelationships: [String: [RelationshipDescription]] = [:]
        for entity in unique {
            var own: [RelationshipDescription] = []
            for var relationship in entity.relationships {
                defer { own.append(relationship) }
                let destinationName = relationship.destinationEntityName
                guard byName[destinationName] != nil else {
                    problem(
                        .unknownDestination,
                        "\(entity.name).\(relationship.name) points to '\(destinationName)', which is not in the schema."
                            + didYouMean(destinationName, in: byName.keys.sorted()),
                        entity: entity.name, property: relationship.name)
                    continue
                }
                let candidates = allRelationships(destinationName)
                if let inverseName = relationship.inverseName {
                    guard let inverse = candidates.first(where: { $0.name == inverseName }) else {
                        problem(
                            .missingInverse,
                            "\(entity.name).\(relationship.name) names the inverse '\(inverseName)', but \(destinationName) has no such relationship."
                                + didYouMean(inverseName, in: candidates.map(\.name)),
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
                let pointingBack = candidates.filter {
                    $0.inverseName == relationship.name && isKind(entity.name, of: $0.destinationEntityName)
                }
                if let adopted = pointingBack.first {
                    relationship.inverseName = adopted.name
                    continue
                }
                // Infer when each side has exactly one unpaired relationship to the other.
                let named = Set(
                    allRelationships(entity.name).compactMap(\.inverseName)
                        + candidates.compactMap(\.inverseName))
                let fromHere = allRelationships(entity.name).filter {
                    $0.destinationEntityName == destinationName && $0.inverseName == nil && !named.contains($0.name)
                }
                let fromThere = candidates.filter {
                    $0.destinationEntityName == entity.name && $0.inverseName == nil && !named.contains($0.name)
                }
                if fromHere.count == 1, fromThere.count == 1 {
                    relationship.inverseName = fromThere[0].name
                } else if fromThere.count > 1 {
                    warnings.append(
                        "\(entity.name).\(relationship.name) has no inverse and \(destinationName) has several candidates (\(fromThere.map(\.name).joined(separator: ", "))); name the inverse.")
                } else {
                    warnings.append("\(entity.name).\(relationship.name) has no inverse; the other side will not be kept in step.")
                }
            }
            resolvedRelationships[entity.name] = own
        }

        // 5. Constraints and indexes name stored attributes or stored to-one relationships.
        for entity in unique {
            let attributes = Set(allAttributes(entity.name).filter { !$0.isTransient }.map(\.name))
            let toOne = Set(allRelationships(entity.name).filter { !$0.isToMany && !$0.isTransient }.map(\.name))
            let usable = attributes.union(toOne)
            func check(_ names: [String], what: String) {
                if names.isEmpty {
                    problem(.unknownConstraintProperty, "\(entity.name) has an empty \(what).", entity: entity.name)
                }
                for name in names where !usable.contains(name) {
                    let relationship = allRelationships(entity.name).first(where: { $0.name == name })
                    let attribute = allAttributes(entity.name).first(where: { $0.name == name })
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
                        "The \(what) on \(entity.name) uses '\(name)', which \(reason)." + didYouMean(name, in: usable.sorted()),
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
                if !indexNames.insert(index.name).inserted {
                    problem(.duplicateName, "\(entity.name) declares the index '\(index.name)' twice.", entity: entity.name)
                }
            }
        }

        // 6. Configurations name known entities.
        for (configuration, members) in configurations.sorted(by: { $0.key < $1.key }) {
            for member in members where byName[member] == nil {
                problem(
                    .unknownConfigurationEntity,
                    "Configuration '\(configuration)' lists '\(member)', which is not in the schema." + didYouMean(member, in: byName.keys.sorted()),
                    entity: member)
            }
        }

        // 7. Build entities, parents first.
        let ordered = unique.sorted { ancestors(of: $0.name).count < ancestors(of: $1.name).count }
        var built: [String: Entity] = [:]
        for description in ordered {
            guard let entity = byName[description.name] else { continue }
            let children = unique.filter { parent[$0.name] == entity.name }.map(\.name)
            let kinds = Set(unique.filter { isKind($0.name, of: entity.name) }.map(\.name))
            let relationships = resolvedRelationships[entity.name] ?? entity.relationships
            let superentity = parent[entity.name].flatMap { built[$0] }
            let hash = VersionHasher.entityHash(
                entity, superentityName: superentity?.name,
                attributes: (superentity?.attributes ?? []) + entity.attributes,
                relationships: (superentity?.relationships ?? []) + relationships,
                constraints: (superentity?.uniquenessConstraints ?? []) + entity.uniquenessConstraints)
            if entity.isAbstract && children.isEmpty {
                warnings.append("\(entity.name) is abstract but has no subentities, so it can have no instances.")
            }
            built[entity.name] = Entity(
                declaration: entity, superentity: superentity, subentityNames: children, kindNames: kinds,
                ownRelationships: relationships, versionHash: hash, objectType: objectTypes[entity.name])
        }
        let entities = unique.compactMap { built[$0.name] }
        return Resolution(entities: entities, problems: problems, warnings: warnings)
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
                .invalidValidationRule, "\(entity).\(name) has a minimum value \(minimum) above its maximum \(maximum).",
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
                    .invalidValidationRule, "\(entity).\(name) has a pattern that is not a valid regular expression: \(pattern)",
                    entity: entity, property: name)
            }
        }
        attribute.validation = rules
        return attribute
    }
}
