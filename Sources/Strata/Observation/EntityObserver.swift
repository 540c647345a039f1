import Foundation

/// Observes the objects of one entity type in a context: calls a handler with typed arrays of
/// the objects inserted, updated or deleted, upon `objectsDidChange`, `willSave` or `didSave`.
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

    private var observation: ContextObservation?

    /// Starts observing `Model` objects of `context`.
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
        observation = context.addObserver(for: event.notificationName) { notification in
            func select(_ objects: Set<ManagedObject>, _ kind: Kinds) -> [Model] {
                guard kinds.contains(kind) else { return [] }
                return objects.compactMap { $0 as? Model }.filter { filter?($0) ?? true }
            }
            let changes = Changes(
                event: event, inserted: select(notification.insertedObjects, .inserted),
                updated: select(notification.updatedObjects, .updated), deleted: select(notification.deletedObjects, .deleted))
            if !changes.isEmpty { handler(changes) }
        }
    }

    /// Stops observing. Releasing the observer does the same.
    public func cancel() {
        observation?.cancel()
        observation = nil
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
