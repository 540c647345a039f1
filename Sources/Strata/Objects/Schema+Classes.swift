import Foundation

extension Schema {
    /// Creates and validates a schema from `@Entity` classes.
    ///
    /// The classes' parents and relationship destinations are added automatically, so listing
    /// the classes you work with is enough:
    ///
    /// ```swift
    /// let schema = try Schema([Movie.self])   // also finds Review and Person
    /// ```
    ///
    /// - Parameters:
    ///   - types: `@Entity` classes.
    ///   - configurations: Named subsets of entities.
    ///   - versionIdentifier: An optional label for this model version.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidSchema`` listing every problem.
    public convenience init(
        _ types: [ManagedObject.Type],
        configurations: [String: [String]] = [:],
        versionIdentifier: String? = nil
    ) throws {
        let (descriptions, objectTypes) = Self.collect(types)
        try self.init(
            descriptions, configurations: configurations, versionIdentifier: versionIdentifier, objectTypes: objectTypes)
    }

    /// Follows parents and relationship destinations from `types`, in a stable order.
    static func collect(_ types: [ManagedObject.Type]) -> ([EntityDescription], [String: AnyClass]) {
        var descriptions: [EntityDescription] = []
        var objectTypes: [String: AnyClass] = [:]
        var seen = Set<ObjectIdentifier>()
        var queue = types
        var next = 0
        // Reading the queue by position (rather than `removeFirst()`, which moves every element
        // left) keeps a model of many classes linear.
        while next < queue.count {
            let type = queue[next]
            next += 1
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            guard let description = type.entityDescription else {
                preconditionFailure("\(type) is not an @Entity class; only @Entity classes can form a schema.")
            }
            if objectTypes[description.name] == nil {
                descriptions.append(description)
                objectTypes[description.name] = type
            }
            queue += type.relatedModelTypes
        }
        return (descriptions, objectTypes)
    }

    private static let defaultEntities = LockedBox<[ObjectIdentifier: Entity]>([:])

    /// The entity of an `@Entity` class in a schema made of the class and everything it is
    /// related to, validated leniently (problems are reported when a container builds its schema).
    public static func _defaultEntity(for type: ManagedObject.Type) -> Entity {
        if let entity = defaultEntities.withLock({ $0[ObjectIdentifier(type)] }) { return entity }
        let (descriptions, objectTypes) = collect([type])
        let schema = Schema.lenient(descriptions, objectTypes: objectTypes)
        guard let name = type.entityDescription?.name, let entity = schema.entity(named: name) else {
            preconditionFailure("\(type) is not an @Entity class.")
        }
        return defaultEntities.withLock { cache in
            if let existing = cache[ObjectIdentifier(type)] { return existing }
            cache[ObjectIdentifier(type)] = entity
            return entity
        }
    }
}
