#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import StrataTesting
import Testing

@testable import Strata
@testable import StrataCombine

/// A film stored by its title, as the Rx kit's `Persistable` values are.
struct FilmValue: PersistableValue, Sendable, Equatable {
    var title: String
    var year: Int16
    static var primaryAttributeName: String { "title" }
    var identity: String { title }
    init(title: String, year: Int16) {
        self.title = title
        self.year = year
    }
    init(entity: Film) {
        title = entity.title
        year = entity.year
    }
    func update(_ entity: Film) {
        entity.title = title
        entity.year = year
    }
}

@Suite(.timeLimit(.minutes(10))) struct EntitiesPublisherTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try PersistentContainer(
            name: "Films", entities: [Film.self],
            storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Films.sqlite"))])
        let context = container.newBackgroundContext()
        try context.upsert(FilmValue(title: "Heat", year: 1995))
        try context.save()
    }

    @Test func publishesTheValuesThenEachChangeUntilCancelled() async throws {
        let received = Received<[FilmValue]>()
        let cancellable = container.entitiesPublisher(FilmValue.self)
            .sink(
                receiveCompletion: { completion in received.completion.withLock { $0 = "\(completion)" } },
                receiveValue: { films in received.values.withLock { $0.append(films) } })
        try await received.wait { values, _ in values.map { $0.map(\.title) } == [["Heat"]] }

        try await container.performBackgroundTask { context in
            try context.upsert(FilmValue(title: "Alien", year: 1979))
            try context.save()
        }
        try await received.wait { values, _ in values.last?.map(\.title) == ["Alien", "Heat"] }

        cancellable.cancel()
        try await container.performBackgroundTask { context in
            try context.upsert(FilmValue(title: "Brazil", year: 1985))
            try context.save()
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(received.values.withLock { $0.last?.map(\.title) } == ["Alien", "Heat"])
        #expect(received.completion.withLock { $0 } == nil)
    }
}
