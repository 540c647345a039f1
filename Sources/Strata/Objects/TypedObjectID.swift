import Foundation

/// An object ID that knows the Swift type of its object.
///
/// ```swift
/// let id: TypedObjectID<Movie> = movie.typedObjectID
/// ```
public struct TypedObjectID<Model: ManagedObject>: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The untyped ID.
    public let objectID: ObjectID

    /// Wraps an untyped ID. The caller vouches that the ID's entity is represented by `Model`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let id = TypedObjectID<Movie>(movie.objectID)   // as movie.typedObjectID
    /// let same: Movie = try context.existingObject(with: id)
    /// ```
    public init(_ objectID: ObjectID) { self.objectID = objectID }

    /// A readable rendering, for logs, messages and tools.
    public var description: String { objectID.description }
}

extension PersistentModel {
    /// The object's ID, typed with the object's class.
    public var typedObjectID: TypedObjectID<Self> { TypedObjectID(objectID) }
}

extension TypedObjectID: PredicateArgument {
    /// The object with this ID.
    public var predicateExpression: QueryExpression { .objectID(objectID) }
}
