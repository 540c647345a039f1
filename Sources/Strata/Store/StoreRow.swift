import Foundation

/// One row a store returned: an object's committed state.
public struct StoreRow: Sendable, Hashable {
    /// The object's ID.
    public var objectID: ObjectID
    /// The optimistic-lock version of the row.
    public var version: Int64
    /// Attribute values by attribute number of the row's entity; transient attributes are
    /// ``AttributeValue/null``.
    public var attributes: [AttributeValue]
    /// To-one relationship targets by relationship number; `nil` for empty to-one
    /// relationships and for to-many relationships (which are loaded on demand).
    public var toOne: [ObjectID?]

    /// Creates a row.
    public init(objectID: ObjectID, version: Int64, attributes: [AttributeValue], toOne: [ObjectID?]) {
        self.objectID = objectID
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
    }
}
