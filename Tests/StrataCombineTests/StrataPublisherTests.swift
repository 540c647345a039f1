import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCombine

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

@Entity final class Film: ManagedObject {
    var title: String = ""
    var year: Int16 = 2000
}

/// Values and completions a subscriber received, from whatever thread.
final class Received<Value: Sendable>: Sendable {
    let values = LockedBox<[Value]>([])
    let completion = LockedBox<String?>(nil)

    /// Waits (up to 60 s: a loaded test machine is slow, and this is patience, not a timing check) until `condition` holds for what arrived.
    func wait(until condition: @escaping @Sendable ([Value], String?) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while !condition(values.withLock { $0 }, completion.withLock { $0 }) {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A subscriber that asks for one element at a time, when told to.
final class OneAtATime<Value: Sendable>: Subscriber, @unchecked Sendable {
    typealias Input = Value
    typealias Failure = any Error
    // Guarded by the lock box; the subscription is only used through `more()`.
    let received = Received<Value>()
    let subscription = LockedBox<(any Subscription)?>(nil)

    func receive(subscription: any Subscription) {
        self.subscription.withLock { $0 = subscription }
        subscription.request(.max(1))
    }

    func receive(_ input: Value) -> Subscribers.Demand {
        received.values.withLock { $0.append(input) }
        return .none
    }

    func receive(completion: Subscribers.Completion<any Error>) {
        received.completion.withLock { $0 = "\(completion)" }
    }

    func more() { subscription.withLock { $0 }?.request(.max(1)) }
    func cancel() { subscription.withLock { $0 }?.cancel() }
}

/// Waits (up to 60 s: a loaded test machine is slow, and this is patience, not a timing check) until `condition` holds.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(300)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(5))
    }
}

@Suite(.timeLimit(.minutes(10))) struct StrataPublisherTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try PersistentContainer(
            name: "Films", entities: [Film.self],
            storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Films.sqlite"))])
        let context = container.newBackgroundContext()
        Film(context: context).title = "Heat"
        try context.save()
    }

    var commitObserverCount: Int {
        container.stores.compactMap { ($0 as? SQLiteStore)?.commitObservers.count }.reduce(0, +)
    }

    func insertFilm(_ title: String) async throws {
        try await container.performBackgroundTask { context in
            Film(context: context).title = title
            try context.save()
        }
    }

    @Test func aLiveQueryPublishesResultsUntilCancelled() async throws {
        let baseline = commitObserverCount
        let received = Received<[String]>()
        let cancellable = container.publisher(for: FetchRequest<Film>(sortDescriptors: [.ascending(\.title)]))
            .map { $0.map(\.title) }
            .sink(
                receiveCompletion: { completion in received.completion.withLock { $0 = "\(completion)" } },
                receiveValue: { titles in received.values.withLock { $0.append(titles) } })
        try await received.wait { values, _ in values == [["Heat"]] }
        #expect(commitObserverCount == baseline + 1)
        try await insertFilm("Alien")
        try await received.wait { values, _ in values.last == ["Alien", "Heat"] }

        cancellable.cancel()
        try await received.wait { _, _ in commitObserverCount == baseline }
        try await insertFilm("Brazil")
        try await Task.sleep(for: .milliseconds(50))
        #expect(received.values.withLock { $0.last } == ["Alien", "Heat"])
        #expect(received.completion.withLock { $0 } == nil)  // cancelled, not completed
    }

    @Test func elementsWaitForDemand() async throws {
        let subscriber = OneAtATime<Int>()
        container.countPublisher(for: FetchRequest<Film>()).subscribe(subscriber)
        try await subscriber.received.wait { values, _ in values == [1] }
        try await insertFilm("Alien")
        try await insertFilm("Brazil")
        // The live query's latest count reaches the subscription, which keeps it: nothing more
        // was asked for. (Waiting for the kept element, not for a while, so that a slow
        // machine cannot make this pass or fail by chance.)
        let subscription = try #require(
            subscriber.subscription.withLock { $0 } as? SequenceSubscription<Int, any Error>)
        try await waitUntil { subscription.state.withLock { $0.buffer } == [3] }
        #expect(subscriber.received.values.withLock { $0 } == [1])
        subscriber.more()
        try await subscriber.received.wait { values, _ in values.count == 2 }
        #expect(subscriber.received.values.withLock { $0 } == [1, 3])  // the latest count, once
        subscriber.cancel()
    }

    @Test func anObjectPublisherFailsWhenTheObjectIsDeleted() async throws {
        let id = try #require(try container.newBackgroundContext().fetch(Film.self).first).typedObjectID
        let received = Received<String>()
        let cancellable = container.publisher(for: id)
            .sink(
                receiveCompletion: { completion in received.completion.withLock { $0 = "\(completion)" } },
                receiveValue: { film in received.values.withLock { $0.append(film.title) } })
        try await received.wait { values, _ in values == ["Heat"] }
        try await container.performBackgroundTask { context in
            context.delete(try context.existingObject(with: id))
            try context.save()
        }
        try await received.wait { _, completion in completion != nil }
        #expect(received.completion.withLock { $0 }?.contains("objectDeleted") == true)
        cancellable.cancel()
    }

    @Test func everySubscriberOfOnePublisherGetsEveryElement() async throws {
        let publisher = container.savedChangesPublisher
        let first = Received<Int>()
        let second = Received<Int>()
        let a = publisher.sink { changes in first.values.withLock { $0.append(changes.insertedObjectIDs.count) } }
        let b = publisher.sink { changes in second.values.withLock { $0.append(changes.insertedObjectIDs.count) } }
        try await waitUntil { container.savedChangeStreams.count == 2 }
        try await insertFilm("Alien")
        try await insertFilm("Brazil")
        try await first.wait { values, _ in values == [1, 1] }
        try await second.wait { values, _ in values == [1, 1] }

        a.cancel()  // the other subscription goes on
        try await insertFilm("Casablanca")
        try await second.wait { values, _ in values == [1, 1, 1] }
        #expect(first.values.withLock { $0 } == [1, 1])
        b.cancel()
        try await waitUntil { container.savedChangeStreams.count <= 1 }  // at most the publisher's own, unclaimed
    }

    @Test func notificationsAndControllerChangesArePublished() async throws {
        let context = container.newBackgroundContext()
        let baseline = context.observerCount
        let saves = Received<Int>()
        let contextCancellable = context.changesPublisher(for: [.didSave]).sink { changes in
            saves.values.withLock { $0.append(changes.insertedObjectIDs.count) }
        }
        let containerSaves = Received<Int>()
        let containerCancellable = container.savedChangesPublisher.sink { changes in
            containerSaves.values.withLock { $0.append(changes.insertedObjectIDs.count) }
        }
        let controller = FetchedResultsController(FetchRequest<Film>(sortDescriptors: [.ascending(\.title)]), context: context)
        try controller.performFetch()
        let batches = Received<[IndexPath]>()
        let controllerCancellable = controller.changesPublisher.sink { change in
            batches.values.withLock { $0.append(change.insertedIndexPaths) }
        }
        try await waitUntil { context.observerCount == baseline + 3 }  // one stream, two controller observers

        Film(context: context).title = "Alien"
        Film(context: context).title = "Zodiac"
        try context.save()
        try await saves.wait { values, _ in values == [2] }
        try await containerSaves.wait { values, _ in values == [2] }
        try await batches.wait { values, _ in values == [[IndexPath(item: 0, section: 0), IndexPath(item: 2, section: 0)]] }

        contextCancellable.cancel()
        containerCancellable.cancel()
        controllerCancellable.cancel()
        try await waitUntil { context.observerCount == baseline + 2 && controller.registrationCount == 2 }
    }
}
