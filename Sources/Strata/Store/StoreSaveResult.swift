import Foundation

/// What a store reports after applying a change set.
public struct StoreSaveResult: Sendable {
    /// The permanent ID of each inserted object, by its temporary ID.
    public var permanentIDs: [ObjectID: ObjectID] = [:]
    /// The new version of each inserted and updated object, by permanent ID.
    public var versions: [ObjectID: Int64] = [:]

    /// Creates an empty result.
    public init() {}
}
