import Foundation

/// The batches of changes of a ``FetchedResultsController``, as an `AsyncSequence`.
public struct FetchedResultsChanges: AsyncSequence, Sendable {
    /// The type of the values the sequence yields.
    public typealias Element = FetchedResultsChange
    /// The error iteration can throw (none).
    public typealias Failure = Never

    let source: StreamSource<FetchedResultsChange, EveryElement>

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(base: source.makeStream().makeAsyncIterator()) }

    /// The iterator of ``FetchedResultsChanges``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<FetchedResultsChange>.Iterator

        /// The next batch, or `nil` once the controller is gone or the iteration was cancelled.
        public mutating func next() async -> FetchedResultsChange? { await base.next() }

        /// The next batch, in the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> FetchedResultsChange? {
            await base.next(isolation: actor)
        }
    }
}

/// The live iterations of a controller's ``FetchedResultsController/changes``.
typealias FetchedResultsStreams = StreamBroadcast<FetchedResultsChange, EveryElement>

extension StreamBroadcast where Element == FetchedResultsChange, Topic == EveryElement {
    func makeSequence() -> FetchedResultsChanges { FetchedResultsChanges(source: StreamSource(self, topics: [.all])) }

    func post(_ change: FetchedResultsChange) { post(change, topic: .all) }
}
