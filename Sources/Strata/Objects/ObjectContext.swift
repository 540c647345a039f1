import Foundation

/// A scratch pad of managed objects that tracks their changes and saves them to the stores of
/// a ``PersistentContainer``.
///
/// A context registers the objects it inserts or loads (one instance per object ID, the
/// *identity map*), knows which of them are inserted, updated or deleted, and saves all of them
/// in one transaction per store.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// let movie = Movie(context: context)
/// movie.title = "Heat"
/// context.hasChanges        // true
/// try context.save()        // all or nothing
/// let movies = try context.fetch(Movie.self)
/// ```
///
/// A context is not `Sendable`: use it in one isolation domain, and pass object IDs across.
public final class ObjectContext {
    /// The schema of the objects this context manages.
    public let schema: Schema
    /// The container whose stores the context loads from and saves to; `nil` for a context that
    /// only tracks objects in memory.
    ///
    /// A context keeps its container alive, except the container's own
    /// ``PersistentContainer/viewContext``, which the container owns (as SwiftData's
    /// `mainContext` does not keep its `ModelContainer`): keep a reference to the container for
    /// as long as you use its view context or a child of it. Once the container is released,
    /// its view context's `container` is `nil`, and its fetches, counts and saves throw
    /// ``StrataError/Code/storeClosed``.
    public var container: PersistentContainer? {
        switch containerReference {
        case .none: nil
        case .strong(let container): container
        case .owner(let owner): owner.container
        }
    }
    /// How the context refers to its container: the view context's reference is weak, or the
    /// container and its view context would keep each other — and the store's open files —
    /// alive for ever.
    private let containerReference: ContainerReference
    /// A name for the context, recorded with the changes it saves.
    public var name: String?
    /// The author recorded with the changes this context saves: in persistent history, in
    /// ``StoreCommit/author`` and in save notifications (Core Data's `transactionAuthor`).
    ///
    /// `nil` for new contexts, ``TransactionAuthor/viewContext`` for a container's
    /// ``PersistentContainer/viewContext``. A ``PersistentHistoryTracker`` skips the
    /// transactions of its own author.
    ///
    /// ```swift
    /// context.transactionAuthor = "import"
    /// ```
    public var transactionAuthor: TransactionAuthor?
    /// How saves resolve conflicts with the store; ``MergePolicy/error`` by default. (A child
    /// context's saves go to its parent and have no conflicts to resolve.)
    public var mergePolicy: MergePolicy = .error
    /// The context this one reads from and saves to, for a child context.
    public let parent: ObjectContext?
    /// Child contexts, told about permanent IDs when this context saves.
    var children: [WeakContext] = []
    /// Misuse that could not be reported where it happened (``insert(_:)`` does not throw);
    /// the next save throws it.
    var pendingErrors: [StrataError] = []

    /// The identity map. It holds objects weakly: an object without unsaved changes lives as
    /// long as the program uses it (objects keep their context alive, not the other way round);
    /// objects with changes are also held by `inserted`, `changed` or `deleted` until saved.
    let registered = IdentityMap()
    /// The unsaved changes; changed only through its methods.
    var unsaved = ChangeTracker()
    /// Inserted objects, by identity.
    var inserted: [ObjectIdentifier: ManagedObject] { unsaved.inserted }
    /// Saved objects marked for deletion, by identity.
    var deleted: [ObjectIdentifier: ManagedObject] { unsaved.deleted }
    /// Saved objects that may differ from their committed state, by identity.
    var changed: [ObjectIdentifier: ManagedObject] { unsaved.changed }
    /// For objects deleted by a cascade rule: the object whose deletion cascaded to them.
    var cascadeOrigins: [ObjectIdentifier: ObjectIdentifier] { unsaved.cascadeOrigins }
    /// Notification observers, and the changes not yet announced by `objectsDidChange`.
    let observers = ContextObservers()
    /// Saves of other contexts to merge, when ``automaticallyMergesChangesFromContainer`` is on.
    var mergeInbox: MergeInbox?
    /// Whether this is its container's ``PersistentContainer/viewContext`` (main actor).
    var isViewContext: Bool {
        get { observers.isViewContext }
        set { observers.isViewContext = newValue }
    }
    /// Whether saves check each object's own rules (required values, ranges, validation
    /// predicates). Only importers that copy a store another program validated turn it off,
    /// because they save objects before their required relationships are set.
    var validatesObjectsOnSave = true
    /// Saves of other contexts collected for this context's live queries.
    var observedSaves = ObservedSaves()
    /// The objects the last merges registered for other contexts' insertions, kept until the
    /// context next processes its pending changes (for the view context, at the end of the
    /// main actor's turn), as Core Data keeps them until its run loop's turn ends.
    var keptByMerge: [ManagedObject] = []
    /// The last answer of ``schemaEntity(for:)``.
    private var lastSchemaEntity: (asked: Entity, found: Entity)?

    /// Creates a context that tracks objects of `schema` in memory, with no store to save to.
    ///
    /// For example:
    ///
    /// ```swift
    /// let context = ObjectContext(schema: try Schema([Movie.self]))
    /// let movie = Movie(context: context)
    /// try context.fetch(Movie.self)   // [movie], from memory; save() throws noStore
    /// ```
    public init(schema: Schema) {
        self.schema = schema
        self.containerReference = .none
        self.parent = nil
    }

    /// Creates a context that loads from and saves to the stores of `container`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let context = ObjectContext(container: container)   // as container.newBackgroundContext()
    /// context.transactionAuthor = "import"
    /// ```
    public init(container: PersistentContainer) {
        self.schema = container.schema
        self.containerReference = .strong(container)
        self.parent = nil
    }

    /// Throws ``StrataError/Code/storeClosed`` for a view context whose container was
    /// released: its stores closed with it, and answering from memory alone would be wrong.
    func checkContainerIsAlive() throws {
        if case .owner(let owner) = containerReference, owner.container == nil {
            throw StrataError(
                .storeClosed,
                "The container of this view context was released, which closed its stores; keep a reference to the container for as long as you use its view context.")
        }
    }

    /// Creates the view context of `container`, which owns it.
    init(ownedBy container: PersistentContainer) {
        self.schema = container.schema
        self.containerReference = .owner(WeakContainer(container))
        self.parent = nil
    }

    /// Creates a child context: it sees its parent's objects, unsaved changes included, and its
    /// ``save()`` pushes its changes into the parent instead of a store — a scratch pad whose
    /// work can be kept (save, then save the parent) or thrown away (discard the child).
    ///
    /// For example:
    ///
    /// ```swift
    /// let editor = ObjectContext(parent: context)
    /// let draft = try editor.existingObject(with: movie.objectID) as! Movie
    /// draft.title = "Heat (1995)"
    /// try editor.save()     // context now has the change, unsaved
    /// try context.save()    // and now the store
    /// ```
    ///
    /// Use the child in the same isolation domain as its parent.
    public init(parent: ObjectContext) {
        self.schema = parent.schema
        self.containerReference = parent.container.map { .strong($0) } ?? .none
        self.parent = parent
        parent.children.removeAll { $0.context == nil }
        parent.children.append(WeakContext(self))
    }

    /// Gives registered objects the permanent IDs their parent's save assigned, here and in
    /// every child context below.
    func adoptPermanentIDs(_ permanentIDs: [ObjectID: ObjectID], versions: [ObjectID: Int64]) {
        for (temporary, permanent) in permanentIDs {
            guard let object = registered[temporary] else { continue }
            registered.changeID(of: object, to: permanent)
            object._version = versions[permanent] ?? object._version
        }
        for child in children { child.context?.adoptPermanentIDs(permanentIDs, versions: versions) }
    }

    /// The entity of the context's schema with the name of `entity` (usually `entity` itself).
    /// The last answer is remembered: objects are mostly created and inserted an entity at a
    /// time, and each would otherwise hash the entity's name twice.
    func schemaEntity(for entity: Entity) -> Entity? {
        // A class's own entity (asked when an object is created) and the schema's (asked when
        // it is inserted) are usually two instances: both hit.
        if let last = lastSchemaEntity, last.asked === entity || last.found === entity { return last.found }
        guard let found = schema.entity(named: entity.name) else { return nil }
        lastSchemaEntity = (entity, found)
        return found
    }

    /// Inserts a new object, and the new objects it is related to, into the context.
    ///
    /// Inserting an object that is already in this context does nothing. Inserting an object of
    /// another context, or one that was saved already, inserts nothing and makes the next
    /// ``save()`` fail with ``StrataError/Code/wrongContext``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = Movie()
    /// movie.title = "Heat"
    /// movie.director = Person()
    /// context.insert(movie)   // inserts the director too
    /// ```
    ///
    /// - Parameter object: An object that is in no context yet.
    public func insert(_ object: ManagedObject) {
        if object.context === self { return }
        guard object.context == nil, object.isNew else {
            pendingErrors.append(
                StrataError(
                    .wrongContext,
                    object.context != nil
                        ? "\(object.objectID) belongs to another context and cannot be inserted here; look it up with existingObject(with:)."
                        : "\(object.objectID) was saved already and cannot be inserted again; look it up with existingObject(with:).",
                    entityName: object.entity.name, objectID: object.objectID))
            return
        }
        guard let entity = schemaEntity(for: object.entity) else {
            preconditionFailure("The context's schema has no entity \(object.entity.name).")
        }
        // Objects made from the class's own entity usually share the schema's instance.
        precondition(
            entity === object.entity
                || entity.attributes.map(\.name) == object.entity.attributes.map(\.name)
                    && entity.relationships.map(\.name) == object.entity.relationships.map(\.name),
            "\(object.entity.name) in the context's schema is laid out differently from the object's entity.")
        object.entity = entity
        object.context = self
        object._isInserted = true
        object._isDeleted = false
        registered[object.objectID] = object
        unsaved.recordInsertion(of: object)
        recordInsertion(object)
        object.awakeFromInsert()
        for relationship in object._relationships {
            for related in relationship.objects where related.context == nil && related.isNew { insert(related) }
        }
    }

    /// Registers an object a child context created, as a new object of this context.
    func insertCopy(_ object: ManagedObject) {
        object.context = self
        object._isInserted = true
        registered[object.objectID] = object
        unsaved.recordInsertion(of: object)
        recordInsertion(object)
    }

    /// Marks an object for deletion and applies its relationships' delete rules: related objects
    /// of a cascade relationship are deleted too, and the object is removed from the inverse of
    /// each nullify relationship. A deny relationship that still holds objects makes the next
    /// save fail with ``StrataError/Code/deleteDenied``.
    ///
    /// Deleting an object that was inserted and never saved simply removes it from the context.
    ///
    /// For example:
    ///
    /// ```swift
    /// context.delete(movie)   // its reviews too (cascade); its director no longer lists it (nullify)
    /// try context.save()
    /// ```
    ///
    /// - Parameter object: An object of this context.
    public func delete(_ object: ManagedObject) {
        guard object.context === self, !object._isDeleted else { return }
        if object._isFault { object._fireFault() }  // its version is needed to delete the row
        let key = ObjectIdentifier(object)
        let wasInserted = unsaved.removeInsertion(of: key)
        if wasInserted {
            object._isInserted = false
        } else {
            object._isDeleted = true
            unsaved.recordDeletion(of: object)
        }
        recordDeletion(object, wasInserted: wasInserted)
        for (index, relationship) in object.entity.relationships.enumerated() {
            switch relationship.deleteRule {
            case .cascade:
                for related in object.relationshipValue(at: index).objects where !related._isDeleted {
                    unsaved.recordCascade(to: ObjectIdentifier(related), from: key)
                    delete(related)
                }
            case .nullify:
                guard let inverse = relationship.inverseName else { continue }
                for related in object.relationshipValue(at: index).objects {
                    related.removeInverse(inverse, pointingTo: object)
                }
            case .deny, .noAction:
                continue
            }
        }
        if wasInserted {
            registered[object.objectID] = nil
            unsaved.removeChange(of: key)
            object.context = nil
        }
    }

    /// Whether the context keeps every object it registers alive (Core Data's
    /// `retainsRegisteredObjects`); `false` by default.
    ///
    /// By default the context holds objects without retaining them: an object without unsaved
    /// changes lives as long as the program uses it, and ``registeredObject(for:)`` finds it
    /// while it lives. With this on, every registered object — fetched, inserted, or
    /// registered by a merge of another context's save — stays registered until the context
    /// is ``reset()`` or this is turned off (which lets go of them all).
    ///
    /// ```swift
    /// context.retainsRegisteredObjects = true
    /// _ = try context.fetch(Movie.self)
    /// context.registeredObject(for: id)   // still there, though nobody holds the movies
    /// ```
    ///
    /// Objects keep their context alive, so a context that retains its objects lives until
    /// one of those two happens: turn it off (or reset) when you are done with the context.
    public var retainsRegisteredObjects: Bool {
        get { registered.retainsObjects }
        set { registered.retainsObjects = newValue }
    }

    /// The registered object with `objectID`, or `nil` when the context holds none.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = context.registeredObject(for: id) as? Movie   // nil unless registered; reads no store
    /// ```
    public func registeredObject(for objectID: ObjectID) -> ManagedObject? {
        registered[objectID]
    }

    /// The object with `objectID`, loaded from its store if the context does not hold it yet.
    ///
    /// For example:
    ///
    /// ```swift
    /// let id = movie.objectID   // once saved; Sendable, so it can go to another context
    /// let same = try background.existingObject(with: id) as? Movie
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists (it was never
    ///   saved, or it was deleted).
    public func existingObject(with objectID: ObjectID) throws -> ManagedObject {
        mergeCollectedChanges()
        if let object = registered[objectID], !object._isFault {
            guard !object.isDeleted else { throw notFound(objectID, reason: "it was deleted in this context") }
            return object
        }
        if let parent {
            let source = try parent.existingObject(with: objectID)
            return adopt(source)
        }
        guard !objectID.isTemporaryID else { throw notFound(objectID, reason: "it is a new object of another context") }
        guard let row = try storedRow(for: objectID) else {
            throw notFound(objectID, reason: "its store has no such row")
        }
        return try materialize(row)
    }

    /// The object with `objectID`: the registered instance, or a *fault* that loads its values
    /// from the store the first time one of them is read. No store is read here.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try context.object(with: id) as! Movie   // a fault, if not registered yet
    /// print(movie.title)                                  // a fault loads its values here
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when the ID names an unknown entity or
    ///   store, or a new object of another context.
    public func object(with objectID: ObjectID) throws -> ManagedObject {
        if let object = registered[objectID] { return object }
        if let parent {
            let source = try parent.object(with: objectID)
            let object = makeFault(for: objectID, entity: source.entity)
            return object
        }
        guard !objectID.isTemporaryID else { throw notFound(objectID, reason: "it is a new object of another context") }
        _ = try store(for: objectID)
        guard let entity = schema.entity(named: objectID.entityName), !entity.isAbstract else {
            throw notFound(objectID, reason: "the schema has no concrete entity \(objectID.entityName)")
        }
        return makeFault(for: objectID, entity: entity)
    }

    func notFound(_ objectID: ObjectID, reason: String) -> StrataError {
        StrataError(
            .objectNotFound, "No \(objectID.entityName) with ID \(objectID) can be found: \(reason).",
            entityName: objectID.entityName, objectID: objectID)
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

    /// Each inserted object's place in the insertion order, by identity: how unsaved objects
    /// are ordered among themselves in fetch results and controllers.
    func insertionRanks() -> [ObjectIdentifier: Int] {
        unsaved.insertionRanks()
    }

    func objectDidChange(_ object: ManagedObject) {
        // An inserted object is saved whole; its later edits matter only to observers, which
        // heard of the insertion in an earlier `objectsDidChange`.
        if !object._isInserted { unsaved.recordChange(of: object) }
        recordUpdate(object)
    }

    /// Called when an object's values became its committed snapshot (after a save): it is no
    /// longer inserted, and has no changes to save.
    func objectDidCommit(_ object: ManagedObject) {
        unsaved.objectDidCommit(ObjectIdentifier(object))
    }
}

@available(*, unavailable, message: "A context is used in one isolation domain; pass object IDs across.")
extension ObjectContext: Sendable {}

/// How a context refers to its container.
private enum ContainerReference {
    case none
    case strong(PersistentContainer)
    /// The container that owns the context (its view context).
    case owner(WeakContainer)
}

/// A weak reference to a container.
private final class WeakContainer {
    weak var container: PersistentContainer?
    init(_ container: PersistentContainer) { self.container = container }
}

/// A weak reference to a child context.
struct WeakContext {
    weak var context: ObjectContext?
    init(_ context: ObjectContext) { self.context = context }
}
