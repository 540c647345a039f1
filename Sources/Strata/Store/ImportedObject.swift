import Foundation

/// One object read from a store of another program (a Core Data store), ready to import.
public struct ImportedObject: Sendable {
    /// The object's entity.
    public var entityName: String
    /// Its key in the other store, unique within its root entity's table.
    public var primaryKey: Int64
    /// Its attribute values, by attribute name.
    public var values: [String: AttributeValue]
    /// Its to-one relationships that point somewhere: the target's root entity and key.
    public var toOne: [String: ImportedReference]

    /// Creates an imported object.
    public init(entityName: String, primaryKey: Int64, values: [String: AttributeValue] = [:], toOne: [String: ImportedReference] = [:]) {
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.values = values
        self.toOne = toOne
    }
}

/// The target of an imported to-one relationship.
public struct ImportedReference: Sendable, Hashable {
    /// The root entity of the target (keys are unique per root entity).
    public var rootEntity: String
    /// The target's key.
    public var primaryKey: Int64

    /// Creates a reference.
    public init(rootEntity: String, primaryKey: Int64) {
        self.rootEntity = rootEntity
        self.primaryKey = primaryKey
    }
}

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

/// One consistent view of a store of another program, read object by object
/// (``CoreDataStoreReader/Snapshot``): how importers above the store layer read it.
package protocol ImportedStoreSnapshot {
    /// The number of objects in the store.
    func objectCount() throws -> Int
    /// Calls `body` with every object, one at a time.
    func forEachObject(includingAttributes: Bool, _ body: (ImportedObject) throws -> Void) throws
    /// Calls `body` with the links of each to-many relationship the objects' to-one references
    /// do not give.
    func forEachLinks(_ body: (ImportedLinks) throws -> Void) throws
    /// The number of links `forEachLinks` gives.
    func linkCount() throws -> Int
}
