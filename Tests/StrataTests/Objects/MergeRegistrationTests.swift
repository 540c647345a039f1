import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Merging another context's save registers the objects it inserted, as Core Data's
/// `mergeChanges(fromContextDidSave:)` does, and `retainsRegisteredObjects` keeps registered
/// objects alive.
@Suite(.timeLimit(.minutes(10))) struct MergeRegistrationTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
    }

    /// Saves new movies in a context of their own; the save's changes and the movies' IDs.
    func saveMovies(_ titles: [String]) throws -> (ContextChanges, [ObjectID]) {
        let writer = container.newBackgroundContext()
        var saved: ContextChanges?
        let observation = writer.addObserver(for: .didSave) { saved = $0.changes }
        defer { observation.cancel() }
        let movies = titles.map { title in
            let movie = Movie(context: writer)
            movie.title = title
            return movie
        }
        try writer.save()
        return (try #require(saved), movies.map(\.objectID))
    }

    @Test func anExplicitMergeRegistersTheInsertedObjectsAsFaults() throws {
        let reader = container.newBackgroundContext()
        let (changes, ids) = try saveMovies(["Heat", "Ronin"])
        #expect(ids.allSatisfy { reader.registeredObject(for: $0) == nil })
        reader.mergeChanges(from: changes)
        let heat = try #require(reader.registeredObject(for: ids[0]) as? Movie)
        #expect(heat.isFault)
        #expect(heat.title == "Heat")  // loads when read
        #expect(reader.registeredObject(for: ids[1]) != nil)
        #expect(!reader.hasChanges)
        // The same object a fetch finds, not a second one.
        #expect(try reader.fetch(Movie.self, where: \.title == "Heat").first === heat)
    }

    @Test func theContextLetsGoOfMergedObjectsNobodyHoldsAtItsNextProcessing() throws {
        let reader = container.newBackgroundContext()
        let (changes, ids) = try saveMovies(["Heat"])
        reader.mergeChanges(from: changes)
        #expect(reader.registeredObject(for: ids[0]) != nil)
        reader.processPendingChanges()
        #expect(reader.registeredObject(for: ids[0]) == nil)
    }

    @Test func automaticMergingRegistersTheInsertedObjects() throws {
        let reader = container.newBackgroundContext()
        reader.automaticallyMergesChangesFromContainer = true
        let (_, ids) = try saveMovies(["Heat", "Ronin"])
        reader.processPendingChanges()  // where automatic merges happen
        #expect(ids.allSatisfy { reader.registeredObject(for: $0) != nil })
    }

    @Test @MainActor func theViewContextRegistersMergedObjectsUntilTheEndOfTheTurn() async throws {
        let viewContext = container.viewContext
        viewContext.automaticallyMergesChangesFromContainer = true
        let (_, ids) = try saveMovies(["Heat"])
        viewContext.processPendingChanges()
        #expect(viewContext.registeredObject(for: ids[0]) != nil)
        // At the end of the main actor's turn (Core Data: of the run loop's) it lets go.
        var turns = 0
        while viewContext.registeredObject(for: ids[0]) != nil, turns < 10_000 {
            await Task.yield()
            turns += 1
        }
        #expect(viewContext.registeredObject(for: ids[0]) == nil)
    }

    @Test func retainsRegisteredObjectsKeepsEveryRegisteredObjectAlive() throws {
        let (_, ids) = try saveMovies(["Heat", "Ronin", "Thief"])
        let context = container.newBackgroundContext()
        #expect(!context.retainsRegisteredObjects)
        _ = try context.fetch(Movie.self)
        #expect(ids.allSatisfy { context.registeredObject(for: $0) == nil })  // nobody held them

        context.retainsRegisteredObjects = true
        _ = try context.fetch(Movie.self)
        _ = try context.existingObject(with: ids[0])
        let addedID = try { () throws -> ObjectID in
            let added = Movie(context: context)
            added.title = "Alien"
            try context.save()
            return added.objectID
        }()
        #expect((ids + [addedID]).allSatisfy { context.registeredObject(for: $0) != nil })

        // Turning it on retains what is registered now; turning it off lets go of everything.
        context.retainsRegisteredObjects = false
        #expect((ids + [addedID]).allSatisfy { context.registeredObject(for: $0) == nil })
        let held = try context.fetch(Movie.self)
        context.retainsRegisteredObjects = true
        withExtendedLifetime(held) {}
        #expect((ids + [addedID]).allSatisfy { context.registeredObject(for: $0) != nil })
        context.reset()
        #expect(ids.allSatisfy { context.registeredObject(for: $0) == nil })
        #expect(context.retainsRegisteredObjects)  // a reset keeps the setting
    }

    @Test func aRetainingContextKeepsTheObjectsItsMergesRegistered() throws {
        let reader = container.newBackgroundContext()
        reader.retainsRegisteredObjects = true
        let (changes, ids) = try saveMovies(["Heat"])
        reader.mergeChanges(from: changes)
        reader.processPendingChanges()
        #expect(reader.registeredObject(for: ids[0]) != nil)
    }
}
