#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Strata

extension LiveQuery {
    /// The live query as a Combine publisher: the current result, then each changed one.
    ///
    /// ```swift
    /// let cancellable = container.observe(FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)]))
    ///     .publisher
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { movies in print(movies.map(\.title)) })
    /// ```
    ///
    /// Each subscription runs its own query; cancelling it removes the query's registrations. A
    /// result the subscriber has not asked for yet is replaced by the next one.
    public var publisher: AsyncSequencePublisher<Result, any Error> { AsyncSequencePublisher(self, keepsLatestOnly: true) }
}

extension PersistentContainer {
    /// The value snapshots of the objects `request` matches, now and after every save that
    /// changes them (``PersistentContainer/observe(_:)`` as a publisher).
    public func publisher<Model: ValueSnapshotRepresentable>(
        for request: FetchRequest<Model>
    ) -> AsyncSequencePublisher<[Model.Value], any Error> {
        observe(request).publisher
    }

    /// One object's value snapshot, now and after each save that changes it; fails with
    /// ``StrataError/Code/objectDeleted`` when the object is deleted.
    public func publisher<Model: ValueSnapshotRepresentable>(
        for objectID: TypedObjectID<Model>, includingRelatedObjects: Bool = false
    ) -> AsyncSequencePublisher<Model.Value, any Error> {
        observe(objectID, includingRelatedObjects: includingRelatedObjects).publisher
    }

    /// The number of objects `request` matches, now and after each save that changes it.
    public func countPublisher<Model: ManagedObject>(for request: FetchRequest<Model>) -> AsyncSequencePublisher<Int, any Error> {
        observeCount(of: request).publisher
    }

    /// The saves of every context of the container, as object IDs
    /// (``PersistentContainer/savedChanges()`` as a publisher). It finishes when the container
    /// closes.
    public var savedChangesPublisher: AsyncSequencePublisher<ContextChanges, Never> {
        AsyncSequencePublisher(neverFailing: savedChanges())
    }
}

extension ObjectContext {
    /// The context's notifications named in `names`, as their `Sendable` form
    /// (``ObjectContext/changes(for:)`` as a publisher).
    ///
    /// ```swift
    /// let cancellable = context.changesPublisher(for: [.didSave]).sink { changes in
    ///     print(changes.insertedObjectIDs.count, "new objects saved")
    /// }
    /// ```
    public func changesPublisher(
        for names: Set<ContextNotification.Name> = Set(ContextNotification.Name.allCases)
    ) -> AsyncSequencePublisher<ContextChanges, Never> {
        AsyncSequencePublisher(neverFailing: changes(for: names))
    }
}

extension FetchedResultsController {
    /// The controller's batches of changes (``FetchedResultsController/changes`` as a
    /// publisher). It finishes when the controller is released.
    public var changesPublisher: AsyncSequencePublisher<FetchedResultsChange, Never> {
        AsyncSequencePublisher(neverFailing: changes)
    }
}

extension PersistentContainer {
    /// The view context's ``Strata/ObjectContext/entities(_:where:sortedBy:)`` as a publisher:
    /// the values of type `P` now, then after each change the view context sees (its own
    /// processed changes and the saves it merges). The Rx kit's `rx.entities`.
    ///
    /// ```swift
    /// let cancellable = container.entitiesPublisher(LoginData.self)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { logins in print(logins.count) })
    /// ```
    ///
    /// The query runs on the main actor (the view context's); cancelling the subscription ends
    /// it and releases its controller.
    public func entitiesPublisher<P: PersistableValue & Sendable>(
        _ type: P.Type = P.self, where predicate: FetchPredicate<P.Model>? = nil,
        sortedBy sortDescriptors: [FetchSortDescriptor<P.Model>]? = nil
    ) -> AsyncSequencePublisher<[P], any Error> {
        AsyncSequencePublisher(keepsLatestOnly: true, produce: { @MainActor emitter in
            do {
                for try await values in self.viewContext.entities(P.self, where: predicate, sortedBy: sortDescriptors) {
                    guard emitter.send(values) else { return nil }
                }
                return nil
            } catch {
                return error
            }
        })
    }
}
