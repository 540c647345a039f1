import Foundation
import Strata

/// The model the store conformance suite works with: movies, reviews and people (with
/// to-one, to-many, ordered and many-to-many relationships, cascade and nullify rules,
/// validation rules, a Codable attribute and a uniqueness constraint), and an abstract
/// vehicle entity with two subentities.
public enum ConformanceModel {
    /// Every class of the model.
    public static let types: [ManagedObject.Type] = [Movie.self, Car.self, Bike.self]

    /// A place, stored as a Codable attribute.
    public struct Location: Codable, Hashable, Sendable {
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double

        /// Creates a place.
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    @Entity final class Movie: ManagedObject {
        @Attribute(.unique) var id: UUID = UUID()
        @Attribute(minimumLength: 1, maximumLength: 100) var title: String = ""
        var releaseDate: Date?
        @Attribute(minimumValue: 1888, maximumValue: 2100) var year: Int16 = 1999
        var boxOffice: Decimal = 0
        var rating: Double = 0
        var tags: [String] = []
        @Attribute(.codable) var location: Location?
        @Relationship(deleteRule: .cascade, inverse: \Review.movie) var reviews: Set<Review> = []
        @Relationship(inverse: \Person.directed) var director: Person?
        @Relationship(inverse: \Person.actedIn) var cast: [Person] = []
        @Relationship(inverse: \Person.favorites) var fans: Set<Person> = []
        var keywords: Set<Keyword> = []
        var studio: Studio?
        @Transient var cache: Int = 0
        var loudTitle: String { title.uppercased() }

        #Unique<Movie>([\.title, \.releaseDate])
        #Index<Movie>([\.title], [\.releaseDate, \.title])

        convenience init(title: String, year: Int16) {
            self.init()
            self.title = title
            self.year = year
        }
    }

    @Entity final class Review: ManagedObject {
        var text: String = ""
        @Attribute(minimumValue: 0, maximumValue: 5) var stars: Int32 = 3
        var movie: Movie?
    }

    @Entity final class Person: ManagedObject {
        var name: String = ""
        @Attribute(.unique) var email: String?
        var favorites: [Movie] = []
        var directed: Set<Movie> = []
        var actedIn: Set<Movie> = []
    }

    @Entity(.abstract) class Vehicle: ManagedObject {
        var wheels: Int = 4
        var maker: String = ""
    }

    @Entity final class Car: Vehicle {
        var seats: Int16 = 5
    }

    @Entity final class Bike: Vehicle {
        var isElectric: Bool = false
    }

    /// A studio, which cannot be deleted while it has movies (a deny rule).
    @Entity final class Studio: ManagedObject {
        var name: String = ""
        @Relationship(deleteRule: .deny, inverse: \Movie.studio) var movies: Set<Movie> = []
    }

    /// A word attached to movies by a relationship without inverse; persistent history keeps
    /// its word when it is deleted.
    @Entity final class Keyword: ManagedObject {
        @Attribute(.preserveValueOnDeletion) var word: String = ""
    }
}
