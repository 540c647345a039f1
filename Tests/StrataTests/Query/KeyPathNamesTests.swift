import Foundation
import StrataTesting
import Testing

@testable import Strata

/// A parent class with an attribute and a relationship that its subclass inherits.
@Entity(.inheritable) class KeyPathPlace: ManagedObject {
    var name: String = ""
    var country: KeyPathCountry?
}

@Entity final class KeyPathCity: KeyPathPlace {
    var population: Int = 0
}

@Entity final class KeyPathCountry: ManagedObject {
    var code: String = ""
    @Relationship(inverse: \KeyPathPlace.country) var places: Set<KeyPathPlace> = []
    var capital: KeyPathCity?
}

@Entity final class KeyPathVisit: ManagedObject {
    var note: String = ""
    var city: KeyPathCity?
}

/// Key paths through relationships (`\Review.movie?.director?.name`) turned into the names a
/// fetch uses. They are found by building key paths from the `@Entity` tables and comparing,
/// never by reading accessor addresses from descriptions, which differ between the tables and a
/// user's literals in optimized builds; so these checks hold in release builds too.
@Suite struct KeyPathNamesTests {
    @Test func oneRelationship() {
        #expect(KeyPathNames.name(of: \Movie.director?.name, root: Movie.self) == "director.name")
        #expect(KeyPathNames.name(of: \Review.movie?.title, root: Review.self) == "movie.title")
        #expect(KeyPathNames.name(of: \Review.movie?.releaseDate, root: Review.self) == "movie.releaseDate")
        #expect(KeyPathNames.name(of: \Review.movie?.reviews, root: Review.self) == "movie.reviews")
        #expect(KeyPathNames.name(of: \Review.movie?.director, root: Review.self) == "movie.director")
    }

    @Test func severalRelationships() {
        #expect(KeyPathNames.name(of: \Review.movie?.director?.name, root: Review.self) == "movie.director.name")
        #expect(
            KeyPathNames.name(of: \KeyPathVisit.city?.country?.capital?.population, root: KeyPathVisit.self)
                == "city.country.capital.population")
    }

    @Test func inheritedProperties() {
        // An attribute and a relationship that KeyPathCity inherits, reached through a to-one
        // relationship to KeyPathCity and from KeyPathCity itself.
        #expect(KeyPathNames.name(of: \KeyPathVisit.city?.name, root: KeyPathVisit.self) == "city.name")
        #expect(KeyPathNames.name(of: \KeyPathVisit.city?.country?.code, root: KeyPathVisit.self) == "city.country.code")
        #expect(KeyPathNames.name(of: \KeyPathCity.country?.code, root: KeyPathCity.self) == "country.code")
        #expect(KeyPathNames.name(of: \KeyPathPlace.country?.capital?.name, root: KeyPathPlace.self) == "country.capital.name")
    }

    @Test func pathsOfOneProperty() {
        #expect(KeyPathNames.name(of: \Movie.title, root: Movie.self) == "title")
        #expect(KeyPathNames.name(of: \KeyPathCity.name, root: KeyPathCity.self) == "name")
        #expect(KeyPathNames.name(of: \Review.movie, root: Review.self) == "movie")
    }

    @Test func pathsThatNameNoStoredPropertyAreNotFound() {
        #expect(KeyPathNames.relationshipPath(to: \Review.movie?.loudTitle, root: Review.self) == nil)
        #expect(KeyPathNames.relationshipPath(to: \Review.movie?.title.count, root: Review.self) == nil)
        #expect(KeyPathNames.relationshipPath(to: \Review.movie!.title, root: Review.self) == nil)
        #expect(KeyPathNames.relationshipPath(to: \Movie.loudTitle, root: Movie.self) == nil)
    }
}

/// The same key paths in fetches, against a store.
@Suite struct KeyPathFetchTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer(
            [Movie.self, Review.self, Person.self, KeyPathPlace.self, KeyPathCity.self, KeyPathCountry.self,
             KeyPathVisit.self],
            in: directory)
        let context = container.newBackgroundContext()
        let ann = Person(context: context)
        ann.name = "Ann"
        let bob = Person(context: context)
        bob.name = "Bob"
        for (title, director, text) in [("Heat", ann, "tense"), ("Ronin", bob, "fast"), ("Alien", ann, "dark")] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
            let review = Review(context: context)
            review.text = text
            review.movie = movie
        }
        let france = KeyPathCountry(context: context)
        france.code = "FR"
        let paris = KeyPathCity(context: context)
        paris.name = "Paris"
        paris.population = 2_100_000
        paris.country = france
        france.capital = paris
        let lyon = KeyPathCity(context: context)
        lyon.name = "Lyon"
        lyon.country = france
        for (note, city) in [("museums", paris), ("food", lyon)] {
            let visit = KeyPathVisit(context: context)
            visit.note = note
            visit.city = city
        }
        try context.save()
    }

    @Test func predicatesAndSortsThroughRelationships() throws {
        let context = container.newBackgroundContext()
        let byAnn = try context.fetch(
            Review.self, where: \.movie?.director?.name == "Ann", sortedBy: [.ascending(\.movie?.title)])
        #expect(byAnn.map(\.text) == ["dark", "tense"])
        let byDirector = try context.fetch(
            Review.self, where: nil, sortedBy: [.descending(\.movie?.director?.name), .ascending(\.movie?.title)])
        #expect(byDirector.map(\.text) == ["fast", "dark", "tense"])
        let inCapitals = try context.fetch(
            KeyPathVisit.self, where: \.city?.country?.capital?.name == "Paris", sortedBy: [.ascending(\.city?.name)])
        #expect(inCapitals.map(\.note) == ["food", "museums"])
        let bigCities = try context.fetch(KeyPathVisit.self, where: \.city?.population > 1_000_000)
        #expect(bigCities.map(\.note) == ["museums"])
    }

    @Test func countsThroughRelationships() throws {
        let context = container.newBackgroundContext()
        let count = try context.count(for: FetchRequest<Review>(predicate: \.movie?.director?.name == "Bob"))
        #expect(count == 1)
    }

    @Test func aKeyPathThroughAComputedPropertyIsAnUnknownKey() throws {
        let context = container.newBackgroundContext()
        let error = try #require(throws: StrataError.self) {
            try context.fetch(Review.self, where: \.movie?.loudTitle == "HEAT")
        }
        #expect(error.code == .unknownKey)
    }
}
