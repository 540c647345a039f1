import Foundation
import StrataTesting
import Testing

@testable import Strata

/// An entity name the schema does not have is ``StrataError/Code/unknownEntity`` everywhere a
/// name can come in, with the closest name the schema has.
@Suite struct UnknownEntityTests {
    let library: MovieLibrary

    init() throws {
        library = try MovieLibrary(movies: [("Heat", 1995)])
    }

    static func expectUnknownEntity(_ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected an unknownEntity error")
        } catch let error as StrataError {
            #expect(error.code == .unknownEntity)
            #expect(error.entityName == "Moive")
            #expect(error.message.contains("no entity named 'Moive'"))
            #expect(error.message.contains("Did you mean 'Movie'?"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func fetchingByEntityName() {
        let context = library.container.newBackgroundContext()
        Self.expectUnknownEntity { _ = try context.fetch(entityName: "Moive") }
    }

    @Test func countingByEntityName() {
        let context = library.container.newBackgroundContext()
        Self.expectUnknownEntity { _ = try context.count(entityName: "Moive") }
    }

    @Test func aFetchRequestForAnUnknownEntity() {
        let context = library.container.newBackgroundContext()
        let request = FetchRequest<ManagedObject>(entityName: "Moive")
        Self.expectUnknownEntity { _ = try context.fetch(request) }
        Self.expectUnknownEntity { _ = try context.count(for: request) }
    }

    @MainActor @Test func aControllerForAnUnknownEntity() {
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Moive"), context: library.container.viewContext)
        Self.expectUnknownEntity { try controller.performFetch() }
    }
}

extension UnknownEntityTests {
    @Test func aStoreAskedForAnUnknownEntity() throws {
        let store = try #require(library.container.stores.first)
        do {
            _ = try store.fetch(StoreFetchRequest(entityName: "Moive"))
            Issue.record("expected an unknownEntity error")
        } catch let error as StrataError {
            #expect(error.code == .unknownEntity)
            #expect(error.message.contains("Did you mean 'Movie'?"))
        }
    }
}
