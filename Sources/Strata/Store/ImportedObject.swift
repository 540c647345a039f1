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
