import Foundation
import Strata

/// A film in the catalogue.
///
/// The server's model is two `@Entity` classes: movies, and the directors they are linked to.
/// Request handlers never see these objects: they go through ``MovieResource`` values and a
/// `Repository`, which makes and saves managed objects on threads that may block.
///
/// Predicates and sort keys in the API name these properties: `title`, `year`, `rating`, and
/// `director.name` through the relationship.
@Entity public final class Movie: ManagedObject {
    /// The movie's public identifier, in URLs and JSON.
    @Attribute(.unique) public var id: UUID = UUID()
    /// The title, 1 to 200 characters.
    @Attribute(minimumLength: 1, maximumLength: 200) public var title: String = ""
    /// The year of release.
    @Attribute(minimumValue: 1870, maximumValue: 2100) public var year: Int = 2000
    /// A rating from 0 to 10.
    @Attribute(minimumValue: 0.0, maximumValue: 10.0) public var rating: Double = 0
    /// Who directed it, if known.
    @Relationship(inverse: \Director.movies) public var director: Director?

    #Index<Movie>([\.title], [\.year], [\.rating])
}

/// A director, found by name: movies that name the same director share one.
@Entity public final class Director: ManagedObject {
    /// The director's name, unique in the catalogue.
    @Attribute(.unique, minimumLength: 1, maximumLength: 200) public var name: String = ""
    /// The movies they directed.
    public var movies: Set<Movie> = []
}
