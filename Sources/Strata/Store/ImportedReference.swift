import Foundation

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
