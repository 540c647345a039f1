import Foundation

/// A value that remembers the object ID of its managed object (`nil` before it is created).
public protocol ManagedIdReferencable {
    /// The object ID of the managed object, set by the repository on every value it returns.
    var managedId: ObjectID? { get set }
}

/// A value that remembers its managed object by the URI of its object ID
/// (``ObjectID/uriRepresentation``), for values kept in files or links.
public protocol ManagedIdUrlReferencable {
    /// The URI of the managed object's ID, set by the repository on every value it returns.
    var managedIdUrl: URL? { get set }
}
