import Foundation

/// An `AsyncSequence` of ``ContextChanges``: notifications of one context or of every context of
/// a container, in the order they were posted.
///
/// The sequence registers when it is made: its first iteration receives every notification
/// since then. Each later iteration of the same value registers when it starts, and receives
/// every notification from then on. An iteration buffers what its consumer has not read yet,
/// so a slow consumer never blocks a save; ending it (cancelling its task, or breaking out of
/// the loop) removes its registration, and so does releasing a sequence never iterated.
public struct ContextChangesSequence: AsyncSequence, Sendable {
    /// The type of the values the sequence yields.
    public typealias Element = ContextChanges
    /// The error iteration can throw (none).
    public typealias Failure = Never

    let source: StreamSource<ContextChanges, ContextNotification.Name>

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(base: source.makeStream().makeAsyncIterator()) }

    /// The iterator of a ``ContextChangesSequence``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<ContextChanges>.Iterator

        /// The next notification, or `nil` when the iteration was cancelled.
        public mutating func next() async -> ContextChanges? { await base.next() }

        /// The next notification, in the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ContextChanges? {
            await base.next(isolation: actor)
        }
    }
}

/// The streams of ``ContextChangesSequence``s: of one context, or of a container's saves.
typealias ChangeStreams = StreamBroadcast<ContextChanges, ContextNotification.Name>

extension StreamBroadcast where Element == ContextChanges, Topic == ContextNotification.Name {
    /// A new sequence receiving the notifications named in `names`.
    func makeSequence(for names: Set<ContextNotification.Name>) -> ContextChangesSequence {
        ContextChangesSequence(source: StreamSource(self, topics: names))
    }

    /// Hands `changes` to every stream that wants notifications of their name.
    func post(_ changes: ContextChanges) { post(changes, topic: changes.name) }
}
