import Foundation

/// Turns Swift key paths into the dotted names predicates and sort descriptors use.
///
/// A key path of one property (`\Movie.title`) is found in the `@Entity` table by equality. A
/// key path through to-one relationships (`\Review.movie?.director?.name`) cannot be taken apart:
/// Swift offers no access to its components, and their descriptions name accessor addresses,
/// which an optimized build gives each key path literal its own copy of. So the name is found
/// the other way round: candidate key paths are built from the tables, one relationship at a
/// time (`\Review.movie` + `\Movie?.?.director` + `\Director?.?.name`), until one reads the same
/// properties. Components are compared by the properties they name, as key path equality does,
/// so this holds in every build.
enum KeyPathNames {
    /// The most relationships a key path is followed through: `\A.b?.c?.d?.e?.f` has four.
    static let maximumRelationships = 4

    /// `\Movie.title` → `"title"`, `\Movie.director?.name` → `"director.name"`.
    ///
    /// A key path that names no stored property (a computed property, or a relationship
    /// unwrapped with `!` rather than `?`) gives its description, a name the schema does not
    /// have, which a fetch reports as ``StrataError/Code/unknownKey``.
    static func name(of keyPath: AnyKeyPath, root: any EntityModel.Type) -> String {
        if let name = root.propertyName(for: keyPath) { return name }
        let key = CacheKey(root: ObjectIdentifier(root), keyPath: keyPath)
        if let name = names.withLock({ $0[key] }) { return name }
        let name = relationshipPath(to: keyPath, root: root)?.joined(separator: ".") ?? keyPath.debugDescription
        names.withLock { $0[key] = name }
        return name
    }

    /// The property names along a key path through to-one relationships, or `nil`.
    ///
    /// Shorter paths are tried first, so a path through one relationship costs one pass over
    /// the destination's properties whatever the depth allowed.
    static func relationshipPath(to keyPath: AnyKeyPath, root: any EntityModel.Type) -> [String]? {
        let target = Target(keyPath)
        let starts = table(of: root).rootRelationships
        for depth in 1...maximumRelationships {
            for start in starts {
                guard let destination = start.destination else { continue }
                if let names = search(target, after: start.keyPath, in: destination, depth: depth) {
                    return [start.name] + names
                }
            }
        }
        return nil
    }

    /// What a candidate is compared with.
    private struct Target {
        let hash: Int
        let valueType: Any.Type

        init(_ keyPath: AnyKeyPath) {
            self.hash = keyPath.hashValue
            self.valueType = type(of: keyPath).valueType
        }

        /// Whether a candidate names the same properties. Key path hashing combines what
        /// equality compares (each component's property), but not how an optional chain was
        /// assembled, which makes `==` false between a literal and the same path built with
        /// `appending`; the value type guards the hash.
        func matches(_ candidate: AnyKeyPath) -> Bool {
            candidate.hashValue == hash && type(of: candidate).valueType == valueType
        }
    }

    /// The rest of the names after `prefix`, a key path to an optional `model`, going through
    /// exactly `depth` relationships counting the one `prefix` ends with.
    private static func search(
        _ target: Target, after prefix: AnyKeyPath, in model: any EntityModel.Type, depth: Int
    ) -> [String]? {
        for step in table(of: model).optionalSteps {
            if depth == 1 {
                if let candidate = prefix.appending(path: step.keyPath), target.matches(candidate) { return [step.name] }
            } else if let destination = step.destination, let candidate = prefix.appending(path: step.keyPath),
                let names = search(target, after: candidate, in: destination, depth: depth - 1)
            {
                return [step.name] + names
            }
        }
        return nil
    }

    /// One property in a class's tables, with the class a to-one relationship leads to.
    private struct Step {
        let keyPath: AnyKeyPath
        let name: String
        let destination: (any EntityModel.Type)?
    }

    /// What the search needs of one class, built once.
    private struct ClassTable {
        /// The class's to-one relationships rooted at the class (`\Movie.director`).
        let rootRelationships: [Step]
        /// Every property through an optional of the class (`\Movie?.?.title`).
        let optionalSteps: [Step]
    }

    private static func table(of model: any EntityModel.Type) -> ClassTable {
        if let table = tables.withLock({ $0[ObjectIdentifier(model)] }) { return table }
        func steps(_ keyPaths: [(AnyKeyPath, String)]) -> [Step] {
            keyPaths.map { Step(keyPath: $0.0, name: $0.1, destination: destination(of: $0.1, from: model)) }
        }
        let table = ClassTable(
            rootRelationships: steps(model._keyPathNames).filter { $0.destination != nil },
            optionalSteps: steps(model._optionalKeyPathNames))
        tables.withLock { $0[ObjectIdentifier(model)] = table }
        return table
    }

    /// The model class a to-one relationship of `model` leads to, or `nil` for an attribute or
    /// a to-many relationship.
    private static func destination(of name: String, from model: any EntityModel.Type) -> (any EntityModel.Type)? {
        guard let relationship = model.entity.relationship(named: name), !relationship.isToMany else { return nil }
        return modelClass(named: relationship.destinationEntityName, near: model)
    }

    /// The model class of an entity, searched among the classes `model` refers to, theirs, and
    /// so on (a relationship declared by a parent class is listed by the parent).
    private static func modelClass(named entityName: String, near model: any EntityModel.Type) -> (any EntityModel.Type)? {
        var seen: Set<ObjectIdentifier> = [ObjectIdentifier(model)]
        var queue: [any EntityModel.Type] = [model]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            if next.entityDescription?.name == entityName { return next }
            for related in next._relatedEntityModels where seen.insert(ObjectIdentifier(related)).inserted {
                queue.append(related)
            }
        }
        return nil
    }

    /// Names found, or descriptions for key paths that name nothing, per root class and key
    /// path: a failed search is as long as the tables allow, so it is not repeated either.
    private struct CacheKey: Hashable {
        let root: ObjectIdentifier
        let keyPath: AnyKeyPath
    }

    private static let names = LockedBox<[CacheKey: String]>([:])
    private static let tables = LockedBox<[ObjectIdentifier: ClassTable]>([:])
}
