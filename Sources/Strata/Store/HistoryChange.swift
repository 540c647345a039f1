import Foundation

/// One object's change in a ``HistoryTransaction`` (Core Data's `NSPersistentHistoryChange`).
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum ChangeType: String, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert
        /// Some of the object's properties changed (``HistoryChange/updatedProperties``).
        case update
        /// The object was deleted (``HistoryChange/tombstone`` keeps what was asked to be kept).
        case delete
    }

    /// The change's number, increasing across the store's history.
    public var changeID: Int64
    /// The object that changed.
    public var changedObjectID: ObjectID
    /// What happened to it.
    public var changeType: ChangeType
    /// For an update, the names of the attributes and relationships that changed; `nil` for
    /// inserts and deletes.
    public var updatedProperties: Set<String>?
    /// For a delete, the last values of the attributes marked
    /// ``AttributeDescription/preservesValueOnDeletion`` (`.preserveValueOnDeletion`), by
    /// attribute name; `nil` otherwise.
    public var tombstone: [String: AttributeValue]?

    /// Creates a change.
    public init(
        changeID: Int64, changedObjectID: ObjectID, changeType: ChangeType, updatedProperties: Set<String>? = nil,
        tombstone: [String: AttributeValue]? = nil
    ) {
        self.changeID = changeID
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}
