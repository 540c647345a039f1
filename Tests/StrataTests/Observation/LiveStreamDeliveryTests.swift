import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Live streams of a context never miss a save, however busy the machine: each of 1,000
/// background saves is awaited by the stream before the next one is made, while two threads
/// keep both cores busy — a save the stream missed would leave it waiting.
///
/// (The cause of the misses this guards against: a query's own inbox woke it before the
/// context's inbox had the save, so the query merged nothing and went back to waiting.)
@Suite(.serialized, .timeLimit(.minutes(10))) struct LiveStreamDeliveryTests {
    static let saves = 1_000

    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try PersistentContainer(
            name: "Logins", entities: [PersistLogin.self],
            storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Logins.sqlite"))])
    }

    /// The phone number of the `number`th save, ordered as the saves are.
    static func phone(_ number: Int) -> String { String(format: "%05d", number) }

    /// Saves login `number` in a background context.
    func save(_ number: Int) async throws {
        try await container.performBackgroundTask { context in
            try context.upsert(LoginData(phoneNumber: Self.phone(number), token: "t"))
            try context.save()
        }
    }

    /// The cause, pinned down: a save reaches every inbox before any of their owners wakes, so
    /// a query woken by its own inbox finds the save in its context's inbox, whichever of the
    /// two registered first.
    @Test func everyInboxHasASaveBeforeAnyOwnerWakes() {
        let inboxes = MergeInboxes()
        let contextsInbox = LockedBox<MergeInbox?>(nil)
        let seenOnWaking = LockedBox<[Int]>([])
        let queryInbox = MergeInbox(onArrival: {
            let waiting = contextsInbox.withLock { $0 }?.drain().count ?? -1
            seenOnWaking.withLock { $0.append(waiting) }
        })
        let observed = MergeInbox()
        contextsInbox.withLock { $0 = observed }
        inboxes.add(queryInbox)  // the query's inbox first, as a first live query registers
        inboxes.add(observed)
        inboxes.post(ContextChanges(name: .didSave, insertedObjectIDs: []), fromContext: nil)
        #expect(seenOnWaking.withLock { $0 } == [1])
        withExtendedLifetime((queryInbox, observed)) {}
    }

    @Test @MainActor func entitiesEmitsEveryBackgroundSaveInOrder() async throws {
        let burners = CPUBurners(count: 2)
        defer { burners.stop() }
        var logins = container.viewContext.entities(LoginData.self).makeAsyncIterator()
        #expect(try await logins.next(isolation: #isolation)?.isEmpty == true)
        for number in 1...Self.saves {
            try await save(number)
            let phones = try #require(try await logins.next(isolation: #isolation)).map(\.phoneNumber)
            try #require(phones == (1...number).map(Self.phone), "after save \(number): \(phones.suffix(3))")
        }
    }

    @Test @MainActor func sectionsEmitEveryBackgroundSave() async throws {
        let burners = CPUBurners(count: 2)
        defer { burners.stop() }
        let request = FetchRequest<PersistLogin>(sortDescriptors: [.ascending(\.phoneNumber)])
        var sections = container.viewContext.sections(fetchRequest: request, sectionNameKeyPath: "token")
            .makeAsyncIterator()
        #expect(try await sections.next(isolation: #isolation)?.isEmpty == true)
        for number in 1...Self.saves {
            try await save(number)
            let counts = try #require(try await sections.next(isolation: #isolation)).map(\.numberOfObjects)
            try #require(counts == [number], "after save \(number): \(counts)")
        }
    }

    /// A context that is not the view context, merging by itself: its merge inbox has no
    /// wake-up of its own, so only the query's must bring each save.
    @Test @MainActor func observeOnAnAutomaticallyMergingContextEmitsEveryBackgroundSave() async throws {
        let burners = CPUBurners(count: 2)
        defer { burners.stop() }
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        var logins = context.observe(FetchRequest<PersistLogin>(sortDescriptors: [.ascending(\.phoneNumber)]))
            .makeAsyncIterator()
        #expect(try await logins.next(isolation: #isolation)?.isEmpty == true)
        for number in 1...Self.saves {
            try await save(number)
            let phones = try #require(try await logins.next(isolation: #isolation)).map(\.phoneNumber)
            try #require(phones == (1...number).map(Self.phone), "after save \(number): \(phones.suffix(3))")
        }
    }

    /// The same for the entities stream of such a context: its controller follows merges.
    @Test @MainActor func entitiesOnAnAutomaticallyMergingContextEmitsEveryUpdate() async throws {
        let burners = CPUBurners(count: 2)
        defer { burners.stop() }
        try await save(0)
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromContainer = true
        var logins = context.entities(LoginData.self).makeAsyncIterator()
        #expect(try await logins.next(isolation: #isolation)?.map(\.token) == ["t"])
        for number in 1...Self.saves {
            // Updates of an object the context holds: only a merge shows them.
            try await container.performBackgroundTask { other in
                try other.upsert(LoginData(phoneNumber: Self.phone(0), token: "\(number)"))
                try other.save()
            }
            let tokens = try #require(try await logins.next(isolation: #isolation)).map(\.token)
            try #require(tokens == ["\(number)"], "after save \(number): \(tokens)")
        }
    }
}
