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
}
