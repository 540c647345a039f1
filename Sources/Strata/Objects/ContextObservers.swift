import Foundation

/// A context's observers and the changes not yet announced by `objectsDidChange`.
final class ContextObservers {
    private struct Callback {
        var id: Int
        var name: ContextNotification.Name
        var handler: (ContextNotification) -> Void
    }

    private var callbacks: [Callback] = []
    private var nextID = 0
    let streams = ChangeStreams()

    /// Whether changes are recorded for `objectsDidChange`: only once someone asked for it, so
    /// that contexts nobody observes pay nothing per change.
    private(set) var tracksChanges = ContextNotificationHub.shared.wants(.objectsDidChange)
    var pendingInserted: [ObjectIdentifier: ManagedObject] = [:]
    var pendingUpdated: [ObjectIdentifier: ManagedObject] = [:]
    var pendingDeleted: [ObjectIdentifier: ManagedObject] = [:]
    var pendingRefreshed: [ObjectIdentifier: ManagedObject] = [:]
    /// Whether the view context's `objectsDidChange` is scheduled for the end of the turn.
    var isPostingScheduled = false
    /// Whether these are the observers of a container's view context (which posts on the main
    /// actor).
    var isViewContext = false

    func add(_ name: ContextNotification.Name, _ handler: @escaping (ContextNotification) -> Void) -> Int {
        nextID += 1
        callbacks.append(Callback(id: nextID, name: name, handler: handler))
        if name == .objectsDidChange { tracksChanges = true }
        return nextID
    }

    func remove(_ id: Int) {
        callbacks.removeAll { $0.id == id }
    }

    func startTrackingChanges() { tracksChanges = true }

    /// The number of registrations, callbacks and streams.
    var count: Int { callbacks.count + streams.count }

    func wants(_ name: ContextNotification.Name) -> Bool {
        callbacks.contains { $0.name == name } || streams.wants(name) || ContextNotificationHub.shared.wants(name)
    }

    /// Calls the callbacks registered for the notification's name (those registered at the time
    /// it was posted), then hands its IDs to the streams.
    func post(_ notification: ContextNotification) {
        for callback in callbacks where callback.name == notification.name {
            callback.handler(notification)
        }
        if streams.wants(notification.name) { streams.post(notification.changes) }
        ContextNotificationHub.shared.post(notification, fromViewContext: isViewContext)
    }

    func clearPendingChanges() {
        pendingInserted.removeAll()
        pendingUpdated.removeAll()
        pendingDeleted.removeAll()
        pendingRefreshed.removeAll()
    }
}
