import Foundation

/// The results of a fetch request, kept current: an `AsyncSequence` that yields the result
/// now, then again after each save that changes it.
///
/// Made by ``PersistentContainer/observe(_:)`` and
/// ``PersistentContainer/observe(_:trackingChangesOf:)``. Each iteration runs its own fetches on
/// a background context and yields value snapshots, so it can be consumed anywhere.
///
/// - A save re-runs the request only when it inserted, updated or deleted objects of the
///   request's entity (or subentities), or of the tracked request's entity when one is given;
///   when the request's predicate or sort reaches related objects, every save counts.
/// - A result equal to the previous one is not yielded again.
/// - Saves never wait for the consumer: while it is busy, later saves are coalesced, and the
///   next result it reads is the latest.
/// - Ending the iteration (cancelling its task or leaving the loop) removes the registration.
public struct LiveQuery<Element: Sendable & Hashable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    let container: PersistentContainer
    let relevantEntities: Set<String>?
    let fetch: @Sendable (ObjectContext) throws -> [Element]

    /// Starts observing; the first element is the current result.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: start().makeAsyncIterator())
    }

    /// The iterator of a ``LiveQuery``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[Element], any Error>.Iterator

        /// The next result, or `nil` when observation ended; throws the error of a failed fetch.
        public mutating func next() async throws -> [Element]? { try await base.next() }
    }

    private func start() -> AsyncThrowingStream<[Element], any Error> {
        let (results, output) = AsyncThrowingStream<[Element], any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Commits only mark the result stale; the worker re-fetches, so saves never wait.
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relevantEntities = relevantEntities
        let observation = container.addCommitObserver { commit in
            guard let relevantEntities else {
                trigger.yield()
                return
            }
            let touched = commit.insertedObjectIDs + commit.updatedObjectIDs + commit.deletedObjectIDs
            if touched.contains(where: { relevantEntities.contains($0.entityName) }) { trigger.yield() }
        }
        let container = container
        let fetch = fetch
        let worker = Task.detached {
            var last: [Element]?
            func emit() throws {
                let result = try fetch(container.newBackgroundContext())
                guard result != last else { return }
                last = result
                output.yield(result)
            }
            do {
                try emit()
                for await _ in triggers {
                    if Task.isCancelled { break }
                    try emit()
                }
                output.finish()
            } catch {
                output.finish(throwing: error)
            }
        }
        output.onTermination = { _ in
            observation.cancel()
            trigger.finish()
            worker.cancel()
        }
        return results
    }
}

extension PersistentContainer {
    /// The value snapshots of the objects `request` matches, now and after every save that
    /// changes them.
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.year >= 1990, sortDescriptors: [.ascending(\.title)])
    /// for try await movies in container.observe(request) {
    ///     print(movies.map(\.title))       // [Movie.Value]
    /// }
    /// ```
    public func observe<Model: ValueSnapshotRepresentable>(_ request: FetchRequest<Model>) -> LiveQuery<Model.Value> {
        LiveQuery(container: self, relevantEntities: relevantEntities(for: request)) { context in
            try context.fetch(request).map(\.value)
        }
    }

    /// Like ``observe(_:)``, but re-runs `request` after the saves that change objects of the
    /// entity of `tracking` (for example a list of movies that shows review counts, re-run
    /// when reviews change).
    public func observe<Model: ValueSnapshotRepresentable, Tracked: ManagedObject>(
        _ request: FetchRequest<Model>, trackingChangesOf tracking: FetchRequest<Tracked>
    ) -> LiveQuery<Model.Value> {
        LiveQuery(container: self, relevantEntities: relevantEntities(for: tracking)) { context in
            try context.fetch(request).map(\.value)
        }
    }

    /// The entities whose changes can change `request`'s result, or `nil` for any.
    func relevantEntities<Model: ManagedObject>(for request: FetchRequest<Model>) -> Set<String>? {
        guard let entity = schema.entity(named: request.entityName) else { return [] }
        let reachesRelated =
            request.sortDescriptors.contains { $0.descriptor.key.contains(".") }
            || (request.predicate.map { ObjectQuery.reachesRelatedObjects($0.tree) } ?? false)
        if reachesRelated { return nil }
        return request.includesSubentities ? entity.kindNames : [entity.name]
    }
}
