import Foundation

/// A change notification of one context: objects that changed, or the changes a save is about to
/// write or has written.
///
/// Callbacks registered with ``ObjectContext/addObserver(for:_:)`` receive notifications with
/// the objects themselves, on the context's isolation domain. Code elsewhere uses the `Sendable`
/// form, ``ContextChanges`` (object IDs), from ``ObjectContext/changes(for:)`` or
/// ``PersistentContainer/savedChanges()``.
///
/// ```swift
/// let observation = context.addObserver(for: .didSave) { notification in
///     print("saved", notification.insertedObjects.count, "new objects")
/// }
/// ```
public struct ContextNotification {
    /// The kinds of notification, as in Core Data.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        /// Posted when the context processes its pending changes (``ObjectContext/processPendingChanges()``,
        /// which every save does first): the objects inserted, updated and deleted since the last time.
        case objectsDidChange
        /// Posted when a save starts, before validation, with the objects it is about to write.
        /// Observers may still change objects; the save includes those changes.
        case willSave
        /// Posted after a save succeeded, with the objects it wrote (new objects with their
        /// permanent IDs).
        case didSave
    }

    /// What happened.
    public let name: Name
    /// Objects inserted (for saves: new objects the save wrote).
    public let insertedObjects: Set<ManagedObject>
    /// Saved objects whose values changed.
    public let updatedObjects: Set<ManagedObject>
    /// Objects deleted.
    public let deletedObjects: Set<ManagedObject>
    /// The context's ``ObjectContext/transactionAuthor`` (saves only).
    public let author: String?
    /// The context's ``ObjectContext/name``.
    public let contextName: String?
    /// Whether this reports a merged change of another process whose objects are unknown (see
    /// ``StoreDescription/remoteChangePollingInterval``; a store with persistent history names
    /// them instead): the context refreshed every object it holds, and `updatedObjects` lists
    /// them.
    public internal(set) var isRemoteChange = false

    /// Objects whose values were reloaded from the store (`objectsDidChange` only; Core Data's
    /// `NSRefreshedObjectsKey`): by ``ObjectContext/refresh(_:mergeChanges:)``, or by a merge of
    /// another context's or process's save — merged objects are also in ``updatedObjects``.
    public internal(set) var refreshedObjects: Set<ManagedObject> = []

    /// Whether the notification names no object.
    public var isEmpty: Bool {
        insertedObjects.isEmpty && updatedObjects.isEmpty && deletedObjects.isEmpty && refreshedObjects.isEmpty
    }

    /// The `Sendable` form of the notification: the objects' IDs.
    public var changes: ContextChanges {
        ContextChanges(
            name: name, insertedObjectIDs: Set(insertedObjects.map(\.objectID)),
            updatedObjectIDs: Set(updatedObjects.map(\.objectID)), deletedObjectIDs: Set(deletedObjects.map(\.objectID)),
            author: author, contextName: contextName, isRemoteChange: isRemoteChange,
            refreshedObjectIDs: Set(refreshedObjects.map(\.objectID)))
    }
}

@available(*, unavailable, message: "Notifications carry managed objects; pass `changes` (object IDs) across isolation domains.")
extension ContextNotification: Sendable {}
