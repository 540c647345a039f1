import Foundation

/// A scratch pad of managed objects that tracks their changes.
///
/// A context registers the objects inserted into it (one instance per object ID, the
/// *identity map*), and knows which of them are inserted, updated or deleted.
///
/// ```swift
/// let context = ObjectContext(schema: schema)
/// let movie = Movie(context: context)
/// movie.title = "Heat"
/// context.hasChanges        // true
/// context.insertedObjects   // [movie]
/// ```
///
/// A context is not `Sendable`: use it in one isolation domain, and pass object IDs across.
public final class ObjectContext {
    /// The schema of the objects this context manages.
    public let schema: Schema
    /// A name for the context, recorded with the changes it saves.
    public var name: String?
    /// The author recorded with the changes this context saves.
    public var transactionAuthor: String?

    private var registered: [ObjectID: ManagedObject] = [:]
    private var inserted: [ObjectIdentifier: ManagedObject] = [:]
    private var deleted: [ObjectIdentifier: ManagedObject] = [:]
    private var changed: [ObjectIdentifier: ManagedObject] = [:]

    /// Creates an empty context for objects of `schema`.
    public init(schema: Schema) {
        self.schema = schema
    }

    /// Inserts a new object, and the new objects it is related to, into the context.
    ///
    /// Inserting an object that is already in this context does nothing.
    ///
    /// - Parameter object: An object that is in no context yet.
    public func insert(_ object: ManagedObject) {
        if object.context === self { return }
        precondition(object.context == nil, "\(object.objectID) already belongs to another context.")
        guard let entity = schema.entity(named: object.entity.name) else {
            preconditionFailure("The context's schema has no entity \(object.entity.name).")
        }
        precondition(
            entity.attributes.map(\.name) == object.entity.attributes.map(\.name)
                && entity.relationships.map(\.name) == object.entity.relationships.map(\.name),
            "\(object.entity.name) in the context's schema is laid out differently from the object's entity.")
        object.entity = entity
        object.context = self
        object._isInserted = true
        object._isDeleted = false
        registered[object.objectID] = object
        inserted[ObjectIdentifier(object)] = object
        object.awakeFromInsert()
        for relationship in object._relationships {
            for related in relationship.objects where related.context == nil { insert(related) }
        }
    }

    /// Marks an object for deletion. Deleting an object that was inserted and never saved
    /// simply removes it from the context.
    ///
    /// - Parameter object: An object of this context.
    public func delete(_ object: ManagedObject) {
        guard object.context === self else { return }
        let key = ObjectIdentifier(object)
        if inserted.removeValue(forKey: key) != nil {
            object._isInserted = false
            registered[object.objectID] = nil
            changed[key] = nil
            object.context = nil
            return
        }
        object._isDeleted = true
        deleted[key] = object
    }

    /// The registered object with `objectID`, or `nil` when the context holds none.
    public func registeredObject(for objectID: ObjectID) -> ManagedObject? {
        registered[objectID]
    }

    /// The object with `objectID`.
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists.
    public func existingObject(with objectID: ObjectID) throws -> ManagedObject {
        guard let object = registered[objectID], !object.isDeleted else {
            throw StrataError(
                .objectNotFound, "No \(objectID.entityName) with ID \(objectID) exists in this context.",
                entityName: objectID.entityName, objectID: objectID)
        }
        return object
    }

    /// Every object registered in the context.
    public var registeredObjects: Set<ManagedObject> { Set(registered.values) }
    /// The objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> { Set(inserted.values) }
    /// The objects deleted since the last save.
    public var deletedObjects: Set<ManagedObject> { Set(deleted.values) }
    /// The saved objects whose values changed since they were loaded or last saved.
    public var updatedObjects: Set<ManagedObject> { Set(changed.values.filter(\.isUpdated)) }
    /// Whether any object has unsaved changes.
    public var hasChanges: Bool { !inserted.isEmpty || !deleted.isEmpty || changed.values.contains(where: \.isUpdated) }

    func objectDidChange(_ object: ManagedObject) {
        guard !object._isInserted else { return }
        changed[ObjectIdentifier(object)] = object
    }

    /// Called when an object's values became its committed snapshot (after a save): it is no
    /// longer inserted, and has no changes to save.
    func objectDidCommit(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        inserted[key] = nil
        changed[key] = nil
    }
}

@available(*, unavailable, message: "A context is used in one isolation domain; pass object IDs across.")
extension ObjectContext: Sendable {}
