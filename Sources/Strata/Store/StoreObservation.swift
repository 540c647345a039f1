import Foundation

/// A registration of a commit observer; the observer stops being called when the observation
/// is cancelled or released.
public final class StoreObservation: Sendable {
    private let onCancel: LockedBox<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedBox(onCancel)
    }

    /// Stops the observer. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
