import Foundation

/// The observers of one store, called in registration order.
package final class CommitObservers: Sendable {
    package init() {}

    private let observers = LockedBox<[(id: UUID, call: @Sendable (StoreCommit) -> Void)]>([])

    package func add(_ observer: @escaping @Sendable (StoreCommit) -> Void) -> StoreObservation {
        let id = UUID()
        observers.withLock { $0.append((id, observer)) }
        return StoreObservation { [weak self] in
            self?.observers.withLock { $0.removeAll { $0.id == id } }
        }
    }

    package var count: Int { observers.withLock { $0.count } }

    package func notify(_ commit: StoreCommit) {
        for observer in observers.withLock({ $0 }) { observer.call(commit) }
    }
}
