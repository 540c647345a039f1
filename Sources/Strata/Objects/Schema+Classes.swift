import Foundation

extension Schema {
    /// Creates and validates a schema from `@Entity` classes.
    ///
    /// The classes' parents and relationship destinations are added automatically, so listing
    /// the classes you work with is enough. For example:
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
            descriptions, configurations: configurations, versionIdentifier: versionIdentifier, objectTypes: objectTypes
        )
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

    /// The schema of a list of `@Entity` classes, built the first time the process asks for
    /// it and shared afterwards.
    ///
    /// Classes and their generated descriptions do not change while a process runs, so a list
    /// of classes always makes the same schema; a server or test suite that opens many
    /// containers from the same classes builds it once. Schemas are immutable and `Sendable`,
    /// so one schema can serve any number of containers. An invalid list is not remembered:
    /// it throws every time.
    ///
    /// For example:
    ///
    /// ```swift
    /// let schema = try Schema.shared(for: [Movie.self])   // the same instance on every call
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidSchema`` listing every problem.
    public static func shared(for types: [ManagedObject.Type]) throws -> Schema {
        let key = types.map(ObjectIdentifier.init)
        if let schema = sharedSchemas.withLock({ $0[key] }) { return schema }
        let schema = try Schema(types)
        return sharedSchemas.withLock { cache in
            if let existing = cache[key] { return existing }  // another thread built it meanwhile
            cache[key] = schema
            return schema
        }
    }

    private static let sharedSchemas = LockedBox<[[ObjectIdentifier]: Schema]>([:])

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
