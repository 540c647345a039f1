import Foundation

// The entry points that `@Entity`-generated accessors call. They index the value arrays
// directly: no dictionaries, no Mirror, no Codable on the path (except for Codable attributes).
extension ManagedObject {
    /// Reads attribute number `index` as `T`. Called by generated getters.
    @inlinable
    public final func _attributeValue<T: AttributeValueConvertible>(at index: Int, as type: T.Type = T.self) -> T {
        if _isFault { _fireFault() }
        return T(storedValue: _values[index])
    }

    /// Writes attribute number `index`. Called by generated setters.
    @inlinable
    public final func _setAttributeValue<T: AttributeValueConvertible>(_ value: T, at index: Int) {
        _setStoredValue(value.storedValue, at: index)
    }

    /// Reads a `Codable` attribute, or `fallback` when it has no value or cannot be decoded.
    public final func _codableValue<T: Codable>(at index: Int, fallback: @autoclosure () -> T) -> T {
        if _isFault { _fireFault() }
        guard case .codable(let data) = _values[index],
            let value = try? CodableAttributeCoding.decode(T.self, from: data)
        else { return fallback() }
        return value
    }

    /// Reads an optional `Codable` attribute.
    public final func _codableValue<T: Codable>(at index: Int) -> T? {
        if _isFault { _fireFault() }
        guard case .codable(let data) = _values[index] else { return nil }
        return try? CodableAttributeCoding.decode(T.self, from: data)
    }

    /// Writes a `Codable` attribute as JSON.
    public final func _setCodableValue<T: Codable>(_ value: T?, at index: Int) {
        guard let value else {
            _setStoredValue(.null, at: index)
            return
        }
        // Encoding a Codable value only fails for values JSON cannot express (a non-finite
        // Double, say); such a value is stored as nil and reported by validation.
        let data = try? CodableAttributeCoding.encode(value)
        _setStoredValue(data.map { .codable($0) } ?? .null, at: index)
    }

    /// Reads a to-one relationship. Called by generated getters.
    public final func _toOneValue<T: ManagedObject>(at index: Int, as type: T.Type = T.self) -> T? {
        if _isFault { _fireFault() }
        guard case .toOne(let object) = _relationships[index] else { return nil }
        return object as? T
    }

    /// Reads an unordered to-many relationship.
    public final func _toManySet<T: ManagedObject>(at index: Int, as type: T.Type = T.self) -> Set<T> {
        guard case .toMany(let objects) = relationshipValue(at: index) else { return [] }
        return Set(objects.compactMap { $0 as? T })
    }

    /// Reads an ordered to-many relationship.
    public final func _toManyArray<T: ManagedObject>(at index: Int, as type: T.Type = T.self) -> [T] {
        guard case .toMany(let objects) = relationshipValue(at: index) else { return [] }
        return objects.compactMap { $0 as? T }
    }

    /// Writes a to-one relationship and keeps the inverse in step.
    public final func _setToOne(_ object: ManagedObject?, at index: Int) {
        setRelationship(.toOne(object), at: index)
    }

    /// Writes a to-many relationship and keeps the inverse in step.
    public final func _setToMany<C: Collection>(_ objects: C, at index: Int) where C.Element: ManagedObject {
        setRelationship(.toMany(objects.map { $0 as ManagedObject }), at: index)
    }

    /// Loads the object's values from its store. When that fails (the row was deleted, the store
    /// is gone) the object keeps its default values and ``faultingError`` says why.
    @usableFromInline
    final func _fireFault() {
        guard let context else {
            faultingError = StrataError(
                .objectNotFound,
                "\(entity.name) \(objectID) cannot load its values: its context is gone. Keep the context alive while using its objects.",
                entityName: entity.name, objectID: objectID)
            _isFault = false
            return
        }
        _isFault = false
        context.fulfillFault(of: self)
    }

    /// A relationship's value, loading the contents of a to-many relationship that was not
    /// loaded yet.
    final func relationshipValue(at index: Int) -> RelationshipValue {
        if _isFault { _fireFault() }
        let value = _relationships[index]
        guard value.isFault else { return value }
        guard let context else {
            faultingError = StrataError(
                .objectNotFound,
                "\(entity.name).\(entity.relationships[index].name) cannot be loaded: the object's context is gone.",
                entityName: entity.name, propertyName: entity.relationships[index].name, objectID: objectID)
            return .toMany([])
        }
        let objects = context.loadRelationship(at: index, of: self)
        _relationships[index] = .toMany(objects)
        if _committedRelationships?[index].isFault == true {
            _committedRelationships?[index] = .toMany(objects)
        }
        return .toMany(objects)
    }

    /// Stores a value, recording the change only when the value differs from the current one.
    @usableFromInline
    final func _setStoredValue(_ value: AttributeValue, at index: Int) {
        if _isFault { _fireFault() }
        // Not `==`, which finds -0.0 equal to 0.0: the object would silently keep the old value.
        guard !_values[index].isIdentical(to: value) else { return }
        _values[index] = value
        context?.objectDidChange(self)
    }

    /// Whether any attribute or relationship differs from the committed snapshot (or, for an
    /// object never committed, whether it has any value at all).
    final var hasChangedProperties: Bool {
        if _isFault { return false }
        guard let committed = _committedValues else {
            return _values.contains { !$0.isNull } || _relationships.contains { !$0.objects.isEmpty }
        }
        if committed != _values { return true }
        guard let committedRelationships = _committedRelationships else { return false }
        for (index, relationship) in entity.relationships.enumerated()
        where !_relationships[index].isSame(as: committedRelationships[index], ordered: relationship.isOrdered) {
            return true
        }
        return false
    }

    /// Makes the current values the committed snapshot. Stores call this after a save.
    ///
    /// - Parameter notifyingContext: Whether the context must stop listing the object as
    ///   inserted or updated (or it would disagree with `isInserted` and save the object again);
    ///   `false` when the caller clears those lists itself.
    final func commitValues(notifyingContext: Bool = true) {
        _committedValues = _values
        _committedRelationships = _relationships
        _isInserted = false
        if notifyingContext { context?.objectDidCommit(self) }
    }

    /// Restores the committed snapshot (or the defaults, for an object never committed).
    final func revertValues() {
        if let committed = _committedValues {
            _values = committed
            _relationships = _committedRelationships ?? _relationships
            return
        }
        _values = entity.defaultValues
        _strataApplyInitialValues()
        // Through setRelationship, so that the related objects stop pointing back.
        for (index, relationship) in entity.relationships.enumerated() {
            setRelationship(relationship.isToMany ? .toMany([]) : .toOne(nil), at: index)
        }
    }
}
