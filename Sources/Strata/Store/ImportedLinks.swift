import Foundation

/// The links of one imported to-many relationship.
public struct ImportedLinks: Sendable {
    /// The entity that declares the relationship.
    public var entityName: String
    /// The relationship.
    public var relationship: String
    /// Whether the relationship is ordered: each source's destinations come in their order.
    public var isOrdered: Bool
    /// Keys of the entity's objects and of their destinations, sorted by source.
    public var pairs: [ImportedLinkPair]

    /// Creates the links of a relationship.
    public init(entityName: String, relationship: String, isOrdered: Bool = false, pairs: [ImportedLinkPair] = []) {
        self.entityName = entityName
        self.relationship = relationship
        self.isOrdered = isOrdered
        self.pairs = pairs
    }
}

/// One link: an object's key and its destination's key.
public struct ImportedLinkPair: Sendable, Hashable {
    /// The key of the object that declares the relationship.
    public var source: Int64
    /// The key of the destination.
    public var destination: Int64

    /// Creates a link.
    public init(source: Int64, destination: Int64) {
        self.source = source
        self.destination = destination
    }
}
