import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review

/// The child-context checks: saves that push into the parent, and what the parent sees.
extension StoreConformanceSuite {
    func aChildSavePushesIntoTheParentNotTheStore() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()

        let child = ObjectContext(parent: parent)
        let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
        #expect(draft !== movie)
        draft.title = "Heat (1995)"
        let review = Review(context: child)
        review.stars = 5
        review.movie = draft
        try child.save()
        #expect(!child.hasChanges)

        #expect(parent.hasChanges)
        #expect(movie.title == "Heat (1995)")
        #expect(movie.reviews.map(\.stars) == [5])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])

        try parent.save()
        let reader = container.newBackgroundContext()
        let stored = try #require(try reader.fetch(Movie.self).first)
        #expect(stored.title == "Heat (1995)")
        #expect(stored.reviews.map(\.stars) == [5])
    }

    func aChildSeesItsParentsUnsavedChanges() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let saved = Movie(context: parent)
        saved.title = "Saved"
        try parent.save()
        saved.title = "Saved, then edited"
        let unsaved = Movie(context: parent)
        unsaved.title = "Unsaved"

        let child = ObjectContext(parent: parent)
        let titles = try child.fetch(Movie.self).map(\.title)
        #expect(titles == ["Saved, then edited", "Unsaved"])
        #expect(try child.count(for: Movie.self) == 2)
        let copy = try #require(try child.existingObject(with: unsaved.objectID) as? Movie)
        #expect(copy.title == "Unsaved")
    }

    func discardingAChildLeavesTheParentUntouched() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()
        do {
            let child = ObjectContext(parent: parent)
            let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
            draft.title = "Scratch"
            _ = Movie(context: child)
        }
        #expect(!parent.hasChanges)
        #expect(movie.title == "Heat")
    }

    func deletionsInAChildReachTheParentWithTheirRules() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        let review = Review(context: parent)
        review.movie = movie
        try parent.save()
        let child = ObjectContext(parent: parent)
        child.delete(try child.existingObject(with: movie.objectID))
        try child.save()
        #expect(movie.isDeleted)
        #expect(review.isDeleted)
        try parent.save()
        #expect(try container.newBackgroundContext().count(for: Review.self) == 0)
    }

    func aChildValidatesBeforePushing() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        let movie = Movie(context: child)
        movie.title = ""
        #expect(throws: StrataError.self) { try child.save() }
        #expect(!parent.hasChanges)
    }

    func aFailedChildSaveLeavesTheParentUntouched() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let movie = Movie(context: parent)
        movie.title = "Heat"
        try parent.save()
        let child = ObjectContext(parent: parent)
        let draft = try #require(try child.existingObject(with: movie.objectID) as? Movie)
        draft.title = "Edited in the child"
        let review = Review(context: child)
        review.movie = draft
        parent.delete(movie)
        #expect(throws: StrataError.self) { try child.save() }
        #expect(parent.insertedObjects.isEmpty)
        #expect(parent.deletedObjects == [movie])
    }

    func childObjectsGetPermanentIDsWhenTheParentSaves() throws {
        let container = try makeContainer()
        let parent = container.newBackgroundContext()
        let child = ObjectContext(parent: parent)
        let movie = Movie(context: child)
        movie.title = "Heat"
        try child.save()
        try parent.save()
        #expect(!movie.objectID.isTemporaryID)
        #expect(try child.fetch(Movie.self).first === movie)
        movie.title = "Heat (1995)"
        try child.save()
        try parent.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Heat (1995)"])
    }
}
