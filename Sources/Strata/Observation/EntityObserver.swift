import Foundation

/// Observes the objects of one entity type in a context, or in every context of the process:
/// calls a handler with typed arrays of the objects inserted, updated or deleted, upon
/// `objectsDidChange`, `willSave` or `didSave` (the stack kit's `EntityObserver`).
///
/// The handler is not called when every kind of change it asked for is empty, so an observer of
/// movie insertions is quiet while reviews are edited.
///
/// ```swift
/// let observer = EntityObserver<Movie>(context, on: .didSave, changes: [.inserted, .deleted],
///                                      where: { $0.year >= 1990 }) { changes in
///     print(changes.inserted.map(\.title), changes.deleted.count)
/// }
/// // ... later
/// observer.cancel()   // or release it
/// ```
///
/// Objects of subentities count as objects of their parent's type. For deleted objects the
/// filter sees their last values.
public final class EntityObserver<Model: ManagedObject> {
    /// When the handler is called.
    public typealias Event = EntityObserverEvent
    /// The kinds of change an observer wants.
    public typealias Kinds = EntityChangeKinds

    /// The changes to `Model` objects one notification reported; kinds the observer did not ask
    /// for are empty.
    public struct Changes {
        /// The event that produced the changes.
        public let event: Event
        /// Inserted objects.
        public let inserted: [Model]
        /// Updated objects.
        public let updated: [Model]
        /// Deleted objects.
        public let deleted: [Model]

        /// Whether no object changed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
    }

    /// The context whose notifications the observer follows; `nil` for every context of the
    /// process.
    public let context: ObjectContext?
    /// The registrations; each ends when released.
    private var observations: [AnyObject] = []

    /// Starts observing `Model` objects of `context`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Review>(context, on: .didChange, changes: .updated) { changes in
    ///     print(changes.updated.map(\.stars))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: The context whose notifications to follow.
    ///   - event: When to call the handler.
    ///   - kinds: Which kinds of change to report; ``EntityChangeKinds/any`` by default.
    ///   - filter: Objects for which it returns `false` are left out.
    ///   - handler: Called on the context's isolation domain with the non-empty changes.
    public init(
        _ context: ObjectContext, on event: Event, changes kinds: Kinds = .any, where filter: ((Model) -> Bool)? = nil,
        handler: @escaping (Changes) -> Void
    ) {
        self.context = context
        observations.append(
            context.addObserver(for: event.notificationName) { notification in
                if let changes = Self.changes(in: notification, event: event, kinds: kinds, filter: filter) { handler(changes) }
            })
    }

    /// Creates an observer of `Model` objects that starts with ``observeChanges(upon:for:filter:handler:)``
    /// (the stack kit's `EntityObserver(context:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Person>()              // every context of the process
    /// observer.observeChanges { inserted, updated, deleted in
    ///     print(inserted.count, "people saved somewhere")
    /// }
    /// let mine = EntityObserver<Person>(context: context)  // one context
    /// mine.observeChanges(upon: .willSave, for: .deleted) { _, _, deleted in
    ///     print(deleted.map(\.name), "are about to go")
    /// }
    /// ```
    ///
    /// Without a context the observer hears every context of every container in the process, as
    /// a `NotificationCenter` observer with a `nil` object does in Core Data. (Upon
    /// ``EntityObserverEvent/didChange`` it hears the contexts made after it started, and those
    /// that record their changes for other `objectsDidChange` observers: a context starts
    /// recording when it is made or first observed, so that unobserved contexts pay nothing
    /// per change.) Its handlers run
    /// synchronously in the isolation domain of the context that posted, with that context's
    /// objects, so they are `@Sendable`; pass object IDs on to use the objects elsewhere.
    ///
    /// - Parameter context: The context to follow; `nil` for all.
    public init(context: ObjectContext? = nil) {
        self.context = context
    }

    /// Calls `handler` with the `Model` objects that changed upon `event` (the stack kit's
    /// `observeChanges(upon:for:filter:handler:)`).
    ///
    /// The handler is not called when every kind it asked for is empty after filtering. Call
    /// this more than once to observe several events; ``cancel()`` stops all.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Movie>(context: context)
    /// observer.observeChanges(upon: .willSave, for: .deleted, filter: { $0.year < 1950 }) { _, _, deleted in
    ///     print(deleted.map(\.title), "are about to go")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - event: When: ``EntityObserverEvent/didSave`` by default.
    ///   - kinds: Which kinds of change; ``EntityChangeKinds/any`` by default.
    ///   - filter: Objects for which it returns `false` are left out.
    ///   - handler: Called with the inserted, updated and deleted objects, in the posting
    ///     context's isolation domain.
    /// - Returns: The observer, for chaining.
    @discardableResult
    public func observeChanges(
        upon event: Event = .didSave, for kinds: Kinds = .any, filter: (@Sendable (Model) -> Bool)? = nil,
        handler: @escaping @Sendable (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) -> Self {
        let forward: @Sendable (ContextNotification) -> Void = { notification in
            if let changes = Self.changes(in: notification, event: event, kinds: kinds, filter: filter) {
                handler(changes.inserted, changes.updated, changes.deleted)
            }
        }
        if let context {
            observations.append(context.addObserver(for: event.notificationName, forward))
        } else {
            observations.append(HubRegistration(ContextNotificationHub.shared.add(event.notificationName, forward)))
        }
        return self
    }

    /// Calls `handler` with every change of `Model` objects upon `didSave`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Movie>(context: context).observeChanges { inserted, updated, deleted in
    ///     print(inserted.count, updated.count, deleted.count)
    /// }
    /// ```
    @discardableResult
    public func observeChanges(
        _ handler: @escaping @Sendable (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) -> Self {
        observeChanges(upon: .didSave, for: .any, filter: nil, handler: handler)
    }

    /// Calls `handler` with the changes of `Model` objects of `kinds` upon `didSave`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Movie>(context: context)
    /// observer.observeChanges(for: .updated, filter: { $0.year >= 1990 }) { _, updated, _ in
    ///     print(updated.map(\.title))
    /// }
    /// ```
    @discardableResult
    public func observeChanges(
        for kinds: Kinds, filter: (@Sendable (Model) -> Bool)? = nil,
        handler: @escaping @Sendable (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) -> Self {
        observeChanges(upon: .didSave, for: kinds, filter: filter, handler: handler)
    }

    /// Calls `handler`, on the main actor, with the `Model` objects that changed upon `event`:
    /// the main-actor form of ``observeChanges(upon:for:filter:handler:)``, whose handler and
    /// filter may use main-actor state (a view model's properties, a test's collected results).
    ///
    /// For example:
    ///
    /// ```swift
    /// @MainActor final class PeopleModel {
    ///     var newPeople: [String] = []
    ///     var observer: EntityObserver<Person>?
    ///     func start(_ context: ObjectContext) {   // the view context
    ///         observer = EntityObserver<Person>(context: context).observeChangesOnMainActor(for: .inserted) {
    ///             inserted, _, _ in self.newPeople += inserted.map(\.name)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// An observer of one context calls the handler synchronously as that context posts; the
    /// context must be used on the main actor (the ``PersistentContainer/viewContext``, or a
    /// context made and used there), which the handler checks. An observer of every context
    /// hears the view context of every container of the process (other contexts post in their
    /// own isolation domains, where main-actor state cannot be touched; use
    /// ``observeChanges(upon:for:filter:handler:)`` for those).
    ///
    /// - Parameters:
    ///   - event: When: ``EntityObserverEvent/didSave`` by default.
    ///   - kinds: Which kinds of change; ``EntityChangeKinds/any`` by default.
    ///   - filter: Objects for which it returns `false` are left out.
    ///   - handler: Called on the main actor with the inserted, updated and deleted objects.
    /// - Returns: The observer, for chaining.
    @MainActor @discardableResult
    public func observeChangesOnMainActor(
        upon event: Event = .didSave, for kinds: Kinds = .any, filter: (@MainActor (Model) -> Bool)? = nil,
        handler: @escaping @MainActor (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) -> Self {
        if let context {
            observations.append(
                context.addObserver(for: event.notificationName) { notification in
                    MainActor.preconditionIsolated(
                        "EntityObserver.observeChangesOnMainActor: the observed context posted off the main actor; observe the view context (or a context used on the main actor), or use observeChanges(upon:for:filter:handler:).")
                    Self.deliverOnMainActor(notification, event: event, kinds: kinds, filter: filter, to: handler)
                })
        } else {
            let forward: @MainActor @Sendable (ContextNotification) -> Void = { notification in
                Self.deliverOnMainActor(notification, event: event, kinds: kinds, filter: filter, to: handler)
            }
            observations.append(HubRegistration(ContextNotificationHub.shared.addForViewContexts(event.notificationName, forward)))
        }
        return self
    }

    /// Calls `handler`, on the main actor, with the changes of `Model` objects of `kinds` upon
    /// `didSave` (see ``observeChangesOnMainActor(upon:for:filter:handler:)``).
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Review>(context: container.viewContext)   // on the main actor
    /// observer.observeChangesOnMainActor(for: .inserted, filter: { $0.stars >= 4 }) { inserted, _, _ in
    ///     print(inserted.count, "good reviews")
    /// }
    /// ```
    @MainActor @discardableResult
    public func observeChangesOnMainActor(
        for kinds: Kinds, filter: (@MainActor (Model) -> Bool)? = nil,
        handler: @escaping @MainActor (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) -> Self {
        observeChangesOnMainActor(upon: .didSave, for: kinds, filter: filter, handler: handler)
    }

    /// Stops observing. Releasing the observer does the same.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = EntityObserver<Movie>(context: context).observeChanges { inserted, _, _ in
    ///     print(inserted.count)
    /// }
    /// observer.cancel()   // the handler is not called again
    /// ```
    public func cancel() {
        for observation in observations { (observation as? ContextObservation)?.cancel() }
        observations.removeAll()
    }

    /// Calls `handler` with the `Model` objects of the kinds asked for in `notification` that
    /// pass `filter`, unless there are none.
    @MainActor private static func deliverOnMainActor(
        _ notification: ContextNotification, event: Event, kinds: Kinds, filter: (@MainActor (Model) -> Bool)?,
        to handler: @MainActor (_ inserted: [Model], _ updated: [Model], _ deleted: [Model]) -> Void
    ) {
        guard let changes = Self.changes(in: notification, event: event, kinds: kinds, filter: nil) else { return }
        let kept = { (objects: [Model]) in objects.filter { filter?($0) ?? true } }
        let inserted = kept(changes.inserted)
        let updated = kept(changes.updated)
        let deleted = kept(changes.deleted)
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty else { return }
        handler(inserted, updated, deleted)
    }

    /// The `Model` objects of the kinds asked for in `notification`, or `nil` when there are none.
    private static func changes(
        in notification: ContextNotification, event: Event, kinds: Kinds, filter: ((Model) -> Bool)?
    ) -> Changes? {
        func select(_ objects: Set<ManagedObject>, _ kind: Kinds) -> [Model] {
            guard kinds.contains(kind) else { return [] }
            return objects.compactMap { $0 as? Model }.filter { filter?($0) ?? true }
        }
        let changes = Changes(
            event: event, inserted: select(notification.insertedObjects, .inserted),
            updated: select(notification.updatedObjects, .updated), deleted: select(notification.deletedObjects, .deleted))
        return changes.isEmpty ? nil : changes
    }
}

/// A registration with the process's hub, removed when released.
private final class HubRegistration {
    private let id: UUID
    init(_ id: UUID) { self.id = id }
    deinit { ContextNotificationHub.shared.remove(id) }
}

extension EntityModel where Self: ManagedObject {
    /// An observer of the class's objects in `context`, or in every context when `nil` (the
    /// stack kit's `makeObserver(with:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let observer = Person.makeObserver().observeChanges(for: .inserted) { inserted, _, _ in
    ///     print(inserted.count, "new people")
    /// }
    /// ```
    public static func makeObserver(with context: ObjectContext? = nil) -> EntityObserver<Self> {
        EntityObserver<Self>(context: context)
    }
}

@available(*, unavailable, message: "An entity observer belongs to its context's isolation domain.")
extension EntityObserver: Sendable {}

@available(*, unavailable, message: "Changes carry managed objects; pass their IDs across isolation domains.")
extension EntityObserver.Changes: Sendable {}

/// When an ``EntityObserver`` calls its handler.
public enum EntityObserverEvent: Sendable, Hashable {
    /// When the context processes its pending changes (``ObjectContext/processPendingChanges()``).
    case didChange
    /// When a save starts, with the objects it is about to write.
    case willSave
    /// After a save succeeded, with the objects it wrote.
    case didSave

    var notificationName: ContextNotification.Name {
        switch self {
        case .didChange: .objectsDidChange
        case .willSave: .willSave
        case .didSave: .didSave
        }
    }
}

/// The kinds of change an ``EntityObserver`` reports.
public struct EntityChangeKinds: OptionSet, Sendable, Hashable {
    /// The kinds as bits: inserted, updated, deleted.
    public let rawValue: Int
    /// Creates a set of kinds from its raw value.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Inserted objects.
    public static let inserted = EntityChangeKinds(rawValue: 1 << 0)
    /// Updated objects.
    public static let updated = EntityChangeKinds(rawValue: 1 << 1)
    /// Deleted objects.
    public static let deleted = EntityChangeKinds(rawValue: 1 << 2)
    /// Every kind.
    public static let any: EntityChangeKinds = [.inserted, .updated, .deleted]
}
