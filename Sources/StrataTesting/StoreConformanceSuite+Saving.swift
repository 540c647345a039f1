import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review
private typealias Person = ConformanceModel.Person
private typealias Car = ConformanceModel.Car
private typealias Bike = ConformanceModel.Bike
private typealias Location = ConformanceModel.Location

/// The checks of saving and fetching: relationships and delete rules, all-or-nothing saves,
/// optimistic locking, rollback, faults, inheritance and uniqueness constraints.
extension StoreConformanceSuite {
    func savedObjectsComeBackWithTheirRelationships() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.year = 1995
        movie.boxOffice = Decimal(string: "187436818.25")!
        movie.tags = ["crime"]
        movie.location = Location(latitude: 34.05, longitude: -118.24)
        let director = Person(context: context)
        director.name = "Michael Mann"
        movie.director = director
        let actors = (0..<3).map { index -> Person in
            let person = Person(context: context)
            person.name = "Actor \(index)"
            return person
        }
        movie.cast = [actors[2], actors[0], actors[1]]
        for stars in [5, 4] as [Int32] {
            let review = Review(context: context)
            review.stars = stars
            review.movie = movie
        }
        #expect(movie.objectID.isTemporaryID)
        try context.save()
        #expect(!movie.objectID.isTemporaryID)
        #expect(!context.hasChanges)
        #expect(!movie.isInserted)

        let other = container.newBackgroundContext()
        let movies = try other.fetch(Movie.self)
        #expect(movies.count == 1)
        let loaded = try #require(movies.first)
        #expect(loaded !== movie)
        #expect(loaded.objectID == movie.objectID)
        #expect(loaded.title == "Heat")
        #expect(loaded.year == 1995)
        #expect(loaded.boxOffice == Decimal(string: "187436818.25")!)
        #expect(loaded.tags == ["crime"])
        #expect(loaded.location == Location(latitude: 34.05, longitude: -118.24))
        #expect(loaded.id == movie.id)
        #expect(loaded.director?.name == "Michael Mann")
        #expect(loaded.cast.map(\.name) == ["Actor 2", "Actor 0", "Actor 1"])
        #expect(Set(loaded.reviews.map(\.stars)) == [5, 4])
        #expect(loaded.director?.directed == [loaded])
        // One instance per object ID.
        #expect(try other.fetch(Movie.self).first === loaded)
        #expect(try other.count(for: Person.self) == 4)
    }

    func updatesAndDeletesAreSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        try context.save()

        movie.title = "Heat (1995)"
        #expect(movie.isUpdated)
        #expect(context.updatedObjects == [movie])
        try context.save()
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat (1995)"])

        // Movie.reviews cascades.
        context.delete(movie)
        #expect(review.isDeleted)
        try context.save()
        let fresh = container.newBackgroundContext()
        #expect(try fresh.count(for: Movie.self) == 0)
        #expect(try fresh.count(for: Review.self) == 0)
        #expect(throws: StrataError.self) { try fresh.existingObject(with: movie.objectID) }
    }

    func clearingAToOneRelationshipIsSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let director = Person(context: context)
        director.name = "Mann"
        movie.director = director
        try context.save()

        movie.director = nil
        #expect(director.directed.isEmpty)
        try context.save()
        let fresh = container.newBackgroundContext()
        let saved = try #require(try fresh.fetch(Movie.self).first)
        #expect(saved.director == nil)
        #expect(try #require(try fresh.fetch(Person.self).first).directed.isEmpty)
    }

    func nullifyRemovesTheDeletedObjectFromTheOtherSide() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        try context.save()
        context.delete(review)
        #expect(movie.reviews.isEmpty)
        try context.save()
        let loaded = try #require(try container.newBackgroundContext().fetch(Movie.self).first)
        #expect(loaded.reviews.isEmpty)
    }

    func aFailedValidationSavesNothing() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let good = Movie(context: context)
        good.title = "Heat"
        let bad = Movie(context: context)
        bad.title = ""
        bad.year = 1200
        do {
            try context.save()
            Issue.record("an invalid movie was saved")
        } catch let error as StrataError {
            #expect(error.code == .validationFailed)
            #expect(Set(error.details.map(\.code)) == [.valueTooSmall])
            #expect(error.details.count == 2)
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 0)
        #expect(good.objectID.isTemporaryID)
        bad.title = "Fixed"
        bad.year = 1999
        try context.save()
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 2)
    }

    func aStaleSaveIsAConflictAndSavesNothing() throws {
        let container = try makeContainer()
        let first = container.newBackgroundContext()
        let movie = Movie(context: first)
        movie.title = "Heat"
        try first.save()
        let second = container.newBackgroundContext()
        let copy = try #require(try second.existingObject(with: movie.objectID) as? Movie)
        copy.title = "Changed elsewhere"
        try second.save()
        movie.title = "Changed here"
        movie.rating = 9
        do {
            try first.save()
            Issue.record("a stale change overwrote a newer one")
        } catch let error as StrataError {
            #expect(error.code == .optimisticLockingFailure)
            #expect(error.objectID == movie.objectID)
        }
        #expect(movie.title == "Changed here")
        first.refresh(movie, mergeChanges: true)
        try first.save()
        let stored = try #require(try container.newBackgroundContext().fetch(Movie.self).first)
        #expect(stored.title == "Changed here")
        #expect(stored.rating == 9)
    }

    func rollbackAndResetForgetUnsavedWork() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        movie.title = "Changed"
        let extra = Movie(context: context)
        context.rollback()
        #expect(movie.title == "Heat")
        #expect(extra.context == nil)
        #expect(!context.hasChanges)
        #expect(try context.fetch(Movie.self) == [movie])
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        let again = try #require(try context.fetch(Movie.self).first)
        #expect(again !== movie)
        #expect(again.title == "Heat")
    }

    func faultsLoadOnFirstAccess() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        let other = container.newBackgroundContext()
        let fault = try #require(try other.object(with: movie.objectID) as? Movie)
        #expect(fault.isFault)
        #expect(fault.title == "Heat")
        #expect(!fault.isFault)
        context.delete(movie)
        try context.save()
        let third = container.newBackgroundContext()
        let gone = try #require(try third.object(with: movie.objectID) as? Movie)
        #expect(gone.title == "")
        #expect(gone.faultingError?.code == .objectNotFound)
    }

    func subentitiesShareTheirParentsTable() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let car = Car(context: context)
        car.maker = "Volvo"
        car.seats = 7
        let bike = Bike(context: context)
        bike.isElectric = true
        try context.save()
        let other = container.newBackgroundContext()
        let vehicles = try other.fetch(entityName: "Vehicle")
        #expect(vehicles.count == 2)
        #expect(try other.fetch(Car.self).map(\.seats) == [7])
        #expect(try other.fetch(Bike.self).map(\.isElectric) == [true])
        #expect(try other.count(entityName: "Vehicle") == 2)
    }

    func uniquenessConflictsAreTypedAndSaveNothing() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let first = Movie(context: context)
        first.title = "Heat"
        let second = Movie(context: context)
        second.title = "Other"
        second.id = first.id
        do {
            try context.save()
            Issue.record("two movies with one id were saved")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
        }
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 0)
    }

    func relatingObjectsOfTwoContextsIsATypedErrorAtSave() throws {
        let container = try makeContainer()
        let first = container.newBackgroundContext()
        let movie = Movie(context: first)
        movie.title = "Heat"
        try first.save()
        let second = container.newBackgroundContext()
        let review = Review(context: second)
        review.movie = movie
        do {
            try second.save()
            Issue.record("a relationship across contexts was saved")
        } catch let error as StrataError {
            #expect(error.code == .validationFailed)
            #expect(error.details.map(\.code) == [.wrongContext])
        }
        #expect(try container.newBackgroundContext().count(for: Review.self) == 0)
    }

    func aDeletedObjectCannotBeUsedAfterTheDeletionIsSaved() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        context.delete(movie)
        try context.save()
        #expect(movie.context == nil)
        do {
            try movie.setValue("Ronin", forKey: "title")
            Issue.record("a deleted object was changed")
        } catch let error as StrataError {
            #expect(error.code == .objectDeleted)
        }
        #expect(throws: StrataError.self) { try movie.value(forKey: "title") }
        let review = Review(context: context)
        review.movie = movie
        do {
            try context.save()
            Issue.record("a relationship to a deleted object was saved")
        } catch let error as StrataError {
            #expect(error.details.map(\.code) == [.objectDeleted])
        }
    }
}
