import Foundation

/// The live `AsyncStream`s of one kind of event, each wanting some topics, reachable from any
/// thread (a stream's termination handler runs wherever its consumer stops).
///
/// Streams buffer without limit, so posting never waits for a consumer; a stream whose
/// iteration ends (or that is no longer referenced) removes itself.
final class StreamBroadcast<Element: Sendable, Topic: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var topics: Set<Topic>
        var continuation: AsyncStream<Element>.Continuation
    }

    private struct State: Sendable {
        var next = 0
        var byID: [Int: Entry] = [:]
        var isFinished = false
    }

    private let state = LockedBox(State())

    /// A new stream of the elements posted under `topics`, and its registration number. Once
    /// the broadcast is finished, the stream is finished from the start.
    func makeStream(for topics: Set<Topic>) -> (stream: AsyncStream<Element>, id: Int) {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> Int? in
            guard !state.isFinished else { return nil }
            state.next += 1
            state.byID[state.next] = Entry(topics: topics, continuation: continuation)
            return state.next
        }
        guard let id else {
            continuation.finish()
            return (stream, 0)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.byID.removeValue(forKey: id) }
        }
        return (stream, id)
    }

    /// Ends and forgets the stream registered as `id`.
    func remove(_ id: Int) {
        state.withLock { $0.byID.removeValue(forKey: id) }?.continuation.finish()
    }

    /// Whether any stream wants `topic`.
    func wants(_ topic: Topic) -> Bool {
        state.withLock { state in state.byID.values.contains { $0.topics.contains(topic) } }
    }

    /// Hands `element` to every stream that wants `topic` (outside the lock).
    func post(_ element: Element, topic: Topic) {
        let targets = state.withLock { state in state.byID.values.filter { $0.topics.contains(topic) } }
        for target in targets { target.continuation.yield(element) }
    }

    /// The number of live streams.
    var count: Int { state.withLock { $0.byID.count } }

    /// Ends every stream, and every stream made from now on (the owner is going away).
    func finishAll() {
        let all = state.withLock { state -> [Entry] in
            defer {
                state.byID.removeAll()
                state.isFinished = true
            }
            return Array(state.byID.values)
        }
        for entry in all { entry.continuation.finish() }
    }
}

/// The streams behind one sequence value (``ContextChangesSequence``, ``FetchedResultsChanges``).
///
/// The first stream is registered when the sequence is made, so that the first iteration
/// receives everything since then; each later iteration registers a stream of its own when it
/// starts. A first stream nobody iterated is removed when the sequence value goes away.
final class StreamSource<Element: Sendable, Topic: Hashable & Sendable>: Sendable {
    private let broadcast: StreamBroadcast<Element, Topic>
    private let topics: Set<Topic>
    private let first: LockedBox<(stream: AsyncStream<Element>, id: Int)?>

    init(_ broadcast: StreamBroadcast<Element, Topic>, topics: Set<Topic>) {
        self.broadcast = broadcast
        self.topics = topics
        first = LockedBox(broadcast.makeStream(for: topics))
    }

    /// The stream for a new iteration.
    func makeStream() -> AsyncStream<Element> {
        let unclaimed = first.withLock { first -> AsyncStream<Element>? in
            defer { first = nil }
            return first?.stream
        }
        return unclaimed ?? broadcast.makeStream(for: topics).stream
    }

    deinit {
        if let unclaimed = first.withLock({ $0 }) { broadcast.remove(unclaimed.id) }
    }
}

/// The one topic of a broadcast whose streams want every element.
enum EveryElement: Hashable, Sendable {
    case all
}
