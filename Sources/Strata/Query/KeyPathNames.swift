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
    /// The most relationships a key path is followed through: `\A.b?.c?.d?.e` has four.
    static let maximumRelationships = 4

    /// `\Movie.title` → `"title"`, `\Movie.director?.name` → `"director.name"`.
    ///
    /// A key path that names no stored property (a computed property, or a relationship
    /// unwrapped with `!` rather than `?`) gives its description, a name the schema does not
    /// have, which a fetch reports as ``StrataError/Code/unknownKey``.
    static func name(of keyPath: AnyKeyPath, root: any EntityModel.Type) -> String {
        if let name = root.propertyName(for: keyPath) { return name }
        let key = CacheKey(root: ObjectIdentifier(root), keyPath: keyPath)
        if let name = cache.withLock({ $0[key] }) { return name }
        guard let names = relationshipPath(to: keyPath, root: root) else { return keyPath.debugDescription }
        let name = names.joined(separator: ".")
        cache.withLock { $0[key] = name }
        return name
    }

    /// The property names along a key path through to-one relationships, or `nil`.
    static func relationshipPath(to keyPath: AnyKeyPath, root: any EntityModel.Type) -> [String]? {
        let target = Target(keyPath)
        for (start, name) in root._keyPathNames {
            guard let destination = destination(of: name, from: root) else { continue }
            if let names = search(target, after: start, in: destination, depth: maximumRelationships) {
                return [name] + names
            }
        }
        return nil
    }

    /// What a candidate is compared with.
    private struct Target {
        let keyPath: AnyKeyPath
        let hash: Int
        let valueType: Any.Type

        init(_ keyPath: AnyKeyPath) {
            self.keyPath = keyPath
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

    /// The rest of the names after `prefix`, a key path to an optional `model`.
    private static func search(
        _ target: Target, after prefix: AnyKeyPath, in model: any EntityModel.Type, depth: Int
    ) -> [String]? {
        for (step, name) in model._optionalKeyPathNames {
            guard let candidate = prefix.appending(path: step) else { continue }
            if target.matches(candidate) { return [name] }
            if depth > 1, let destination = destination(of: name, from: model),
                let names = search(target, after: candidate, in: destination, depth: depth - 1)
            {
                return [name] + names
            }
        }
        return nil
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

    /// Names found by building key paths, per root class and key path.
    private struct CacheKey: Hashable {
        let root: ObjectIdentifier
        let keyPath: AnyKeyPath
    }

    private static let cache = LockedBox<[CacheKey: String]>([:])
}
