import Foundation
import Testing

@testable import Strata

/// What an object reports about its unsaved changes: before its first save, after a save
/// (`commitValues()`, which stores call), and after reverting.
@Suite struct ManagedObjectChangeTrackingTests {
    /// Reads an entry of a `[String: Any?]` dictionary without a double optional.
    func entry(_ dictionary: [String: Any?], _ key: String) -> Any? {
        dictionary[key] ?? nil
    }

    // MARK: New objects

    @Test func newObjectListsEveryValueAsChanged() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let changes = movie.changedValues()
        // Attributes without a value (releaseDate, location) and empty relationships are left out.
        #expect(Set(changes.keys) == ["id", "title", "year", "boxOffice", "rating", "tags"])
        #expect(entry(changes, "title") as? String == "Heat")
        #expect(entry(changes, "year") as? Int16 == 1995)
        #expect(entry(changes, "id") as? UUID == movie.id)
        #expect(entry(changes, "tags") as? [String] == [])
        #expect(movie.hasChanges)
        #expect(!movie.isUpdated)
        #expect(!movie.isInserted)
    }

    @Test func newObjectHasNoCommittedValues() throws {
        let movie = Movie(title: "Heat", year: 1995)
        #expect(try movie.committedValues().isEmpty)
        #expect(try movie.committedValues(forKeys: ["title", "director"]).isEmpty)
        let error = try #require(throws: StrataError.self) { try movie.committedValues(forKeys: ["titel"]) }
        #expect(error.code == .unknownKey)
    }

    @Test func newObjectWithoutValuesHasNoChanges() throws {
        let schema = try ClasslessModel.makeCatalogSchema()
        let item = try ClasslessModel.makeObject("Item", in: schema)
        #expect(item.changedValues().isEmpty)
        #expect(!item.hasChanges)
        try item.setValue("x", forKey: "string")
        #expect(item.hasChanges)
        #expect(Set(item.changedValues().keys) == ["string"])
    }

    @Test func newObjectListsItsRelationships() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let director = Person()
        movie.director = director
        let changes = movie.changedValues()
        #expect(entry(changes, "director") as? ManagedObject === director)
        #expect(changes["reviews"] == nil)
        #expect(entry(director.changedValues(), "directed") as? Set<ManagedObject> == [movie])
    }

    // MARK: After a save

    @Test func committedObjectHasNoChanges() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.commitValues()
        #expect(!movie.hasChanges)
        #expect(!movie.isUpdated)
        #expect(!movie.isInserted)
        #expect(movie.changedValues().isEmpty)
        let committed = try movie.committedValues()
        #expect(Set(committed.keys) == Set(Movie.entity.propertyNames))
        #expect(entry(committed, "title") as? String == "Heat")
        #expect(entry(committed, "releaseDate") == nil)
        #expect(entry(committed, "reviews") as? Set<ManagedObject> == [])
        #expect(entry(committed, "cast") as? [ManagedObject] == [])
    }

    @Test func changingOneValueReportsOnlyThatKey() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.commitValues()
        movie.title = "Ronin"
        #expect(movie.isUpdated)
        #expect(movie.hasChanges)
        let changes = movie.changedValues()
        #expect(Array(changes.keys) == ["title"])
        #expect(entry(changes, "title") as? String == "Ronin")
        let committed = try movie.committedValues(forKeys: ["title"])
        #expect(Array(committed.keys) == ["title"])
        #expect(entry(committed, "title") as? String == "Heat")
        #expect(movie.title == "Ronin")
    }

    @Test func settingBackTheCommittedValueIsNoChange() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.commitValues()
        movie.title = "Ronin"
        movie.year = 1998
        #expect(Set(movie.changedValues().keys) == ["title", "year"])
        movie.title = "Heat"
        #expect(Set(movie.changedValues().keys) == ["year"])
        movie.year = 1995
        #expect(movie.changedValues().isEmpty)
        #expect(!movie.isUpdated)
        #expect(!movie.hasChanges)
    }

    @Test func writingTheSameValueIsNoChange() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.tags = ["crime", "a/b"]
        movie.location = Location(latitude: 1.5, longitude: 2)
        movie.commitValues()
        movie.title = "Heat"
        movie.tags = ["crime", "a/b"]
        try movie.setValue("Heat", forKey: "title")
        try movie.setValue(1995, forKey: "year")
        // The same JSON whether it comes from a typed property or from plain values by key.
        try movie.setValue(["crime", "a/b"], forKey: "tags")
        try movie.setValue(["latitude": 1.5, "longitude": 2.0], forKey: "location")
        #expect(movie.changedValues().isEmpty)
        #expect(!movie.hasChanges)
    }

    @Test func committedValuesRejectUnknownKeys() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.commitValues()
        let error = try #require(throws: StrataError.self) { try movie.committedValues(forKeys: ["title", "titel"]) }
        #expect(error.code == .unknownKey)
        #expect(error.propertyName == "titel")
        #expect(error.message.contains("Did you mean 'title'?"), "\(error.message)")
    }

    @Test func relationshipChangesShowUpOnBothSides() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let director = Person()
        let actor = Person()
        movie.commitValues()
        director.commitValues()
        actor.commitValues()

        movie.director = director
        movie.cast = [actor]
        #expect(movie.isUpdated)
        let changes = movie.changedValues()
        #expect(Set(changes.keys) == ["director", "cast"])
        #expect(entry(changes, "director") as? ManagedObject === director)
        #expect((entry(changes, "cast") as? [ManagedObject])?.map(ObjectIdentifier.init) == [ObjectIdentifier(actor)])
        #expect(entry(try movie.committedValues(forKeys: ["director"]), "director") == nil)

        #expect(director.isUpdated)
        #expect(Set(director.changedValues().keys) == ["directed"])
        #expect(Set(actor.changedValues().keys) == ["actedIn"])

        movie.director = nil
        movie.cast = []
        #expect(!movie.hasChanges)
        #expect(!director.hasChanges)
        #expect(!actor.hasChanges)
    }

    @Test func reorderingAnOrderedRelationshipIsAChange() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let first = Person()
        let second = Person()
        movie.cast = [first, second]
        movie.commitValues()
        movie.cast = [second, first]
        #expect(Array(movie.changedValues().keys) == ["cast"])
        movie.cast = [first, second]
        #expect(movie.changedValues().isEmpty)
    }

    @Test func reassigningAnUnorderedRelationshipInAnotherOrderIsNoChange() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let reviews = (0..<5).map { _ in Review() }
        movie.reviews = Set(reviews)
        movie.commitValues()
        movie.reviews = Set(reviews.reversed())
        #expect(movie.changedValues().isEmpty)
        #expect(!movie.isUpdated)
    }

    // MARK: Reverting

    @Test func revertRestoresTheCommittedValues() throws {
        let movie = Movie(title: "Heat", year: 1995)
        movie.tags = ["crime"]
        movie.commitValues()
        movie.title = "Ronin"
        movie.year = 1998
        movie.tags = []
        movie.location = Location(latitude: 1, longitude: 2)
        #expect(movie.hasChanges)

        movie.revertValues()
        #expect(movie.title == "Heat")
        #expect(movie.year == 1995)
        #expect(movie.tags == ["crime"])
        #expect(movie.location == nil)
        #expect(!movie.hasChanges)
        #expect(movie.changedValues().isEmpty)
    }

    @Test func revertRestoresCommittedRelationships() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let first = Person()
        movie.director = first
        movie.commitValues()
        movie.director = Person()
        #expect(movie.director !== first)
        movie.revertValues()
        #expect(movie.director === first)
        #expect(!movie.hasChanges)
    }

    @Test func revertOfANeverCommittedObjectRestoresTheDefaults() throws {
        let movie = Movie(title: "Heat", year: 1995)
        let director = Person()
        movie.director = director
        movie.boxOffice = 10
        movie.revertValues()
        #expect(movie.title == "")
        #expect(movie.year == 1999)
        #expect(movie.boxOffice == 0)
        #expect(movie.director == nil)
        #expect(director.directed.isEmpty)
    }

    @Test func changesOfCommittedObjectsShowInTheContext() throws {
        let context = ObjectContext(schema: try Schema([Movie.self]))
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.commitValues()
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)

        movie.title = "Ronin"
        #expect(context.hasChanges)
        #expect(context.updatedObjects == [movie])

        movie.title = "Heat"
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)

        movie.year = 2000
        movie.revertValues()
        #expect(movie.year == 1999)
        #expect(context.updatedObjects.isEmpty)
    }
}
