import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The data-stack kit's context helpers: `saveIfNeeded()`, `existing(_:withID:)`,
/// `existing(_:withIDs:)` and `deleteIfPresent(_:)`.
@Suite struct ContextHelpersTests {
    let container: PersistentContainer

    init() throws {
        container = try PersistentContainer(name: "Helpers", entities: [Movie.self, Review.self], storeDescriptions: [.inMemory])
    }

    @Test func saveIfNeededSavesOnlyWhenSomethingChanged() throws {
        let context = container.newBackgroundContext()
        #expect(try context.saveIfNeeded() == false)
        let movie = Movie(context: context)
        movie.title = "Heat"
        #expect(try context.saveIfNeeded() == true)
        movie.title = "Heat"  // equal: not a change
        #expect(try context.saveIfNeeded() == false)
        movie.title = "Thief"
        #expect(try context.saveIfNeeded() == true)
        #expect(try container.newBackgroundContext().fetch(FetchRequest<Movie>()).map(\.title) == ["Thief"])
    }

    @Test func existingObjectsByIDAreTypedAndAMismatchNamesTheEntityFound() throws {
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        try context.save()

        let other = container.newBackgroundContext()
        #expect(try other.existing(Movie.self, withID: movie.objectID).title == "Heat")
        let mismatch = #expect(throws: StrataError.self) { try other.existing(Movie.self, withID: review.objectID) }
        #expect(mismatch?.code == .typeMismatch)
        #expect(mismatch?.entityName == "Review")
        #expect(mismatch?.message.contains("is a Review, not a Movie") == true)
        #expect(throws: StrataError.self) { try other.existing(Movie.self, withIDs: [movie.objectID, review.objectID]) }

        // Deleted or unknown IDs are skipped by the plural form, and an error for the singular.
        let gone = Movie(context: context)
        gone.title = "Gone"
        try context.save()
        let goneID = gone.objectID
        context.delete(gone)
        try context.save()
        #expect(try other.existing(Movie.self, withIDs: [goneID, movie.objectID]).map(\.title) == ["Heat"])
        let missing = #expect(throws: StrataError.self) { try other.existing(Movie.self, withID: goneID) }
        #expect(missing?.code == .objectNotFound)
    }

    @Test func deleteIfPresentDeletesWhatIsStillThere() throws {
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        #expect(context.deleteIfPresent(nil) == false)

        // An object of another context: its counterpart here is deleted.
        let other = container.newBackgroundContext()
        let counterpart = try other.existing(Movie.self, withID: movie.objectID)
        #expect(context.deleteIfPresent(counterpart) == true)
        #expect(context.deleteIfPresent(movie) == false)  // already deleted here
        try context.save()
        #expect(try container.newBackgroundContext().count(for: FetchRequest<Movie>()) == 0)
        // Gone from the store: nothing to delete through another context's copy.
        let third = container.newBackgroundContext()
        #expect(third.deleteIfPresent(counterpart) == false)
        #expect(third.hasChanges == false)
    }

    @Test func objectsAndRequestsByClassThrowInsteadOfTrapping() throws {
        let context = container.newBackgroundContext()
        let movie = try Movie(insertingInto: context)
        movie.title = "Heat"
        #expect(context.insertedObjects.contains(movie))
        let loose = try Movie(context: context, insert: false)
        #expect(loose.context == nil)
        try context.save()
        #expect(try context.fetch(Movie.makeFetchRequest()).map(\.title) == ["Heat"])
        #expect(Movie.entityName() == "Movie")

        // A class the container's schema lacks, and an abstract entity.
        let vehicles = try PersistentContainer(name: "Vehicles", entities: [Car.self], storeDescriptions: [.inMemory])
        let other = vehicles.newBackgroundContext()
        let unknown = #expect(throws: StrataError.self) { try Movie(insertingInto: other) }
        #expect(unknown?.code == .unknownEntity)
        let abstract = #expect(throws: StrataError.self) { try Vehicle(insertingInto: other) }
        #expect(abstract?.code == .abstractEntity)
        #expect(other.hasChanges == false)
    }

    @Test func typedLookupsAndInserts() throws {
        let context = container.newBackgroundContext()
        let movie: Movie = try context.insertObject()
        movie.title = "Heat"
        let review: Review = try context.insertObject()
        review.movie = movie
        try context.save()
        #expect(context.insertedObjects.isEmpty)

        let other = container.newBackgroundContext()
        let typed: Movie = try other.existingObject(with: movie.objectID)
        #expect(typed.title == "Heat")
        let untyped = try other.existingObject(with: movie.objectID)  // still ManagedObject without annotation
        #expect(untyped === typed)
        #expect(throws: StrataError.self) { let _: Movie = try other.existingObject(with: review.objectID) }

        // The same object in another context; nil once it is gone.
        #expect(try other.existing(movie) === typed)
        #expect(try context.existing(movie) === movie)
        let unsaved = Movie(context: context)
        unsaved.title = "Unsaved"
        #expect(try other.existing(unsaved) == nil)  // a new object of another context
        context.delete(movie)
        #expect(try context.existing(movie) == nil)
        try context.save()
        #expect(try container.newBackgroundContext().existing(movie) == nil)

        let library = try Schema([EntityDescription(name: "Shelf")])
        let elsewhere = ObjectContext(schema: library)
        let error = #expect(throws: StrataError.self) { let _: Movie = try elsewhere.insertObject() }
        #expect(error?.code == .unknownEntity)
    }

    @Test func authorsAsTheKitSetsThem() {
        let context = container.newBackgroundContext()
        #expect(context.author() == nil)
        context.setAuthor("networkSync")
        #expect(context.author() == "networkSync")
        #expect(context.transactionAuthor == "networkSync")
    }

    @Test func objectIDsOnlyRequests() throws {
        let context = container.newBackgroundContext()
        for (title, year) in [("Heat", 1995), ("Thief", 1981), ("Ronin", 1998)] as [(String, Int16)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.year = year
        }
        try context.save()
        let reader = container.newBackgroundContext()
        let request = ObjectIDFetchRequest(entityIds: Movie.self).where(\.year >= 1990).sorted([.descending(\.year)])
        let ids = try reader.fetch(request)
        #expect(ids.count == 2)
        #expect(reader.registeredObjects.isEmpty)  // no object was loaded
        #expect(try ids.map { try reader.existing(Movie.self, withID: $0).title } == ["Ronin", "Heat"])
        #expect(try reader.fetch(ObjectIDFetchRequest(entityIds: Movie.self)).count == 3)
    }
}
