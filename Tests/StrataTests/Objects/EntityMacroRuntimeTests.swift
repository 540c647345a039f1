import Foundation
import Testing

@testable import Strata

@Suite struct EntityMacroRuntimeTests {
    @Test func generatedEntityDescribesTheClass() throws {
        let entity = Movie.entity
        #expect(entity.name == "Movie")
        #expect(entity.attributes.map(\.name) == ["id", "title", "releaseDate", "year", "boxOffice", "rating", "tags", "location"])
        #expect(entity.relationships.map(\.name) == ["reviews", "director", "cast"])
        #expect(entity.attribute(named: "year")?.type == .integer16)
        #expect(entity.attribute(named: "releaseDate")?.isOptional == true)
        #expect(entity.attribute(named: "tags")?.type == .codable)
        #expect(entity.attribute(named: "year")?.defaultValue == .integer(1999))
        #expect(entity.uniquenessConstraints == [["id"], ["title", "releaseDate"]])
        #expect(entity.indexes.map(\.elements).map { $0.map(\.propertyName) } == [["title"], ["releaseDate", "title"]])
        #expect(entity.relationship(named: "reviews")?.deleteRule == .cascade)
        #expect(entity.relationship(named: "reviews")?.isToMany == true)
        #expect(entity.relationship(named: "cast")?.isOrdered == true)
        #expect(Movie.propertyName(for: \Movie.title) == "title")
        #expect(Movie.propertyName(for: \Movie.loudTitle) == nil)
    }

    @Test func accessorsReadAndWriteTheValueArray() throws {
        let movie = Movie(title: "Heat", year: 1995)
        #expect(movie.title == "Heat")
        #expect(movie.year == 1995)
        #expect(try movie.value(forKey: "title") as? String == "Heat")
        try movie.setValue("Ronin", forKey: "title")
        #expect(movie.title == "Ronin")
        movie.location = Location(latitude: 1, longitude: 2)
        #expect(movie.location == Location(latitude: 1, longitude: 2))
        let other = Movie()
        #expect(other.id != movie.id)
    }

    @Test func inverseRelationshipsStayInStep() throws {
        let movie = Movie()
        let review = Review()
        review.movie = movie
        #expect(movie.reviews == [review])
        let person = Person()
        movie.director = person
        #expect(person.directed == [movie])
        movie.cast = [person]
        #expect(person.actedIn == [movie])
    }

    @Test func subentitiesInheritAttributes() throws {
        let car = Car()
        car.maker = "Volvo"
        car.seats = 7
        #expect(Car.entity.attributes.map(\.name) == ["wheels", "maker", "seats"])
        #expect(car.maker == "Volvo")
        #expect(car.wheels == 4)
        #expect(car.seats == 7)
        #expect(Car.propertyName(for: \Car.maker) == "maker")
        #expect(Car.propertyName(for: \Car.seats) == "seats")
        let value = car.value
        #expect(value.maker == "Volvo")
        #expect(value.seats == 7)
    }

    @Test func valueSnapshotRoundTrips() throws {
        let movie = Movie(title: "Heat", year: 1995)
        var value = movie.value
        #expect(value.title == "Heat")
        value.title = "Heat (1995)"
        try movie.update(from: value)
        #expect(movie.title == "Heat (1995)")
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Movie.Value.self, from: data) == value)
    }
}
