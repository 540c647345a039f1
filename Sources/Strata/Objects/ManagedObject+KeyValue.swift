import Foundation

// Dynamic access by property name, for tools, importers and models without classes.
extension ManagedObject {
    /// The value of the attribute or relationship named `key`.
    ///
    /// Attributes give their natural Swift type (`Int16`, `Int32`, `Int64`, `Double`, `Float`,
    /// `Decimal`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`; `Codable` attributes give
    /// their JSON decoded into arrays, dictionaries, strings and numbers). A to-one relationship
    /// gives a `ManagedObject`, an unordered to-many a `Set<ManagedObject>`, an ordered one an
    /// `[ManagedObject]`. No value gives `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let title = try movie.value(forKey: "title") as? String   // "Heat"
    /// let director = try movie.value(forKey: "director") as? ManagedObject
    /// let reviews = try movie.value(forKey: "reviews") as? Set<ManagedObject>
    /// ```
    ///
    /// - Parameter key: An attribute or relationship name.
    /// - Returns: The value, or `nil` when there is none.
    /// - Throws: ``StrataError/Code/unknownKey`` when the entity has no property named `key`.
    public final func value(forKey key: String) throws -> Any? {
        try checkNotDeleted(key)
        if _isFault { _fireFault() }
        if let index = entity.attributeNumber(named: key) {
            return Self.swiftValue(_values[index], type: entity.attributes[index].type)
        }
        if let index = entity.relationshipNumber(named: key) {
            return Self.swiftValue(relationshipValue(at: index), relationship: entity.relationships[index])
        }
        throw unknownKey(key)
    }

    /// The stored form of the attribute named `key`.
    ///
    /// For example:
    ///
    /// ```swift
    /// if case .date(let released) = try movie.attributeValue(forKey: "releaseDate") {
    ///     print(released)
    /// }
    /// ```
    ///
    /// - Throws: ``StrataError/Code/unknownKey`` when the entity has no attribute named `key`.
    public final func attributeValue(forKey key: String) throws -> AttributeValue {
        if _isFault { _fireFault() }
        guard let index = entity.attributeNumber(named: key) else { throw unknownKey(key) }
        return _values[index]
    }

    /// Sets the attribute or relationship named `key`, checking the value's type first.
    ///
    /// Integers of any Swift integer type (and `NSNumber`s holding integers, as
    /// `JSONSerialization` gives) are accepted for integer attributes when they fit;
    /// `Double`, `Float` and integers for floating-point and decimal attributes; `Substring` for
    /// strings; `[UInt8]` for binary data; any `Encodable` value (or JSON-compatible arrays and
    /// dictionaries) for `Codable` attributes; `nil` (or ``AttributeValue/null``) for any
    /// attribute. Relationships take a managed object of the destination entity (to-one) or a
    /// collection of them (to-many); inverses are kept in step.
    ///
    /// Setting a value equal to the current one records no change.
    ///
    /// For example:
    ///
    /// ```swift
    /// try movie.setValue("Heat", forKey: "title")
    /// try movie.setValue(1995, forKey: "year")          // an Int, stored in the Int16 attribute
    /// try movie.setValue(director, forKey: "director")  // director.directed now holds the movie
    /// ```
    ///
    /// - Parameters:
    ///   - value: The new value.
    ///   - key: An attribute or relationship name.
    /// - Throws: ``StrataError/Code/unknownKey`` for an unknown name (with the closest existing
    ///   one), ``StrataError/Code/typeMismatch`` for a value of the wrong type,
    ///   ``StrataError/Code/valueOutOfRange`` for an integer that does not fit.
    public final func setValue(_ value: Any?, forKey key: String) throws {
        try checkNotDeleted(key)
        if let index = entity.attributeNumber(named: key) {
            let attribute = entity.attributes[index]
            _setStoredValue(try storedValue(from: value, for: attribute), at: index)
            return
        }
        if let index = entity.relationshipNumber(named: key) {
            setRelationship(try relationshipValue(from: value, for: entity.relationships[index]), at: index)
            return
        }
        throw unknownKey(key)
    }

    /// The changed attributes and relationships and their new values.
    ///
    /// For an object that was never saved, every attribute with a value and every non-empty
    /// relationship. A value that was changed and then set back counts as unchanged.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.title = "Heat (1995)"
    /// movie.changedValues()   // ["title": "Heat (1995)"]
    /// ```
    public final func changedValues() -> [String: Any?] {
        var changes: [String: Any?] = [:]
        for (index, attribute) in entity.attributes.enumerated() {
            let current = _values[index]
            if let committed = _committedValues {
                if committed[index] != current { changes[attribute.name] = Self.swiftValue(current, type: attribute.type) }
            } else if !current.isNull {
                changes[attribute.name] = Self.swiftValue(current, type: attribute.type)
            }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            let current = _relationships[index]
            if let committed = _committedRelationships {
                if !committed[index].isSame(as: current, ordered: relationship.isOrdered) {
                    changes[relationship.name] = Self.swiftValue(current, relationship: relationship)
                }
            } else if !current.objects.isEmpty {
                changes[relationship.name] = Self.swiftValue(current, relationship: relationship)
            }
        }
        return changes
    }

    /// The values last committed to the store for `keys` (all properties when `nil`).
    ///
    /// An object that was never saved has no committed values and returns an empty dictionary.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.title = "Heat (1995)"
    /// let saved = try movie.committedValues(forKeys: ["title"])   // ["title": "Heat"]
    /// ```
    ///
    /// - Throws: ``StrataError/Code/unknownKey`` for a name that is not a property.
    public final func committedValues(forKeys keys: [String]? = nil) throws -> [String: Any?] {
        for key in keys ?? [] where !entity.propertyNames.contains(key) {
            throw unknownKey(key)
        }
        guard let committed = _committedValues else { return [:] }
        var result: [String: Any?] = [:]
        for key in keys ?? entity.propertyNames {
            if let index = entity.attributeNumber(named: key) {
                result[key] = Self.swiftValue(committed[index], type: entity.attributes[index].type)
            } else if let index = entity.relationshipNumber(named: key) {
                _ = relationshipValue(at: index)
                let relationship = _committedRelationships?[index] ?? _relationships[index]
                result[key] = Self.swiftValue(relationship, relationship: entity.relationships[index])
            } else {
                throw unknownKey(key)
            }
        }
        return result
    }

    /// Throws ``StrataError/Code/objectDeleted`` for an object whose deletion was saved.
    func checkNotDeleted(_ key: String?) throws {
        guard _wasDeletedAndSaved else { return }
        throw StrataError(
            .objectDeleted,
            "\(entity.name) \(objectID) was deleted and the deletion saved; it can no longer be read or changed.",
            entityName: entity.name, propertyName: key, objectID: objectID)
    }

    // MARK: Conversions

    private func unknownKey(_ key: String) -> StrataError {
        StrataError(
            .unknownKey,
            "\(entity.name) has no attribute or relationship named '\(key)'." + didYouMean(key, in: entity.propertyNames),
            entityName: entity.name, propertyName: key, objectID: objectID)
    }

    static func swiftValue(_ value: AttributeValue, type: AttributeType) -> Any? {
        switch value {
        case .null: return nil
        case .integer(let number):
            switch type {
            case .integer16: return Int16(truncatingIfNeeded: number)
            case .integer32: return Int32(truncatingIfNeeded: number)
            default: return number
            }
        case .double(let number): return number
        case .float(let number): return number
        case .decimal(let number): return number
        case .string(let text): return text
        case .boolean(let flag): return flag
        case .date(let date): return date
        case .data(let data): return data
        case .uuid(let uuid): return uuid
        case .url(let url): return url
        case .codable(let json): return try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        }
    }

    static func swiftValue(_ value: RelationshipValue, relationship: RelationshipDescription) -> Any? {
        switch value {
        case .toOne(let object): return object
        case .toMany(let objects): return relationship.isOrdered ? objects : Set(objects)
        case .toManyFault: return nil
        }
    }

    private static func mismatch(_ attribute: AttributeDescription, _ value: Any, entity: Entity, objectID: ObjectID?)
        -> StrataError
    {
        StrataError(
            .typeMismatch,
            "\(entity.name).\(attribute.name) is a\(attribute.type == .integer16 || attribute.type == .integer32 || attribute.type == .integer64 ? "n" : "") \(attribute.type) attribute; got a value of type \(Swift.type(of: value)).",
            entityName: entity.name, propertyName: attribute.name, objectID: objectID)
    }

    func storedValue(from value: Any?, for attribute: AttributeDescription) throws -> AttributeValue {
        try Self.storedValue(from: value, for: attribute, of: entity, objectID: objectID)
    }

    /// The stored form of a Swift value for an attribute of `entity`, checked against the
    /// attribute's type (`nil` and `NSNull`-like empties become ``AttributeValue/null``).
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/typeMismatch`` or
    ///   ``StrataError/Code/valueOutOfRange``.
    static func storedValue(from value: Any?, for attribute: AttributeDescription, of entity: Entity, objectID: ObjectID?)
        throws -> AttributeValue
    {
        func mismatch(_ attribute: AttributeDescription, _ value: Any) -> StrataError {
            Self.mismatch(attribute, value, entity: entity, objectID: objectID)
        }
        guard var value = Self.unwrapped(value) else { return .null }
        // A stored integer goes through the range check below, so that it reports
        // `valueOutOfRange` like any other integer that does not fit.
        if case .integer(let integer)? = value as? AttributeValue, attribute.type.isInteger {
            value = integer
        }
        if let stored = value as? AttributeValue {
            guard let converted = stored.converted(to: attribute.type) else { throw mismatch(attribute, value) }
            return converted
        }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            guard let integer = Self.integer(from: value) else { throw mismatch(attribute, value) }
            guard let wide = Int64(exactly: integer), attribute.type.integerRange?.contains(wide) == true else {
                throw StrataError(
                    .valueOutOfRange,
                    "\(integer) does not fit \(entity.name).\(attribute.name), an \(attribute.type) attribute (\(attribute.type.integerRange.map { "\($0.lowerBound)...\($0.upperBound)" } ?? "")).",
                    entityName: entity.name, propertyName: attribute.name, objectID: objectID)
            }
            return .integer(wide)
        case .double:
            if let number = value as? Double { return .double(number) }
            if let number = value as? Float { return .double(Double(number)) }
            if let integer = value as? any BinaryInteger, let number = Double(exactly: integer) { return .double(number) }
        case .float:
            if let number = value as? Float { return .float(number) }
            if let number = value as? Double { return .float(Float(number)) }
            if let integer = value as? any BinaryInteger, let number = Float(exactly: integer) { return .float(number) }
        case .decimal:
            if let number = value as? Decimal { return .decimal(number) }
            if let integer = value as? any BinaryInteger, let wide = Int64(exactly: integer) { return .decimal(Decimal(wide)) }
            if let number = value as? Double, number.isFinite {
                return AttributeValue.double(number).converted(to: .decimal) ?? .decimal(Decimal(number))
            }
            // Through the Float's own shortest description, so that 0.1 as Float becomes 0.1 and
            // not the 0.100000001490116... that widening it to Double would give.
            if let number = value as? Float, number.isFinite,
                let decimal = Decimal(string: "\(number)", locale: Locale(identifier: "en_US_POSIX"))
            {
                return .decimal(decimal)
            }
        case .string:
            if let text = value as? String { return .string(text) }
            if let text = value as? Substring { return .string(String(text)) }
        case .boolean:
            if let flag = value as? Bool { return .boolean(flag) }
        case .date:
            if let date = value as? Date { return .date(date) }
        case .binaryData:
            if let data = value as? Data { return .data(data) }
            if let bytes = value as? [UInt8] { return .data(Data(bytes)) }
        case .uuid:
            if let uuid = value as? UUID { return .uuid(uuid) }
        case .uri:
            if let url = value as? URL { return .url(url) }
        case .codable:
            if JSONSerialization.isValidJSONObject(value),
                // The same output options as CodableAttributeCoding, so that a value set here and
                // the same value set through a typed property have equal bytes.
                let data = try? JSONSerialization.data(
                    withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
            {
                return .codable(data)
            }
            if let encodable = value as? any Encodable {
                do {
                    return .codable(try CodableAttributeCoding.encode(encodable))
                } catch {
                    throw StrataError(
                        .typeMismatch, "\(entity.name).\(attribute.name) could not encode the value as JSON: \(error)",
                        entityName: entity.name, propertyName: attribute.name, objectID: objectID)
                }
            }
        }
        throw mismatch(attribute, value)
    }

    func relationshipValue(from value: Any?, for relationship: RelationshipDescription) throws -> RelationshipValue {
        let destination = relationship.destinationEntityName
        func checked(_ object: Any) throws -> ManagedObject {
            guard let object = object as? ManagedObject, object.entity.superentityChainContains(destination) else {
                throw StrataError(
                    .typeMismatch,
                    "\(entity.name).\(relationship.name) holds \(destination) objects; got \(Self.describe(object)).",
                    entityName: entity.name, propertyName: relationship.name, objectID: objectID)
            }
            return object
        }
        let value = Self.unwrapped(value)
        if !relationship.isToMany {
            return .toOne(try value.map(checked))
        }
        guard let value else { return .toMany([]) }
        let elements: [Any]
        if let objects = value as? [ManagedObject] {
            elements = objects
        } else if let objects = value as? Set<ManagedObject> {
            elements = Array(objects)
        } else if let objects = value as? [Any] {
            elements = objects
        } else if let sequence = value as? any Sequence {
            elements = Array(sequence.map { $0 as Any })
        } else {
            throw StrataError(
                .typeMismatch,
                "\(entity.name).\(relationship.name) is \(relationship.kindName); got \(Self.describe(value)), not a collection.",
                entityName: entity.name, propertyName: relationship.name, objectID: objectID)
        }
        var seen = Set<ObjectIdentifier>()
        return .toMany(try elements.map(checked).filter { seen.insert(ObjectIdentifier($0)).inserted })
    }

    /// A Swift integer, or an `NSNumber` holding an integer: JSONSerialization and other
    /// Foundation APIs hand out numbers as `NSNumber`, which no Swift integer type matches.
    private static func integer(from value: Any) -> (any BinaryInteger)? {
        if let integer = value as? any BinaryInteger { return integer }
        guard type(of: value) is NSNumber.Type, !(value is Bool), let number = value as? NSNumber else { return nil }
        if let integer = number as? Int64 { return integer }
        if let integer = number as? UInt64 { return integer }
        return nil
    }

    private static func describe(_ value: Any) -> String {
        if let object = value as? ManagedObject { return "a \(object.entity.name) object" }
        return "a value of type \(type(of: value))"
    }

    /// Flattens `Optional<Any>` boxes so that `nil` wrapped in `Any` reads as no value.
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if let optional = value as? any OptionalProtocol { return unwrapped(optional.wrappedAny) }
        if let stored = value as? AttributeValue, stored.isNull { return nil }
        return value
    }
}

extension Entity {
    /// Whether `name` is this entity or one of its ancestors.
    func superentityChainContains(_ name: String) -> Bool {
        var current: Entity? = self
        while let entity = current {
            if entity.name == name { return true }
            current = entity.superentity
        }
        return false
    }
}

protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrappedAny: Any? {
        switch self {
        case .none: nil
        case .some(let value): value
        }
    }
}
