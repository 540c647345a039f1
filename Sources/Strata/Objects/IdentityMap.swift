/// Object IDs to the live objects of one context, held without retaining them.
///
/// Entries are unretained references, not `weak` ones: a weak reference gives every object a
/// side table (an allocation, and an atomic operation to release it), which was a tenth of the
/// cost of fetching an object. Instead the map keeps itself exact: an object it holds knows its
/// map (`ManagedObject._registry`) and removes its entry in `deinit`, and an object's ID changes
/// only through ``changeID(of:to:)``, so every entry names a live object under its current ID.
/// (A subclass's `deinit` runs before the base class's; the object is still in the map then,
/// which is why ``ManagedObject`` asks subclasses not to fetch in `deinit`.)
final class IdentityMap {
    private var storage: [ObjectID: Unmanaged<ManagedObject>] = [:]
    /// Strong references to every registered object, while the context retains them
    /// (``ObjectContext/retainsRegisteredObjects``); `nil` otherwise.
    private var retained: [ObjectID: ManagedObject]?

    /// Whether the map keeps its objects alive. Turning it on retains the objects registered
    /// now; turning it off lets go of them all.
    var retainsObjects: Bool {
        get { retained != nil }
        set {
            guard newValue != retainsObjects else { return }
            retained = newValue ? storage.mapValues { $0.takeUnretainedValue() } : nil
        }
    }

    subscript(objectID: ObjectID) -> ManagedObject? {
        get { storage[objectID]?.takeUnretainedValue() }
        set {
            if let newValue {
                insert(newValue, for: objectID)
            } else if let entry = storage.removeValue(forKey: objectID) {
                entry.takeUnretainedValue()._registry = nil
                retained?[objectID] = nil
            }
        }
    }

    private func insert(_ object: ManagedObject, for objectID: ObjectID) {
        // An entry under another key than the object's ID could not be removed in `deinit`.
        precondition(object.objectID == objectID, "\(object.objectID) registered under \(objectID).")
        if let registry = object._registry, registry !== self {
            registry[objectID] = nil
        }
        let entry = Unmanaged.passUnretained(object)
        if let old = storage.updateValue(entry, forKey: objectID), old.toOpaque() != entry.toOpaque() {
            old.takeUnretainedValue()._registry = nil
        }
        object._registry = self
        retained?[objectID] = object
    }

    /// The object registered under `objectID`, or else the one `make` returns, registered under
    /// it; one hash lookup either way (a fetch makes most of its objects here).
    ///
    /// - Parameter make: Makes a new object with `objectID` that is in no identity map. It must
    ///   not use this map: the map's storage is being changed while it runs.
    func object(for objectID: ObjectID, orRegister make: () throws -> ManagedObject) rethrows -> ManagedObject {
        var made: ManagedObject?
        let object = try Self.modify(&storage[objectID]) { entry -> ManagedObject in
            if let entry { return entry.takeUnretainedValue() }
            let object = try make()
            entry = Unmanaged.passUnretained(object)
            made = object
            return object
        }
        if let made {
            made._registry = self
            retained?[objectID] = made
        }
        return object
    }

    private static func modify<Value, Result>(
        _ value: inout Value, _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        try body(&value)
    }

    /// Gives a registered object a new ID, and moves its entry with it.
    func changeID(of object: ManagedObject, to objectID: ObjectID) {
        object._registry?[object.objectID] = nil  // the map it is in, should it not be this one
        object.objectID = objectID
        self[objectID] = object
    }

    /// Called by a registered object as it is released: drops its entry.
    func objectWasReleased(_ object: ManagedObject) {
        // One hash lookup: the index found is the one removed.
        if let index = storage.index(forKey: object.objectID),
            storage.values[index].toOpaque() == Unmanaged.passUnretained(object).toOpaque()
        {
            storage.remove(at: index)
        }
    }

    /// Makes room for `count` more entries.
    func reserveCapacity(_ count: Int) {
        storage.reserveCapacity(storage.count + count)
    }

    /// The objects that are still alive.
    var values: [ManagedObject] { storage.values.map { $0.takeUnretainedValue() } }

    func removeAll() {
        for entry in storage.values { entry.takeUnretainedValue()._registry = nil }
        storage.removeAll()
        if retained != nil { retained = [:] }
    }
}
