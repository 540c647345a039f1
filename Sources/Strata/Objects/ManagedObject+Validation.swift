import Foundation

extension ManagedObject {
    /// Checks every validation rule of the object's entity and reports all failures together.
    ///
    /// Checked: non-optional attributes and to-one relationships have a value; numbers and
    /// dates lie within their minimum and maximum; strings and data respect their length
    /// bounds; strings match their pattern in full; to-many relationships hold between their
    /// minimum and maximum count. Transient attributes are checked too. Contexts run this for
    /// every inserted and updated object before a save.
    ///
    /// Values no store keeps exactly are refused too: a NaN (`Double`, `Float`, `Decimal`, or a
    /// date made from one), a floating-point negative zero, which SQLite would store as zero,
    /// and a string holding U+0000, which PostgreSQL cannot store.
    ///
    /// For example:
    ///
    /// ```swift
    /// do {
    ///     try movie.validateForSave()
    /// } catch let error as StrataError where error.code == .validationFailed {
    ///     for failure in error.details { print(failure.message) }   // one message per broken rule
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/validationFailed`` whose
    ///   ``StrataError/details`` hold one error per failure (codes
    ///   ``StrataError/Code/unrepresentableValue``, ``StrataError/Code/missingValue``, ``StrataError/Code/valueTooSmall``,
    ///   ``StrataError/Code/valueTooLarge``, ``StrataError/Code/patternMismatch``,
    ///   ``StrataError/Code/relationshipCountOutOfRange``).
    public final func validateForSave() throws {
        let failures = validationFailures()
        guard !failures.isEmpty else { return }
        throw StrataError(
            .validationFailed,
            "\(entity.name) \(objectID) failed validation: " + failures.map(\.message).joined(separator: " "),
            entityName: entity.name, objectID: objectID, details: failures)
    }

    /// Every validation failure of the object, empty when it is valid.
    ///
    /// For example:
    ///
    /// ```swift
    /// let problems = movie.validationFailures().map(\.message)   // empty when the movie can be saved
    /// ```
    public final func validationFailures() -> [StrataError] {
        if _isFault { _fireFault() }
        var failures: [StrataError] = []
        func fail(_ code: StrataError.Code, _ property: String, _ message: String) {
            failures.append(
                StrataError(code, "\(entity.name).\(property) \(message)", entityName: entity.name, propertyName: property, objectID: objectID))
        }
        for index in entity.requiredAttributeNumbers where _values[index].isNull {
            fail(.missingValue, entity.attributes[index].name, "is required but has no value.")
        }
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            switch attribute.type {
            case .double, .float, .decimal, .date:
                let value = _values[index]
                if value.isNaN {
                    fail(
                        .unrepresentableValue, attribute.name,
                        "is NaN, which cannot be saved: it is unequal to every value, itself included, and SQLite stores it as NULL. Use nil (an optional attribute) for a missing value.")
                } else if value.isNegativeZero {
                    fail(
                        .unrepresentableValue, attribute.name,
                        "is negative zero, which SQLite stores as zero, losing its sign. Save 0 instead.")
                }
            case .string:
                if _values[index].containsNullCharacter { fail(.unrepresentableValue, attribute.name, AttributeValue.nullCharacterProblem) }
            default:
                continue
            }
        }
        for index in entity.ruledAttributeNumbers {
            let value = _values[index]
            if value.isNull { continue }
            let attribute = entity.attributes[index]
            let rules = attribute.validation
            if let minimum = rules.minimumValue, AttributeValue.compare(value, minimum) == .orderedAscending {
                fail(.valueTooSmall, attribute.name, "is \(value), below its minimum \(minimum).")
            }
            if let maximum = rules.maximumValue, AttributeValue.compare(value, maximum) == .orderedDescending {
                fail(.valueTooLarge, attribute.name, "is \(value), above its maximum \(maximum).")
            }
            let length: Int? =
                switch value {
                case .string(let text): text.count
                case .data(let data): data.count
                default: nil
                }
            if let length {
                let unit = attribute.type == .string ? "characters" : "bytes"
                if let minimum = rules.minimumLength, length < minimum {
                    fail(.valueTooSmall, attribute.name, "has \(length) \(unit), fewer than its minimum \(minimum).")
                }
                if let maximum = rules.maximumLength, length > maximum {
                    fail(.valueTooLarge, attribute.name, "has \(length) \(unit), more than its maximum \(maximum).")
                }
            }
            if let pattern = rules.pattern, case .string(let text) = value {
                // `\A` and `\z`, not `^` and `$`: `$` also matches before a final newline, so
                // "abc\n" would pass the pattern "[a-z]+".
                let matches =
                    (try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z"))
                    .map { $0.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil } ?? false
                if !matches { fail(.patternMismatch, attribute.name, "is \(value), which does not match the pattern \(pattern).") }
            }
        }
        guard entity.hasRelationshipRules else { return failures }
        for (index, relationship) in entity.relationships.enumerated() {
            // A to-many relationship that was never loaded is loaded only if it has counts to check.
            let hasCounts = relationship.minimumCount > 0 || relationship.maximumCount > 0
            let value = hasCounts ? relationshipValue(at: index) : _relationships[index]
            switch value {
            case .toManyFault:
                continue
            case .toOne(let object):
                if object == nil && !relationship.isOptional {
                    fail(.missingValue, relationship.name, "is required but has no \(relationship.destinationEntityName).")
                }
            case .toMany(let objects):
                if objects.count < relationship.minimumCount {
                    fail(
                        .relationshipCountOutOfRange, relationship.name,
                        "holds \(objects.count) objects, fewer than its minimum \(relationship.minimumCount).")
                }
                if relationship.maximumCount > 0 && objects.count > relationship.maximumCount {
                    fail(
                        .relationshipCountOutOfRange, relationship.name,
                        "holds \(objects.count) objects, more than its maximum \(relationship.maximumCount).")
                }
            }
        }
        return failures
    }
}
