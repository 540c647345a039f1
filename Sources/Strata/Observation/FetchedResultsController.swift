import Foundation

/// The objects a fetch request matches, split into sections and kept current as the context
/// changes, with each change reported the way a table or collection view applies it.
///
/// ```swift
/// let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.year), .ascending(\.title)])
/// let controller = FetchedResultsController(request, context: context, sectionBy: \.year)
/// try controller.performFetch()
/// controller.sections.map(\.name)        // ["1995", "1999", …]
/// controller.object(at: IndexPath(item: 0, section: 0))
/// for await change in controller.changes { /* sections, inserted/deleted/moved/updated */ }
/// ```
///
/// After ``performFetch()`` the controller follows its context: the changes the context
/// processes (``ObjectContext/processPendingChanges()``, which every save does first), and the
/// saves of other contexts it merges (``ObjectContext/mergeChanges(from:)-(ContextChanges)``, or automatically
/// with ``ObjectContext/automaticallyMergesChangesFromContainer``; the ``PersistentContainer/viewContext``
/// merges those as soon as they arrive). Each batch is announced to the ``delegate``, to every
/// iteration of ``changes``, and to an ``ObservableFetchedResults``.
///
/// - Sections: with a section key, the objects are grouped by its value; the request is sorted
///   by that key first (when its first sort descriptor is on another key, the controller sorts
///   by the section key, ascending, before it). Sections appear and disappear with their objects.
/// - Cost: a batch that changes k objects of an n-object result costs O(k log n) comparisons
///   (plus moving array elements, and O(s) for s sections), not a new fetch. A request with a
///   ``FetchRequest/fetchLimit`` or ``FetchRequest/fetchOffset`` is fetched again instead, since
///   a change can shift objects across its edges.
/// - As in Core Data, an object is re-judged when it changes itself: a change to a related
///   object that a predicate or sort key reaches through does not move it.
/// - The controller lives in its context's isolation domain. Releasing it ends its
///   observations and its ``changes`` sequences.
public final class FetchedResultsController<Model: ManagedObject> {
    /// The request whose result the controller keeps (with the section sort, if one was added).
    public let fetchRequest: FetchRequest<Model>
    /// The context the objects belong to.
    public let managedObjectContext: ObjectContext
    /// The key (a key path, possibly through to-one relationships) whose value names each
    /// object's section, or `nil` for one section.
    public let sectionNameKeyPath: String?
    /// Told about each batch of changes, in table-view order.
    public weak var delegate: (any FetchedResultsControllerDelegate<Model>)?
    /// The index title of a section, from its name; by default the name's first letter,
    /// upper-cased (`nil` for an empty name). Set it before ``performFetch()``.
    ///
    /// ```swift
    /// controller.sectionIndexTitle = { name in name.isEmpty ? nil : String(name.prefix(2)) }
    /// try controller.performFetch()
    /// ```
    public var sectionIndexTitle: (_ sectionName: String) -> String? = { name in
        name.first.map { String($0).uppercased() }
    }

    /// The objects of the result, in order (empty before ``performFetch()``).
    public internal(set) var fetchedObjects: [Model] = []

    // The result's order, parallel to `fetchedObjects`; a key's tiebreak makes it unique.
    var keys: [SortKey] = []
    var keyByObject: [ObjectIdentifier: SortKey] = [:]
    var layout = FetchedResultsLayout()
    var sorts: [ResolvedSort] = []
    var evaluator: PredicateEvaluator?
    var entity: Entity?
    /// The order of unsaved objects among themselves (see `assignUnsavedOrder(to:)`).
    var unsavedOrder: [ObjectIdentifier: Int64] = [:]
    var nextUnsavedOrder: Int64 = 0
    private var isApplying = false
    private var missedBatch = false
    private var observations: [ContextObservation] = []
    let streams = FetchedResultsStreams()
    /// Called after each non-empty batch (the observable wrapper's hook).
    var changeHandler: ((FetchedResultsChange) -> Void)?

    /// Creates a controller for `fetchRequest`'s result in `context`, grouped into sections by
    /// the value of `sectionNameKeyPath` (a key such as `"year"` or `"director.name"`).
    ///
    /// Call ``performFetch()`` to load the result.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
    /// let controller = FetchedResultsController(
    ///     fetchRequest: request, context: context, sectionNameKeyPath: "director.name")
    /// try controller.performFetch()   // sorted by director.name, then title
    /// ```
    public init(fetchRequest: FetchRequest<Model>, context: ObjectContext, sectionNameKeyPath: String? = nil) {
        var request = fetchRequest
        if let key = sectionNameKeyPath, request.sortDescriptors.first?.descriptor.key != key {
            request.sortDescriptors.insert(FetchSortDescriptor(key: key, ascending: true), at: 0)
        }
        self.fetchRequest = request
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
    }

    /// Creates a controller whose sections are named by the value of `keyPath`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// let controller = FetchedResultsController(request, context: context, sectionBy: \.year)   // "1990", "1991", …
    /// ```
    public convenience init<Value>(
        _ fetchRequest: FetchRequest<Model>, context: ObjectContext, sectionBy keyPath: KeyPath<Model, Value>
    ) {
        self.init(
            fetchRequest: fetchRequest, context: context,
            sectionNameKeyPath: KeyPathNames.name(of: keyPath, root: Model.self))
    }

    /// Creates a controller with one section.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(sortDescriptors: [.descending(\.year)])
    /// let controller = FetchedResultsController(request, context: context)
    /// try controller.performFetch()   // controller.sections.count == 1
    /// ```
    public convenience init(_ fetchRequest: FetchRequest<Model>, context: ObjectContext) {
        self.init(fetchRequest: fetchRequest, context: context, sectionNameKeyPath: nil)
    }

    deinit {
        streams.finishAll()
    }

    /// Fetches the result and starts following the context. Calling it again fetches afresh
    /// (after changing ``sectionIndexTitle``, say) without announcing a change.
    ///
    /// For example:
    ///
    /// ```swift
    /// try controller.performFetch()
    /// print(controller.fetchedObjects.count, "movies in", controller.sections.count, "sections")
    /// ```
    ///
    /// - Throws: The errors of ``ObjectContext/fetch(_:)-(FetchRequest<Model>)``: an unknown key,
    ///   a section key that is not an attribute, a type mismatch or a store error.
    public func performFetch() throws {
        // One plan: the context fetches with it, and the controller judges changes by it.
        let query = try managedObjectContext.query(for: fetchRequest)
        let objects = try managedObjectContext.execute(query).ofType(Model.self)
        self.entity = query.entity
        self.sorts = query.plan.sorts
        self.evaluator = query.plan.predicate.map(PredicateEvaluator.init)
        load(objects)
        if observations.isEmpty {
            observations = [
                managedObjectContext.addObserver(for: .objectsDidChange) { [weak self] notification in
                    self?.contextDidChange(notification)
                },
                managedObjectContext.addObserver(for: .didSave) { [weak self] notification in
                    self?.contextDidSave(notification)
                },
            ]
        }
    }

    /// Replaces the result with `objects`, keyed and grouped.
    func load(_ objects: [Model]) {
        // Written over concrete types (`SortKey`, `Int`, `ObjectIdentifier`): code over
        // `Model` is not specialized for the app's class, and generic passes over
        // `(Model, SortKey)` pairs cost more than the fetch itself.
        var managed: [ManagedObject] = []
        managed.reserveCapacity(objects.count)
        for object in objects { managed.append(object) }
        assignUnsavedOrder(to: managed)
        var keys: [SortKey] = []
        keys.reserveCapacity(managed.count)
        for object in managed { keys.append(sortKey(for: object)) }
        var ordered = objects
        // The store's order and the in-memory one agree except for collations SQLite lacks.
        if keys.indices.dropFirst().contains(where: { compare(keys[$0 - 1], keys[$0]) > 0 }) {
            let permutation = keys.indices.sorted { compare(keys[$0], keys[$1]) < 0 }
            ordered = permutation.map { objects[$0] }
            keys = permutation.map { keys[$0] }
        }
        var keyByObject: [ObjectIdentifier: SortKey] = [:]
        keyByObject.reserveCapacity(keys.count)
        for index in ordered.indices.reversed() {  // the first of duplicates wins
            keyByObject[ObjectIdentifier(ordered[index])] = keys[index]
        }
        fetchedObjects = ordered
        self.keys = keys
        self.keyByObject = keyByObject
        unsavedOrder = unsavedOrder.filter { keyByObject[$0.key] != nil }
        layout = makeLayout()
    }

    // MARK: Reading the result

    /// The result's sections, in order. Without a section key there is exactly one.
    ///
    /// ```swift
    /// for section in controller.sections {
    ///     print(section.name, section.numberOfObjects)
    /// }
    /// ```
    public var sections: [FetchedResultsSection<Model>] {
        layout.sections.map { section in
            FetchedResultsSection(
                name: section.name, indexTitle: section.indexTitle,
                slice: fetchedObjects[section.start..<section.start + section.count])
        }
    }

    /// The object at an index path (`[section, item]`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let first = controller.object(at: IndexPath(item: 0, section: 0))
    /// ```
    ///
    /// - Precondition: The index path is within ``sections``.
    public func object(at indexPath: IndexPath) -> Model {
        let section = layout.sections[indexPath[0]]
        precondition(indexPath[1] < section.count, "\(indexPath) is past the end of section \(indexPath[0]).")
        return fetchedObjects[section.start + indexPath[1]]
    }

    /// The index path of an object, or `nil` when it is not in the result.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let path = controller.indexPath(for: movie) { print(path.section, path.item) }
    /// ```
    ///
    /// - Complexity: O(log n).
    public func indexPath(for object: Model) -> IndexPath? {
        guard let key = keyByObject[ObjectIdentifier(object)], let index = position(of: key) else { return nil }
        return layout.indexPath(forFlatIndex: index)
    }

    /// The distinct index titles of the sections, in section order.
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return layout.sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The index of the first section whose index title is `title`, or `nil`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let section = controller.section(forSectionIndexTitle: "H")   // where the index bar's "H" scrolls to
    /// ```
    public func section(forSectionIndexTitle title: String) -> Int? {
        layout.sections.firstIndex { $0.indexTitle == title }
    }

    /// The controller's changes, one element per batch, for as long as the iteration lasts.
    ///
    /// The sequence registers when it is made, so its first iteration receives every batch from
    /// then on; a later iteration of the same value registers when it starts. An iteration
    /// buffers the batches its consumer has not read yet; ending it (cancelling the task or
    /// leaving the loop) removes the registration. Releasing the controller ends every iteration.
    ///
    /// ```swift
    /// let changes = controller.changes   // registers now, so no batch is missed
    /// for await change in changes { print(change.insertedIndexPaths, change.deletedIndexPaths) }
    /// ```
    public var changes: FetchedResultsChanges { streams.makeSequence() }

    /// The number of registrations the controller holds: its context observations and the live
    /// iterations of ``changes``.
    var registrationCount: Int { observations.count + streams.count }

    // MARK: Keys

    /// The object's place in the order: its sort-key values, then (as the store orders ties)
    /// saved objects by primary key, then unsaved ones in insertion order.
    func sortKey(for object: ManagedObject) -> SortKey {
        SortKey(of: object, by: sorts) { unsavedOrder[ObjectIdentifier($0)] ?? Int64.max }
    }

    /// Gives the unsaved objects among `objects` that have none a place in the order of unsaved
    /// objects, following the context's insertion order. A place, once given, never changes,
    /// so that the keys already in the result stay valid when the context's order shifts.
    func assignUnsavedOrder(to objects: [ManagedObject]) {
        var newcomers: [ManagedObject] = []
        for object in objects where object.objectID.isTemporaryID && unsavedOrder[ObjectIdentifier(object)] == nil {
            newcomers.append(object)
        }
        guard !newcomers.isEmpty else { return }
        let ranks = managedObjectContext.insertionRanks()
        for object in newcomers.sorted(by: { ranks[ObjectIdentifier($0)] ?? .max < ranks[ObjectIdentifier($1)] ?? .max }
        ) {
            nextUnsavedOrder += 1
            unsavedOrder[ObjectIdentifier(object)] = nextUnsavedOrder
        }
    }

    /// -1, 0 or 1 as `a` comes before, with or after `b`.
    func compare(_ a: SortKey, _ b: SortKey) -> Int {
        SortKey.compare(a, b, by: sorts)
    }

    /// Where `key` is, or would go, in `keys`.
    func insertionPoint(of key: SortKey) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if compare(keys[middle], key) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of `key` in `keys`, or `nil`.
    func position(of key: SortKey) -> Int? {
        let index = insertionPoint(of: key)
        return index < keys.count && compare(keys[index], key) == 0 ? index : nil
    }

    // MARK: Sections

    /// Whether the result is grouped by a section key (the first sort key).
    var isSectioned: Bool { sectionNameKeyPath != nil }

    /// The name of the section a key belongs to.
    func sectionName(of key: SortKey) -> String {
        guard isSectioned, let value = key.values.first else { return "" }
        switch value {
        case .null: return ""
        case .string(let text): return text
        default: return value.description
        }
    }

    /// -1, 0 or 1 as the section of `a` comes before, is, or comes after that of `b`.
    func compareSections(_ a: SortKey, _ b: SortKey) -> Int {
        guard isSectioned, let sort = sorts.first else { return 0 }
        return sort.compare(a.values[0], b.values[0])
    }

    /// The sections of the current result, computed from scratch.
    func makeLayout() -> FetchedResultsLayout {
        guard isSectioned else {
            return FetchedResultsLayout(sections: [
                .init(name: "", indexTitle: sectionIndexTitle(""), key: nil, start: 0, count: keys.count)
            ])
        }
        var sections: [FetchedResultsLayout.Section] = []
        for (index, key) in keys.enumerated() {
            if let last = sections.last, let lastKey = last.key, compareSections(lastKey, key) == 0 {
                sections[sections.count - 1].count += 1
            } else {
                let name = sectionName(of: key)
                sections.append(
                    .init(name: name, indexTitle: sectionIndexTitle(name), key: key, start: index, count: 1))
            }
        }
        return FetchedResultsLayout(sections: sections)
    }

    // MARK: Following the context

    /// Runs one batch; a batch that arrives while another is applied (a delegate that saves or
    /// fetches, say) is folded into a refetch once the first is done.
    private func processBatch(_ body: () -> Void) {
        guard !isApplying else {
            missedBatch = true
            return
        }
        isApplying = true
        defer { isApplying = false }
        body()
        while missedBatch {
            missedBatch = false
            refetch(updated: Set(fetchedObjects.map(ObjectIdentifier.init)))
        }
    }

    private func contextDidChange(_ notification: ContextNotification) {
        processBatch { applyContextChange(notification) }
    }

    private func applyContextChange(_ notification: ContextNotification) {
        guard entity != nil else { return }
        if notification.isRemoteChange {
            // Another process changed the store, in ways nobody listed: fetch again, and count
            // every object that stays as updated.
            refetch(updated: Set(fetchedObjects.map(ObjectIdentifier.init)))
            return
        }
        var touched: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for object in notification.insertedObjects.union(notification.updatedObjects).union(notification.deletedObjects)
        where isRelevant(object) && seen.insert(ObjectIdentifier(object)).inserted {
            touched.append(object)
        }
        guard !touched.isEmpty else { return }
        // Objects another context changed may arrive as faults: load them with one query.
        let faults = touched.filter { $0._isFault && $0.context === managedObjectContext }.map(\.objectID)
        if !faults.isEmpty { try? managedObjectContext.fulfillFaults(faults) }
        let updated = Set(notification.updatedObjects.map(ObjectIdentifier.init))
        apply(touched: touched, updated: updated)
    }

    private func contextDidSave(_ notification: ContextNotification) {
        processBatch { rekeySavedObjects(notification) }
    }

    private func rekeySavedObjects(_ notification: ContextNotification) {
        // New objects now have permanent IDs, which order ties differently: re-key them, in
        // place when they keep their position (the usual case: keys follow insertion order).
        // (A child context's save leaves them temporary: nothing to do then.)
        var rekeyed: [(index: Int, object: ManagedObject)] = []
        for object in notification.insertedObjects where !object.objectID.isTemporaryID {
            guard let key = keyByObject[ObjectIdentifier(object)], let index = position(of: key) else { continue }
            rekeyed.append((index, object))
        }
        guard !rekeyed.isEmpty else { return }
        var displaced: [ManagedObject] = []
        for (index, object) in rekeyed.sorted(by: { $0.index < $1.index }) {
            guard let model = object as? Model else { continue }
            let key = sortKey(for: model)
            let fits =
                (index == 0 || compare(keys[index - 1], key) < 0)
                && (index == keys.count - 1 || compare(key, keys[index + 1]) < 0)
            if fits {
                keys[index] = key
                keyByObject[ObjectIdentifier(object)] = key
                unsavedOrder[ObjectIdentifier(object)] = nil
            } else {
                displaced.append(object)
            }
        }
        if !displaced.isEmpty { apply(touched: displaced, updated: []) }
    }

    /// Whether an object could belong to the result at all.
    private func isRelevant(_ object: ManagedObject) -> Bool {
        guard let entity else { return false }
        if keyByObject[ObjectIdentifier(object)] != nil { return true }
        guard object is Model else { return false }
        return fetchRequest.includesSubentities ? object.entity.isKind(of: entity) : object.entity.name == entity.name
    }

    /// Whether an object belongs to the result now.
    func matches(_ object: ManagedObject) -> Bool {
        guard object is Model, !object.isDeleted, object.context === managedObjectContext,
            !object._isFault, object.faultingError == nil, isRelevant(object)
        else { return false }
        return evaluator?.evaluate(object) ?? true
    }
}

@available(*, unavailable, message: "A controller belongs to its context's isolation domain.")
extension FetchedResultsController: Sendable {}
