import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review
private typealias Person = ConformanceModel.Person
private typealias Keyword = ConformanceModel.Keyword

/// Checks of edge cases: keys and unique values freed by deletions, unloaded faults, detached
/// objects, ordered many-to-many inverses, join rows, upserts and a rolled-back conflicting delete.
extension StoreConformanceSuite {
    func keysOfDeletedObjectsAreNeverReused() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let first = Movie(context: context)
        first.title = "First"
        let last = Movie(context: context)
        last.title = "Last"
        try context.save()
        let oldID = last.objectID
        context.delete(last)
        try context.save()
        let next = Movie(context: context)
        next.title = "Next"
        try context.save()
        #expect(next.objectID != oldID)
        let reader = container.newBackgroundContext()
        #expect(throws: StrataError.self) { try reader.existingObject(with: oldID) }
    }

    func aSaveCanFreeAUniqueValueAndReuseIt() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let old = Movie(context: context)
        old.title = "Old"
        try context.save()
        let id = old.id
        context.delete(old)
        let replacement = Movie(context: context)
        replacement.title = "Replacement"
        replacement.id = id
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Replacement"])
    }

    func deletingAnUnloadedFaultWorks() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let person = Person(context: context)
        person.name = "Someone"
        try context.save()
        let other = container.newBackgroundContext()
        let fault = try other.object(with: person.objectID)
        other.delete(fault)
        try other.save()
        #expect(try container.newBackgroundContext().count(for: Person.self) == 0)
    }

    func missingUniqueValuesNeverConflict() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let alice = Person(context: context)
        alice.name = "Alice"
        try context.save()
        for name in ["Bob", "Carol"] {
            let person = Person(context: context)
            person.name = name
        }
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Person.self).map(\.name).sorted() == ["Alice", "Bob", "Carol"])
    }

    func detachedObjectsAreNotSavedTwice() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        context.reset()
        let review = Review(context: context)
        review.movie = movie
        do {
            try context.save()
            Issue.record("a relationship to a detached object was saved")
        } catch let error as StrataError {
            #expect(error.details.map(\.code) == [.wrongContext])
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 1)
    }

    func theInverseSideOfAManyToManyKeepsItsOrder() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movies = ["One", "Two", "Three"].map { title -> Movie in
            let movie = Movie(context: context)
            movie.title = title
            return movie
        }
        let fan = Person(context: context)
        fan.name = "Fan"
        fan.favorites = [movies[2], movies[0], movies[1]]
        try context.save()
        let reader = container.newBackgroundContext()
        let loaded = try #require(try reader.fetch(Person.self).first)
        #expect(loaded.favorites.map(\.title) == ["Three", "One", "Two"])
        #expect(loaded.favorites.first?.fans == [loaded])
        fan.favorites = [movies[1], movies[2], movies[0]]
        try context.save()
        let again = container.newBackgroundContext()
        #expect(try again.fetch(Person.self).first?.favorites.map(\.title) == ["Two", "Three", "One"])
    }

    func joinRowsGoAwayWithTheirTarget() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let keyword = Keyword(context: context)
        keyword.word = "heist"
        movie.keywords = [keyword]
        try context.save()
        #expect(try container.newBackgroundContext().fetch(Movie.self).first?.keywords.map(\.word) == ["heist"])
        context.delete(keyword)
        try context.save()
        let unrelated = Keyword(context: context)
        unrelated.word = "unrelated"
        try context.save()
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).first?.keywords.isEmpty == true)
    }

    func upsertUpdatesTheInstanceTheContextHolds() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let saved = Movie(context: context)
        saved.title = "Heat"
        saved.rating = 7
        try context.save()
        let upsert = Movie(context: context)
        upsert.id = saved.id
        upsert.title = "Heat (Director's Cut)"
        let review = Review(context: context)
        review.movie = upsert
        try context.save()
        #expect(saved.title == "Heat (Director's Cut)")
        #expect(saved.rating == 7)
        #expect(saved.reviews == [review])
        #expect(review.movie === saved)
        #expect(upsert.context == nil)
        #expect(!context.hasChanges)
        let reader = container.newBackgroundContext()
        let movies = try reader.fetch(Movie.self)
        #expect(movies.map(\.title) == ["Heat (Director's Cut)"])
        #expect(movies.first?.reviews.count == 1)
    }

    func rollbackOfAConflictingDeleteRevivesItsCascade() throws {
        let container = try makeContainer()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .rollback
        let movie = Movie(context: mine)
        movie.title = "Heat"
        let review = Review(context: mine)
        review.movie = movie
        try mine.save()
        let theirs = container.newBackgroundContext()
        let copy = try #require(try theirs.existingObject(with: movie.objectID) as? Movie)
        copy.title = "Changed elsewhere"
        try theirs.save()
        mine.delete(movie)
        #expect(review.isDeleted)
        try mine.save()
        #expect(!movie.isDeleted)
        #expect(!review.isDeleted)
        #expect(movie.reviews == [review])
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(Movie.self).map(\.title) == ["Changed elsewhere"])
        #expect(try reader.count(for: Review.self) == 1)
    }
}
