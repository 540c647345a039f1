import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Container behaviour beyond the store conformance suite: reopening files, closing,
/// concurrent background saves and the main actor's context.
@Suite struct ContainerTests {    @Test func aFileStoreKeepsObjectsAcrossContainers() throws {
        let directory = try TemporaryDirectory()
        let id: ObjectID
        do {
            let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
            let context = container.newBackgroundContext()
            let movie = Movie(context: context)
            movie.title = "Ronin"
            try context.save()
            id = movie.objectID
            try container.close()
        }
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        let movie = try #require(try context.existingObject(with: id) as? Movie)
        #expect(movie.title == "Ronin")
        let typed: Movie = try context.existingObject(with: TypedObjectID<Movie>(id))
        #expect(typed === movie)
        #expect(throws: StrataError.self) { try context.existingObject(with: TypedObjectID<Review>(id)) }
        #expect(container.objectID(forURIRepresentation: id.uriRepresentation) == id)
    }

    @Test func aClosedContainerRefusesToSave() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        _ = Movie(context: context)
        try container.close()
        #expect(throws: StrataError.self) { try context.save() }
        do { try context.save() } catch let error as StrataError { #expect(error.code == .storeClosed) }
    }

    @Test func backgroundTasksSaveConcurrently() async throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    try await container.performBackgroundTask(author: "worker \(worker)") { context in
                        for index in 0..<25 {
                            let movie = Movie(context: context)
                            movie.title = "Movie \(worker)-\(index)"
                            try context.save()
                        }
                        return try context.count(for: Movie.self)
                    }
                }
            }
            for try await count in group { #expect(count >= 25) }
        }
        let total = try await container.performBackgroundTask { try $0.count(for: Movie.self) }
        #expect(total == 100)
    }

    @Test @MainActor func theViewContextIsOneContextOnTheMainActor() throws {
        let container = try PersistentContainer(name: "View", entities: [Movie.self], storeDescriptions: [.inMemory])
        #expect(container.viewContext === container.viewContext)
        #expect(container.viewContext.name == "viewContext")
    }

}
