import Foundation

/// What a batch update may set, and from what: the rules every SQL store applies before it
/// compiles a batch update's new values into its dialect, so that the same requests are
/// accepted and refused with the same codes everywhere.
package enum BatchUpdateRules {
    /// The stored attribute named `name` of `entity`, which a batch update may set.
    ///
    /// - Throws: ``StrataError/Code/unknownKey`` for a relationship, a transient attribute or
    ///   an unknown name.
    package static func updatableAttribute(_ name: String, of entity: Entity) throws -> (Int, AttributeDescription) {
        guard let number = entity.attributeNumber(named: name) else {
            let isRelationship = entity.relationship(named: name) != nil
            throw StrataError(
                .unknownKey,
                isRelationship
                    ? "\(entity.name).\(name) is a relationship; batch updates set attributes only."
                    : "\(entity.name) has no attribute named '\(name)' to update." + didYouMean(name, in: entity.attributes.map(\.name)),
                entityName: entity.name, propertyName: name)
        }
        let attribute = entity.attributes[number]
        guard !attribute.isTransient else {
            throw StrataError(
                .unknownKey, "\(entity.name).\(name) is transient; it is not stored, so a batch update cannot set it.",
                entityName: entity.name, propertyName: name)
        }
        return (number, attribute)
    }

    /// Whether an attribute of type `source` may be copied into one of type `target` without
    /// losing anything: the same type, a wider integer, or an integer or float into a double.
    package static func canCopy(_ source: AttributeType, to target: AttributeType) -> Bool {
        if source == target { return true }
        switch (source, target) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.integer16, .double), (.integer32, .double), (.integer64, .double), (.float, .double): return true
        default: return false
        }
    }

    /// Whether arithmetic for an attribute of type `target` may read an attribute of type
    /// `source`: integers only for integer results; numbers but decimals, or dates for dates,
    /// otherwise.
    package static func canUseInArithmetic(_ source: AttributeType, for target: AttributeType) -> Bool {
        target.isInteger
            ? source.isInteger
            : (source.isNumeric && source != .decimal) || (source == .date && target == .date)
    }

    /// The stored attribute named `name` that the new value of `attribute` reads.
    ///
    /// - Throws: ``StrataError/Code/unknownKey`` when there is none.
    package static func sourceAttribute(
        _ name: String, for attribute: AttributeDescription, of entity: Entity, layout: StoreLayout.EntityLayout
    ) throws -> AttributeDescription {
        guard let number = entity.attributeNumber(named: name), layout.attributeColumns[number] != nil else {
            throw StrataError(
                .unknownKey,
                "The new value of \(entity.name).\(attribute.name) reads '\(name)', which is not a stored attribute of \(entity.name)."
                    + didYouMean(name, in: entity.attributes.map(\.name)),
                entityName: entity.name, propertyName: name)
        }
        return entity.attributes[number]
    }

    /// Refuses a new value no store keeps: a string holding U+0000.
    ///
    /// - Throws: ``StrataError/Code/unrepresentableValue``.
    package static func checkRepresentable(_ value: AttributeValue, for attribute: AttributeDescription, of entity: Entity) throws {
        guard value.containsNullCharacter else { return }
        throw StrataError(
            .unrepresentableValue, "The new value of \(entity.name).\(attribute.name) \(AttributeValue.nullCharacterProblem)",
            entityName: entity.name, propertyName: attribute.name)
    }

    /// The error for a value an attribute cannot take.
    package static func mismatch(_ attribute: AttributeDescription, of entity: Entity, _ problem: String) -> StrataError {
        StrataError(
            .typeMismatch, "\(entity.name).\(attribute.name) (\(attribute.type)) \(problem).", entityName: entity.name,
            propertyName: attribute.name)
    }
}
