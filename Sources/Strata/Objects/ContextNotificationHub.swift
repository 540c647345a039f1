import Foundation

/// The observers of every context of the process: what `NotificationCenter` observers with a
/// `nil` object are to Core Data, for ``EntityObserver``s without a context.
///
/// Contexts consult it when they post, so a context nobody observes pays one uncontended lock
/// per notification it would post; handlers run synchronously in the posting context's
/// isolation domain.
final class ContextNotificationHub: Sendable {
    /// The process's hub.
    static let shared = ContextNotificationHub()

    private struct Registration {
        let name: ContextNotification.Name
        /// Whether only view contexts' notifications (posted on the main actor) are wanted.
        let onlyViewContexts: Bool
        let handler: @Sendable (ContextNotification) -> Void
    }

    private let registrations = LockedBox<[UUID: Registration]>([:])

    /// Calls `handler` with every context's notifications named `name`.
    ///
    /// Contexts made before an `objectsDidChange` registration record their changes from their
    /// next ``ObjectContext/processPendingChanges()`` only if something else made them track
    /// changes; contexts made afterwards always do.
    func add(_ name: ContextNotification.Name, _ handler: @escaping @Sendable (ContextNotification) -> Void) -> UUID {
        add(Registration(name: name, onlyViewContexts: false, handler: handler))
    }

    /// Calls `handler`, on the main actor, with the notifications named `name` of every
    /// container's view context.
    func addForViewContexts(_ name: ContextNotification.Name, _ handler: @escaping @MainActor @Sendable (ContextNotification) -> Void) -> UUID {
        add(
            Registration(name: name, onlyViewContexts: true) { notification in
                // Only view contexts' notifications reach here, and they post on the main actor:
                // the notification never leaves it.
                nonisolated(unsafe) let notification = notification
                MainActor.assumeIsolated { handler(notification) }
            })
    }

    private func add(_ registration: Registration) -> UUID {
        let id = UUID()
        registrations.withLock { $0[id] = registration }
        return id
    }

    func remove(_ id: UUID) {
        registrations.withLock { _ = $0.removeValue(forKey: id) }
    }

    func wants(_ name: ContextNotification.Name) -> Bool {
        registrations.withLock { registrations in registrations.values.contains { $0.name == name } }
    }

    /// Calls the handlers registered for the notification's name when it was posted.
    func post(_ notification: ContextNotification, fromViewContext: Bool) {
        let handlers = registrations.withLock { registrations in
            registrations.values.filter { $0.name == notification.name && (fromViewContext || !$0.onlyViewContexts) }
                .map(\.handler)
        }
        for handler in handlers { handler(notification) }
    }
}
