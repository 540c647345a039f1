import Foundation

/// The unsaved changes of one context: the objects inserted (in insertion order), deleted and
/// changed since the last save, and which deletion cascaded from which.
///
/// The context owns one tracker and changes it only through these methods, so that the four
/// collections cannot fall out of step (an object is never both inserted and deleted, and the
/// insertion order never names an object that was deleted before it was saved). Everything else
/// reads it.
struct ChangeTracker {
    /// Inserted objects, by identity.
    private(set) var inserted: [ObjectIdentifier: ManagedObject] = [:]
    /// The identities of inserted objects, in the order they were inserted. It may still name
    /// objects that were saved since; look them up in ``inserted``.
    private(set) var insertionOrder: [ObjectIdentifier] = []
    /// Saved objects marked for deletion, by identity.
    private(set) var deleted: [ObjectIdentifier: ManagedObject] = [:]
    /// Saved objects whose values or relationships may differ from their committed state.
    private(set) var changed: [ObjectIdentifier: ManagedObject] = [:]
    /// For objects deleted by a cascade rule: the object whose deletion cascaded to them.
    private(set) var cascadeOrigins: [ObjectIdentifier: ObjectIdentifier] = [:]

    /// Whether nothing is inserted, deleted or changed.
    var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && changed.isEmpty }

    /// The inserted objects, in insertion order.
    var insertedObjects: [ManagedObject] { insertionOrder.compactMap { inserted[$0] } }

    /// Each inserted object's place in the insertion order.
    func insertionRanks() -> [ObjectIdentifier: Int] {
        var ranks: [ObjectIdentifier: Int] = [:]
        ranks.reserveCapacity(insertionOrder.count)
        for (index, key) in insertionOrder.enumerated() { ranks[key] = index }
        return ranks
    }

    mutating func recordInsertion(of object: ManagedObject) {
        let key = ObjectIdentifier(object)
        inserted[key] = object
        insertionOrder.append(key)
    }

    /// Forgets an insertion, its place in the order included (once the object is released, its
    /// identity can be reused by a new one).
    ///
    /// - Returns: Whether the object was inserted.
    @discardableResult
    mutating func removeInsertion(of key: ObjectIdentifier) -> Bool {
        guard inserted.removeValue(forKey: key) != nil else { return false }
        if insertionOrder.last == key {
            insertionOrder.removeLast()
        } else if let index = insertionOrder.lastIndex(of: key) {
            insertionOrder.remove(at: index)
        }
        return true
    }

    mutating func recordDeletion(of object: ManagedObject) {
        deleted[ObjectIdentifier(object)] = object
    }

    /// Forgets a deletion.
    ///
    /// - Returns: The object, if it was deleted.
    @discardableResult
    mutating func removeDeletion(of key: ObjectIdentifier) -> ManagedObject? {
        deleted.removeValue(forKey: key)
    }

    /// Notes that deleting `origin` deleted `object` by a cascade rule.
    mutating func recordCascade(to object: ObjectIdentifier, from origin: ObjectIdentifier) {
        cascadeOrigins[object] = origin
    }

    /// Marks a saved object as changed.
    mutating func recordChange(of object: ManagedObject) {
        changed[ObjectIdentifier(object)] = object
    }

    /// Keeps an object among the changed ones only while it differs from its committed state.
    mutating func updateChange(of object: ManagedObject) {
        changed[ObjectIdentifier(object)] = object.hasChangedProperties ? object : nil
    }

    mutating func removeChange(of key: ObjectIdentifier) {
        changed[key] = nil
    }

    /// Forgets an object that was saved: it is no longer inserted and has nothing to save.
    mutating func objectDidCommit(_ key: ObjectIdentifier) {
        inserted[key] = nil
        changed[key] = nil
    }

    /// Forgets every change of one object.
    mutating func forget(_ key: ObjectIdentifier) {
        changed[key] = nil
        deleted[key] = nil
        inserted[key] = nil
    }

    /// Forgets every change.
    mutating func removeAll() {
        cascadeOrigins.removeAll()
        inserted.removeAll()
        insertionOrder.removeAll()
        deleted.removeAll()
        changed.removeAll()
    }
}
