/// Object IDs to the live objects of one context, held without retaining them.
///
/// Entries are unretained references, not `weak` ones: a weak reference gives every object a
/// side table (an allocation, and an atomic operation to release it), which was a tenth of the
/// cost of fetching an object. Instead the map keeps itself exact: an object it holds knows its
/// map (`ManagedObject._registry`) and leaves it in `deinit`, and an object's ID changes only
/// through ``changeID(of:to:)``, so every entry names a live object under its current ID. (A
/// subclass's `deinit` runs before the base class's; the object is still in the map then, which
/// is why ``ManagedObject`` asks subclasses not to fetch in `deinit`.)
///
/// Saved objects — nearly all of them — sit in a ``KeyTable`` per store and entity, keyed by
/// primary key: registering a fetched row is one multiply and a probe or two, with no `Hasher`
/// and no ID kept per entry, and an object remembers its table, so leaving is one probe there.
/// (Keyed by `ObjectID` in a `Dictionary`, finding and removing entries was a fifth of
/// fetching 200,000 objects.) New objects, under temporary IDs, are kept by ID until their save
/// moves them to their table.
final class IdentityMap {
    /// The tables of saved objects, by store and entity.
    private var tables: [KeyTable.Name: KeyTable] = [:]
    /// The table used last: a fetch asks for one entity's objects row after row.
    private var lastTable: KeyTable?
    /// New objects, by temporary ID.
    private var temporary: [ObjectID: Unmanaged<ManagedObject>] = [:]
    /// Strong references to every registered object, while the context retains them
    /// (``ObjectContext/retainsRegisteredObjects``); `nil` otherwise.
    private var retained: [ObjectIdentifier: ManagedObject]?

    /// Whether the map keeps its objects alive. Turning it on retains the objects registered
    /// now; turning it off lets go of them all.
    var retainsObjects: Bool {
        get { retained != nil }
        set {
            guard newValue != retainsObjects else { return }
            retained = newValue ? Dictionary(uniqueKeysWithValues: values.map { (ObjectIdentifier($0), $0) }) : nil
        }
    }

    subscript(objectID: ObjectID) -> ManagedObject? {
        get {
            if let primaryKey = objectID.primaryKey {
                return existingTable(for: objectID)?.object(forKey: primaryKey)
            }
            return temporary[objectID]?.takeUnretainedValue()
        }
        set {
            if let newValue {
                insert(newValue, for: objectID)
            } else if let object = self[objectID] {
                remove(object)
            }
        }
    }

    private func insert(_ object: ManagedObject, for objectID: ObjectID) {
        // An entry under another key than the object's ID could not be removed in `deinit`.
        precondition(object.objectID == objectID, "\(object.objectID) registered under \(objectID).")
        if let registry = object._registry {
            if registry === self, self[objectID] === object { return }
            registry.remove(object)
        }
        if let old = self[objectID] { remove(old) }
        if let primaryKey = objectID.primaryKey {
            table(for: objectID).insert(object, forKey: primaryKey)
        } else {
            temporary[objectID] = Unmanaged.passUnretained(object)
        }
        object._registry = self
        retained?[ObjectIdentifier(object)] = object
    }

    /// Takes `object` out of the map (it must be registered here).
    private func remove(_ object: ManagedObject) {
        dropEntry(of: object)
        object._registry = nil
        object._registryTable = nil
        // Last: letting go of the object may release it.
        retained?[ObjectIdentifier(object)] = nil
    }

    /// The object registered under `objectID`, or else the one `make` returns, registered under
    /// it; one probe either way for saved objects (a fetch makes most of its objects here).
    ///
    /// - Parameter make: Makes a new object with `objectID` that is in no identity map. It must
    ///   not use this map: the map's storage is being changed while it runs.
    func object(for objectID: ObjectID, orRegister make: () throws -> ManagedObject) rethrows -> ManagedObject {
        guard let primaryKey = objectID.primaryKey else {
            if let object = self[objectID] { return object }
            let object = try make()
            insert(object, for: objectID)
            return object
        }
        let table = table(for: objectID)
        let object = try table.object(forKey: primaryKey, orInsert: make)
        if object._registry !== self {
            object._registry = self
            retained?[ObjectIdentifier(object)] = object
        }
        return object
    }

    /// Gives a registered object a new ID, and moves its entry with it.
    func changeID(of object: ManagedObject, to objectID: ObjectID) {
        object._registry?.remove(object)  // the map it is in, should it not be this one
        object.objectID = objectID
        self[objectID] = object
    }

    /// Called by a registered object as it is released: drops its entry.
    func objectWasReleased(_ object: ManagedObject) {
        dropEntry(of: object)
    }

    /// Empties the slot or dictionary entry holding `object`.
    private func dropEntry(of object: ManagedObject) {
        if let table = object._registryTable {
            table.takeUnretainedValue().remove(object, forKey: object.objectID.primaryKey ?? 0)
        } else if let index = temporary.index(forKey: object.objectID),
            temporary.values[index].toOpaque() == Unmanaged.passUnretained(object).toOpaque()
        {
            temporary.remove(at: index)
        }
    }

    /// Makes room for `count` more saved objects of `objectID`'s store and entity (a fetch
    /// reserves before it registers its rows).
    func reserveCapacity(_ count: Int, like objectID: ObjectID) {
        guard objectID.primaryKey != nil else { return }
        table(for: objectID).reserveCapacity(count)
    }

    /// The objects that are still alive.
    var values: [ManagedObject] {
        var objects: [ManagedObject] = []
        for table in tables.values { table.appendObjects(to: &objects) }
        objects += temporary.values.map { $0.takeUnretainedValue() }
        return objects
    }

    func removeAll() {
        for table in tables.values { table.removeAll() }
        for entry in temporary.values { entry.takeUnretainedValue()._registry = nil }
        temporary.removeAll()
        if retained != nil { retained = [:] }
    }

    /// Whether the table of `objectID`'s store and entity mixes its keys (`nil` without one).
    func mixesKeys(like objectID: ObjectID) -> Bool? { existingTable(for: objectID)?.mixesKeys }

    // MARK: Tables

    /// The table of `objectID`'s store and entity, if the map has one.
    private func existingTable(for objectID: ObjectID) -> KeyTable? {
        if let lastTable, lastTable.holds(objectID) { return lastTable }
        guard let found = tables[KeyTable.Name(objectID)] else { return nil }
        lastTable = found
        return found
    }

    /// The table of `objectID`'s store and entity, made when it is the first of them.
    private func table(for objectID: ObjectID) -> KeyTable {
        if let found = existingTable(for: objectID) { return found }
        let name = KeyTable.Name(objectID)
        let made = KeyTable(name: name)
        tables[name] = made
        lastTable = made
        return made
    }
}

/// The saved objects of one entity in one store, keyed by primary key: open addressing with
/// linear probing over 16-byte entries (a key and an unretained object). A left slot is marked,
/// and the marks go when the table is rebuilt; a rebuild moves keys and pointers only, never
/// touching the objects (each knows its table, not its slot: rewriting 200,000 scattered objects
/// as the table grew cost more than the probes it saved).
final class KeyTable {
    /// A table's store and entity.
    struct Name: Hashable {
        let entityName: String
        let entityNameHash: UInt64
        let storeIdentifier: String?

        init(_ objectID: ObjectID) {
            entityName = objectID.entityName
            entityNameHash = objectID.entityNameHash
            storeIdentifier = objectID.storeIdentifier
        }

        func hash(into hasher: inout Hasher) { hasher.combine(entityNameHash) }
    }

    /// A slot: empty (`object` nil), left (`object` is ``leftMark``) or holding an object.
    private struct Entry {
        var key: Int64
        var object: UnsafeRawPointer?
    }

    /// Marks a slot whose object left: it ends no probe, and takes the next insertion that
    /// passes. No object lives at address 1.
    private static var leftMark: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: 1) }

    let name: Name
    // Touched for every fetched row and every released object, in the owning context's
    // isolation domain only, and never passed `inout` to code that could reach the table again:
    // exempt from dynamic exclusivity checks, as ManagedObject's storage is.
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// Full slots.
    @exclusivity(unchecked) private var count = 0
    /// Left slots.
    @exclusivity(unchecked) private var left = 0
    /// `64 - log2(capacity)`, for mixed keys: a key's home slot is then the top bits of its
    /// product with the golden ratio.
    @exclusivity(unchecked) private var shift: UInt64 = 64
    /// Whether keys are mixed before they pick their slot. At first they are not: a key's home
    /// is its low bits, so that keys a store gives out one after the other (row IDs, sequences)
    /// fill neighbouring slots and a fetch or a release walks the table in order instead of
    /// missing the cache once an object. Keys that pile up (multiples of a power of two, say)
    /// make a long probe, and the table turns mixing on for good.
    @exclusivity(unchecked) private(set) var mixesKeys = false

    init(name: Name) {
        self.name = name
    }

    /// Whether `objectID` (a saved object's) belongs in this table.
    @inline(__always) func holds(_ objectID: ObjectID) -> Bool {
        objectID.entityNameHash == name.entityNameHash && objectID.entityName == name.entityName
            && objectID.storeIdentifier == name.storeIdentifier
    }

    @inline(__always) private func home(of key: Int64) -> Int {
        if mixesKeys { return Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift) }
        return Int(truncatingIfNeeded: key) & (entries.count - 1)
    }

    /// The longest probe a lookup or an insertion accepts before the table mixes its keys.
    private static let longestProbe = 48

    /// The slot holding `key`, or `nil`; and how many slots the probe passed.
    private func slot(of key: Int64) -> (index: Int?, probes: Int) {
        guard count > 0 else { return (nil, 0) }
        let mask = entries.count - 1
        var index = home(of: key)
        var probes = 0
        while true {
            let entry = entries[index]
            guard let object = entry.object else { return (nil, probes) }
            if entry.key == key, object != Self.leftMark { return (index, probes) }
            index = (index + 1) & mask
            probes += 1
        }
    }

    func object(forKey key: Int64) -> ManagedObject? {
        let (index, probes) = slot(of: key)
        // A key outside a run of consecutive ones can have its home inside the run, and walk it
        // to its end on every lookup (an ID merged into a context holding 1…150,000): mix. Not
        // in `remove(_:forKey:)`, which runs in `deinit`, perhaps in the middle of an insertion.
        if probes > Self.longestProbe, !mixesKeys { startMixing() }
        guard let index, let object = entries[index].object else { return nil }
        return Unmanaged<ManagedObject>.fromOpaque(object).takeUnretainedValue()
    }

    /// Mixes keys from now on, moving every object to its mixed slot (the capacity stays).
    private func startMixing() {
        mixesKeys = true
        rebuild(toHold: max(count * 2, entries.count * 3 / 4, 16))
    }

    /// The object under `key`, or the one `make` returns, stored under it.
    func object(forKey key: Int64, orInsert make: () throws -> ManagedObject) rethrows -> ManagedObject {
        if (count + left + 1) * 4 > entries.count * 3 { rebuild(toHold: max(count * 2, 16)) }
        let mask = entries.count - 1
        var index = home(of: key)
        var free: Int?
        var probes = 0
        while true {
            let entry = entries[index]
            guard let object = entry.object else { break }
            if object == Self.leftMark {
                if free == nil { free = index }
            } else if entry.key == key {
                return Unmanaged<ManagedObject>.fromOpaque(object).takeUnretainedValue()
            }
            index = (index + 1) & mask
            probes += 1
        }
        if probes > Self.longestProbe, !mixesKeys {
            startMixing()
            return try self.object(forKey: key, orInsert: make)
        }
        let object = try make()
        let slot = free ?? index
        if free != nil { left -= 1 }
        entries[slot] = Entry(key: key, object: UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
        count += 1
        object._registryTable = Unmanaged.passUnretained(self)
        return object
    }

    /// Stores `object` under `key`, which the table does not hold.
    func insert(_ object: ManagedObject, forKey key: Int64) {
        _ = self.object(forKey: key, orInsert: { object })
    }

    /// Empties the slot of `object`, stored under `key`.
    func remove(_ object: ManagedObject, forKey key: Int64) {
        guard let index = slot(of: key).index,
            entries[index].object == UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        else { return }
        entries[index].object = Self.leftMark
        count -= 1
        left += 1
    }

    /// Makes room for `extra` more objects without a rebuild on the way.
    func reserveCapacity(_ extra: Int) {
        if (count + left + extra) * 4 > entries.count * 3 { rebuild(toHold: max(count + extra, count * 2)) }
    }

    /// Moves every object into new slots, enough for `needed` objects at most three quarters
    /// full; the left slots go.
    private func rebuild(toHold needed: Int) {
        var capacity = 16
        while capacity * 3 < needed * 4 { capacity *= 2 }
        let old = entries
        entries = Array(repeating: Entry(key: 0, object: nil), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        left = 0
        let mask = capacity - 1
        for entry in old {
            guard let object = entry.object, object != Self.leftMark else { continue }
            var index = home(of: entry.key)
            while entries[index].object != nil { index = (index + 1) & mask }
            entries[index] = entry
        }
    }

    func appendObjects(to list: inout [ManagedObject]) {
        for entry in entries {
            guard let object = entry.object, object != Self.leftMark else { continue }
            list.append(Unmanaged<ManagedObject>.fromOpaque(object).takeUnretainedValue())
        }
    }

    /// Lets go of every object (each forgets its map).
    func removeAll() {
        for entry in entries {
            guard let pointer = entry.object, pointer != Self.leftMark else { continue }
            let object = Unmanaged<ManagedObject>.fromOpaque(pointer).takeUnretainedValue()
            object._registry = nil
            object._registryTable = nil
        }
        entries = []
        count = 0
        left = 0
        shift = 64
    }
}
