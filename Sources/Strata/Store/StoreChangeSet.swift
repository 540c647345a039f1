import Foundation

/// The changes of one save, in the form stores apply.
public struct StoreChangeSet: Sendable {
    /// A new object.
    public struct Insert: Sendable {
        /// The object's temporary ID.
        public var objectID: ObjectID
        /// Attribute values by attribute number.
        public var attributes: [AttributeValue]
        /// To-one targets by relationship number (`nil` for none and for to-many relationships).
        public var toOne: [ObjectID?]

        /// Creates an insert.
        public init(objectID: ObjectID, attributes: [AttributeValue], toOne: [ObjectID?]) {
            self.objectID = objectID
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    /// Changed values of a saved object.
    public struct Update: Sendable {
        /// The object's permanent ID.
        public var objectID: ObjectID
        /// The version the object was read at; the save fails if the row's version differs.
        public var expectedVersion: Int64
        /// Changed attribute values by attribute number.
        public var attributes: [Int: AttributeValue]
        /// Changed to-one targets by relationship number.
        public var toOne: [Int: ObjectID?]

        /// Creates an update.
        public init(
            objectID: ObjectID, expectedVersion: Int64, attributes: [Int: AttributeValue], toOne: [Int: ObjectID?]
        ) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    /// The new contents of a to-many relationship that the store keeps itself (many-to-many,
    /// without inverse, or ordered).
    public struct ToManyUpdate: Sendable {
        /// The object that holds the relationship (temporary or permanent ID).
        public var objectID: ObjectID
        /// The relationship's number in the object's entity.
        public var relationshipNumber: Int
        /// The related objects, in order.
        public var targets: [ObjectID]

        /// Creates a to-many update.
        public init(objectID: ObjectID, relationshipNumber: Int, targets: [ObjectID]) {
            self.objectID = objectID
            self.relationshipNumber = relationshipNumber
            self.targets = targets
        }
    }

    /// New objects.
    public var inserts: [Insert] = []
    /// Changed objects.
    public var updates: [Update] = []
    /// Deleted objects (permanent IDs) with the version they were read at.
    public var deletes: [(objectID: ObjectID, expectedVersion: Int64)] = []
    /// To-many relationships to rewrite.
    public var toManyUpdates: [ToManyUpdate] = []
    /// Who made the changes (recorded in history).
    public var author: String?
    /// The name of the context that saved (recorded in history).
    public var contextName: String?
    /// The context that saved, passed on in the ``StoreCommit`` so that the container does not
    /// hand a context its own save to merge.
    package var origin: ObjectIdentifier?

    /// Creates an empty change set.
    public init() {}

    /// Whether there is nothing to save.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && toManyUpdates.isEmpty }
}
