import Foundation
import Strata

// The sample model `strata demo` shows: movies, their reviews and the people who make them,
// plus a small inheritance tree.

@Entity final class Movie: ManagedObject {
    @Attribute(.unique) var id: UUID = UUID()
    @Attribute(minimumLength: 1, maximumLength: 200) var title: String = ""
    var releaseDate: Date?
    var boxOffice: Decimal = 0
    var genres: [String] = []
    @Relationship(deleteRule: .cascade, inverse: \Review.movie) var reviews: Set<Review> = []
    @Relationship(inverse: \Person.directed) var director: Person?

    #Index<Movie>([\.title], [\.releaseDate, \.title])
}

@Entity final class Review: ManagedObject {
    var text: String = ""
    @Attribute(minimumValue: 1, maximumValue: 5) var stars: Int16 = 3
    var movie: Movie?
}

@Entity(.abstract) class Person: ManagedObject {
    var name: String = ""
    var born: Date?
    var directed: Set<Movie> = []
}

@Entity final class Director: Person {
    var awards: Int32 = 0
}

@Entity final class Critic: Person {
    var outlet: String?
}
