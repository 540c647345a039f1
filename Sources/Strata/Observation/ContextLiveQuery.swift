import Foundation

/// A query result of one context kept current: an `AsyncSequence`, iterated in the context's
/// isolation domain, that yields the result now and again after each change that alters it —
/// the context's own changes (unsaved ones included, once processed) and other contexts' saves.
///
/// Made by ``ObjectContext/observe(_:)`` and ``ObjectContext/observe(_:trackingChangesOf:)``.
/// Each iteration registers when it starts.
/// Unlike ``LiveQuery`` (the container's, which reads saved data on a background context), it
/// fetches with this context, so the result includes what the context has not saved:
///
/// ```swift
/// let context = container.viewContext
/// for try await movies in context.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])) {
///     render(movies)     // [Movie.Value], after each save anywhere and each processPendingChanges() here
/// }
/// ```
///
/// - The context's changes count when it processes them (``ObjectContext/processPendingChanges()``,
///   which every save does first); other contexts' saves (and other processes' commits, when the
///   store polls for them) are merged into the context, unless it merges automatically anyway.
/// - Changes to objects of entities the request cannot match are ignored; a result equal to the
///   previous one is not yielded again.
/// - Nothing waits for the consumer: changes that arrive while it is busy are folded into the
///   next result it reads.
/// - Each iteration registers when it is made; ending it (leaving the loop, or cancelling its
///   task) removes every registration.
public struct ContextLiveQuery<Result: Equatable>: AsyncSequence {
    /// The type of the values the sequence yields.
    public typealias Element = Result
    /// The error iteration can throw.
    public typealias Failure = any Error

    let context: ObjectContext
    let relevantEntities: Set<String>?
    let fetch: (ObjectContext) throws -> Result

    /// Starts observing; the first element is the current result.
    public func makeAsyncIterator() -> Iterator {
        Iterator(registration: Registration(context: context, relevantEntities: relevantEntities), fetch: fetch)
    }

    /// The iterator of a ``ContextLiveQuery``; it lives in the context's isolation domain.
    public struct Iterator: AsyncIteratorProtocol {
        let registration: Registration
        let fetch: (ObjectContext) throws -> Result
        var triggers: AsyncStream<Void>.Iterator
        var last: Result?
        var started = false

        init(registration: Registration, fetch: @escaping (ObjectContext) throws -> Result) {
            self.registration = registration
            self.fetch = fetch
            self.triggers = registration.triggers.makeAsyncIterator()
        }

        /// The next result, in the caller's isolation (the context's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Result? {
            if !started {
                started = true
                let result = try current()
                last = result
                return result
            }
            while await triggers.next(isolation: actor) != nil {
                try Task.checkCancellation()
                let result = try current()
                if result != last {
                    last = result
                    return result
                }
            }
            return nil
        }

        /// The next result.
        public mutating func next() async throws -> Result? {
            try await next(isolation: nil)
        }

        private func current() throws -> Result {
            registration.mergeOtherSaves()
            return try fetch(registration.context)
        }
    }

    /// What one iteration registered; releasing it (with its iterator) removes it all.
    final class Registration {
        let context: ObjectContext
        let triggers: AsyncStream<Void>
        private let trigger: AsyncStream<Void>.Continuation
        private var observations: [ContextObservation] = []
        private let inbox: MergeInbox?
        private let relevantEntities: Set<String>?

        init(context: ObjectContext, relevantEntities: Set<String>?) {
            self.context = context
            self.relevantEntities = relevantEntities
            (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let trigger = trigger
            // Other contexts' saves, collected on any thread and merged before the next fetch.
            if let container = context.container, context.parent == nil {
                // Wakes this query for the saves that concern it; the saves themselves are
                // merged from one inbox per context, however many queries it has.
                let inbox = MergeInbox(
                    owner: ObjectIdentifier(context),
                    filter: { changes in
                        guard let relevantEntities, !changes.isRemoteChange else { return true }
                        return !changes.changedEntityNames.isDisjoint(with: relevantEntities)
                    },
                    onArrival: { _ = trigger.yield() })
                container.mergeInboxes.add(inbox)
                context.retainObservedSaves()
                self.inbox = inbox
            } else {
                inbox = nil
            }
            for name in [ContextNotification.Name.objectsDidChange, .didSave] {
                observations.append(
                    context.addObserver(for: name) { [relevantEntities] notification in
                        guard let relevantEntities else {
                            trigger.yield()
                            return
                        }
                        let touched = notification.insertedObjects.union(notification.updatedObjects)
                            .union(notification.deletedObjects)
                        if notification.isRemoteChange || touched.contains(where: { relevantEntities.contains($0.entity.name) }) {
                            trigger.yield()
                        }
                    })
            }
        }

        /// Merges the other contexts' saves that arrived (once for all the context's live
        /// queries), unless the context merges them itself.
        func mergeOtherSaves() {
            _ = inbox?.drain()  // this query's wake-ups
            context.mergeObservedSaves()
        }

        deinit {
            for observation in observations { observation.cancel() }
            if let inbox {
                context.container?.mergeInboxes.remove(inbox)
                context.releaseObservedSaves()
            }
            trigger.finish()
        }
    }
}

@available(*, unavailable, message: "A context's live query is iterated in the context's isolation domain.")
extension ContextLiveQuery: Sendable {}

extension ObjectContext {
    /// The value snapshots of the objects `request` matches in this context — unsaved changes
    /// included — now and after every change that alters them.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movies in context.observe(FetchRequest<Movie>(predicate: \.year >= 1990)) {
    ///     print(movies.map(\.title))
    /// }
    /// ```
    public func observe<Model: ValueSnapshotRepresentable>(_ request: FetchRequest<Model>) -> ContextLiveQuery<[Model.Value]> {
        let observed = ObservedRequest(request, in: schema)
        return ContextLiveQuery(context: self, relevantEntities: container == nil ? nil : observed.relevantEntities) {
            context in try observed.fetch(Model.self, in: context).map(\.value)
        }
    }

    /// Like ``observe(_:)``, but fetches `request` again after the changes to objects of the
    /// entity of `tracking`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movies = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
    /// for try await snapshots in context.observe(movies, trackingChangesOf: FetchRequest<Review>()) {
    ///     print(snapshots.count)   // again after each change of reviews
    /// }
    /// ```
    public func observe<Model: ValueSnapshotRepresentable, Tracked: ManagedObject>(
        _ request: FetchRequest<Model>, trackingChangesOf tracking: FetchRequest<Tracked>
    ) -> ContextLiveQuery<[Model.Value]> {
        let observed = ObservedRequest(request, in: schema)
        return ContextLiveQuery(context: self, relevantEntities: container?.relevantEntities(for: tracking)) {
            context in try observed.fetch(Model.self, in: context).map(\.value)
        }
    }
}
