import Foundation
import Testing

@testable import Strata

@Suite struct MergePolicyTests {
    /// A container holding one saved movie (title "Heat", rating 7) and the movie's unique id.
    static func containerWithMovie(_ kind: StoreKind, in directory: TemporaryDirectory) throws -> (PersistentContainer, UUID, ObjectID) {
        let container = try kind.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.rating = 7
        try context.save()
        return (container, movie.id, movie.objectID)
    }

    static func storedMovies(_ container: PersistentContainer) throws -> [(title: String, rating: Double)] {
        try container.newBackgroundContext().fetch(Movie.self).map { ($0.title, $0.rating) }
    }

    @Test(arguments: StoreKind.allCases) func theErrorPolicyReportsDuplicatesWithTheirValues(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let (container, id, savedID) = try Self.containerWithMovie(kind, in: directory)
        let context = container.newBackgroundContext()
        let duplicate = Movie(context: context)
        duplicate.id = id
        duplicate.title = "Heat again"
        do {
            try context.save()
            Issue.record("a duplicate id was saved")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
            let detail = try #require(error.details.first)
            #expect(detail.entityName == "Movie")
            #expect(detail.propertyName == "id")
            #expect(detail.message.contains(id.uuidString))
            #expect(detail.message.contains(savedID.description))
            #expect(detail.objectID == duplicate.objectID)
        }
        #expect(try Self.storedMovies(container).map(\.title) == ["Heat"])
    }

    @Test(arguments: StoreKind.allCases) func objectTrumpTurnsADuplicateInsertIntoAnUpdate(kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let (container, id, savedID) = try Self.containerWithMovie(kind, in: directory)
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let upsert = Movie(context: context)
        upsert.id = id
        upsert.title = "Heat (Director's Cut)"
        try context.save()
        #expect(upsert.objectID == savedID)
        let stored = try Self.storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Heat (Director's Cut)")
        #expect(stored.first?.rating == 7)  // not set on the new object: the stored value stays
    }

    @Test(arguments: [MergePolicy.mergeByPropertyStoreTrump, .rollback])
    func storeWinningPoliciesKeepTheSavedObject(policy: MergePolicy) throws {
        let directory = try TemporaryDirectory()
        let (container, id, savedID) = try Self.containerWithMovie(.inMemory, in: directory)
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        let duplicate = Movie(context: context)
        duplicate.id = id
        duplicate.title = "Ignored"
        try context.save()
        #expect(duplicate.objectID == savedID)
        #expect(duplicate.title == "Heat")
        #expect(try Self.storedMovies(container).map(\.title) == ["Heat"])
    }

    @Test func overwriteReplacesTheSavedValues() throws {
        let directory = try TemporaryDirectory()
        let (container, id, _) = try Self.containerWithMovie(.inMemory, in: directory)
        let context = container.newBackgroundContext()
        context.mergePolicy = .overwrite
        let replacement = Movie(context: context)
        replacement.id = id
        replacement.title = "Replacement"
        try context.save()
        let stored = try Self.storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Replacement")
        #expect(stored.first?.rating == 0)
    }

    @Test func duplicatesWithinOneSaveCollapseToOne() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.inMemory.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let id = UUID()
        for title in ["First", "Second", "Third"] {
            let movie = Movie(context: context)
            movie.id = id
            movie.title = title
        }
        try context.save()
        #expect(try Self.storedMovies(container).map(\.title) == ["Third"])
    }

    /// Context A loaded the movie; context B then changed its title and saved; A changes the rating
    /// (and, when `alsoTitle`, the title) and saves with `policy`.
    static func concurrentEdit(_ policy: MergePolicy, alsoTitle: Bool) throws -> (title: String, rating: Double) {
        let directory = try TemporaryDirectory()
        let (container, _, savedID) = try containerWithMovie(.inMemory, in: directory)
        let a = container.newBackgroundContext()
        a.mergePolicy = policy
        let mine = try #require(try a.existingObject(with: savedID) as? Movie)
        let b = container.newBackgroundContext()
        let theirs = try #require(try b.existingObject(with: savedID) as? Movie)
        theirs.title = "Title from B"
        try b.save()
        mine.rating = 9
        if alsoTitle { mine.title = "Title from A" }
        try a.save()
        return try #require(try storedMovies(container).first)
    }

    @Test func objectTrumpKeepsBothSidesChangesAndPrefersMine() throws {
        #expect(try Self.concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: false) == ("Title from B", 9))
        #expect(try Self.concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: true) == ("Title from A", 9))
    }

    @Test func storeTrumpKeepsBothSidesChangesAndPrefersTheStore() throws {
        #expect(try Self.concurrentEdit(.mergeByPropertyStoreTrump, alsoTitle: true) == ("Title from B", 9))
    }

    @Test func overwriteWritesMyWholeObject() throws {
        #expect(try Self.concurrentEdit(.overwrite, alsoTitle: false) == ("Heat", 9))
    }

    @Test func rollbackDropsMyChanges() throws {
        #expect(try Self.concurrentEdit(.rollback, alsoTitle: true) == ("Title from B", 7))
    }

    @Test func theErrorPolicyRefusesAStaleSave() throws {
        #expect(throws: StrataError.self) { try Self.concurrentEdit(.error, alsoTitle: false) }
    }
}
