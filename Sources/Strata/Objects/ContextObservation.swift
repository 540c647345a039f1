import Foundation

/// A registration made with ``ObjectContext/addObserver(for:_:)``; cancelling it, or releasing
/// it, removes the registration.
public final class ContextObservation {
    private var removal: (() -> Void)?

    init(removal: @escaping () -> Void) {
        self.removal = removal
    }

    /// Stops the callbacks. Calling it again does nothing.
    ///
    /// For example:
    ///
    /// ```swift
    /// let observation = context.addObserver(for: .didSave) { notification in
    ///     print("saved", notification.insertedObjects.count, "new objects")
    /// }
    /// try context.save()
    /// observation.cancel()   // no more calls
    /// ```
    public func cancel() {
        removal?()
        removal = nil
    }

    deinit { cancel() }
}

@available(*, unavailable, message: "An observation belongs to its context's isolation domain.")
extension ContextObservation: Sendable {}
