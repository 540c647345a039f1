import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie

/// The merge-policy checks: duplicate inserts and concurrent edits under each policy.
extension StoreConformanceSuite {
    /// A container holding one saved movie (title "Heat", rating 7) and the movie's unique id.
    fileprivate func containerWithMovie() throws -> (PersistentContainer, UUID, ObjectID) {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.rating = 7
        try context.save()
        return (container, movie.id, movie.objectID)
    }

    fileprivate func storedMovies(_ container: PersistentContainer) throws -> [(title: String, rating: Double)] {
        try container.newBackgroundContext().fetch(Movie.self).map { ($0.title, $0.rating) }
    }

    func theErrorPolicyReportsDuplicatesWithTheirValues() throws {
        let (container, id, savedID) = try containerWithMovie()
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
        #expect(try storedMovies(container).map(\.title) == ["Heat"])
    }

    /// Saves a new movie whose unique id is `id`'s, with `policy`; returns the new movie.
    fileprivate func saveDuplicate(
        of id: UUID, titled title: String, in container: PersistentContainer, policy: MergePolicy
    )
        throws -> Movie
    {
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        let duplicate = Movie(context: context)
        duplicate.id = id
        duplicate.title = title
        try context.save()
        return duplicate
    }

    func objectTrumpTurnsADuplicateInsertIntoAnUpdate() throws {
        let (container, id, savedID) = try containerWithMovie()
        let upsert = try saveDuplicate(
            of: id, titled: "Heat (Director's Cut)", in: container, policy: .mergeByPropertyObjectTrump)
        #expect(upsert.objectID == savedID)
        // The save made what it wrote the object's committed state, as for any update.
        #expect(!upsert.hasChanges)
        #expect(upsert.changedValues().isEmpty)
        #expect(upsert.context?.hasChanges == false)
        let stored = try storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Heat (Director's Cut)")
        #expect(stored.first?.rating == 7)  // not set on the new object: the stored value stays
    }

    func storeWinningPoliciesKeepTheSavedObject(policy: MergePolicy) throws {
        let (container, id, savedID) = try containerWithMovie()
        let duplicate = try saveDuplicate(of: id, titled: "Ignored", in: container, policy: policy)
        #expect(duplicate.objectID == savedID)
        #expect(duplicate.title == "Heat")
        #expect(try storedMovies(container).map(\.title) == ["Heat"])
    }

    func overwriteReplacesTheSavedValues() throws {
        let (container, id, _) = try containerWithMovie()
        _ = try saveDuplicate(of: id, titled: "Replacement", in: container, policy: .overwrite)
        let stored = try storedMovies(container)
        #expect(stored.count == 1)
        #expect(stored.first?.title == "Replacement")
        #expect(stored.first?.rating == 0)
    }

    func duplicatesWithinOneSaveCollapseToOne() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let id = UUID()
        for title in ["First", "Second", "Third"] {
            let movie = Movie(context: context)
            movie.id = id
            movie.title = title
        }
        try context.save()
        #expect(try storedMovies(container).map(\.title) == ["Third"])
    }

    /// Context A loaded the movie; context B then changed its title and saved; A changes the rating
    /// (and, when `alsoTitle`, the title) and saves with `policy`.
    fileprivate func concurrentEdit(_ policy: MergePolicy, alsoTitle: Bool) throws -> (title: String, rating: Double) {
        let (container, _, savedID) = try containerWithMovie()
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

    func objectTrumpKeepsBothSidesChangesAndPrefersMine() throws {
        #expect(try concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: false) == ("Title from B", 9))
        #expect(try concurrentEdit(.mergeByPropertyObjectTrump, alsoTitle: true) == ("Title from A", 9))
    }

    func storeTrumpKeepsBothSidesChangesAndPrefersTheStore() throws {
        #expect(try concurrentEdit(.mergeByPropertyStoreTrump, alsoTitle: true) == ("Title from B", 9))
    }

    func overwriteWritesMyWholeObject() throws {
        #expect(try concurrentEdit(.overwrite, alsoTitle: false) == ("Heat", 9))
    }

    func rollbackDropsMyChanges() throws {
        #expect(try concurrentEdit(.rollback, alsoTitle: true) == ("Title from B", 7))
    }

    func theErrorPolicyRefusesAStaleSave() throws {
        #expect(throws: StrataError.self) { try concurrentEdit(.error, alsoTitle: false) }
    }
}
