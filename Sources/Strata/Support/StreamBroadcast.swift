import Foundation

/// The live `AsyncStream`s of one kind of event, each wanting some topics, reachable from any
/// thread (a stream's termination handler runs wherever its consumer stops).
///
/// Streams buffer without limit, so posting never waits for a consumer; a stream whose
/// iteration ends removes itself.
final class StreamBroadcast<Element: Sendable, Topic: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var topics: Set<Topic>
        var continuation: AsyncStream<Element>.Continuation
    }

    private let entries = LockedBox<(next: Int, byID: [Int: Entry])>((0, [:]))

    /// A new stream of the elements posted under `topics`.
    func makeStream(for topics: Set<Topic>) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let id = entries.withLock { state -> Int in
            state.next += 1
            state.byID[state.next] = Entry(topics: topics, continuation: continuation)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.entries.withLock { $0.byID.removeValue(forKey: id) }
        }
        return stream
    }

    /// Whether any stream wants `topic`.
    func wants(_ topic: Topic) -> Bool {
        entries.withLock { state in state.byID.values.contains { $0.topics.contains(topic) } }
    }

    /// Hands `element` to every stream that wants `topic` (outside the lock).
    func post(_ element: Element, topic: Topic) {
        let targets = entries.withLock { state in state.byID.values.filter { $0.topics.contains(topic) } }
        for target in targets { target.continuation.yield(element) }
    }

    /// The number of live streams.
    var count: Int { entries.withLock { $0.byID.count } }

    /// Ends every stream (the owner is going away).
    func finishAll() {
        let all = entries.withLock { state -> [Entry] in
            defer { state.byID.removeAll() }
            return Array(state.byID.values)
        }
        for entry in all { entry.continuation.finish() }
    }
}

/// The one topic of a broadcast whose streams want every element.
enum EveryElement: Hashable, Sendable {
    case all
}
