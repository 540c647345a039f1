import Foundation
import Strata

/// A movie as the API shows it: the JSON of every response, and the value the server reads
/// and writes through a `Repository`.
///
/// ```json
/// {"id": "5F0C…", "title": "Heat", "year": 1995, "rating": 8.3, "director": "Michael Mann"}
/// ```
///
/// The director is shown by name. Writing a value (``updating(managed:)``, which a repository's
/// create and update call) links the movie to the director with that name, adding one when the
/// catalogue has none, so movies that name the same director share one.
public struct MovieResource: Codable, Hashable, Sendable {
    /// The movie's identifier.
    public var id: UUID
    /// The title.
    public var title: String
    /// The year of release.
    public var year: Int
    /// The rating, from 0 to 10.
    public var rating: Double
    /// The director's name, if known.
    public var director: String?

    /// Creates a value.
    public init(id: UUID = UUID(), title: String, year: Int, rating: Double, director: String? = nil) {
        self.id = id
        self.title = title
        self.year = year
        self.rating = rating
        self.director = director
    }
}

extension MovieResource: IdentifiedUnmanagedModel, WritableUnmanagedModel {
    /// The managed class the value is read from and written to.
    public typealias ManagedModel = Movie

    /// Reads the value from a movie, inside the repository's context.
    public init(managed: Movie) {
        id = managed.id
        title = managed.title
        year = managed.year
        rating = managed.rating
        director = managed.director?.name
    }

    /// The domain key: values find their movie by ``id``.
    public var unmanagedId: UUID { id }

    /// The attribute that holds the domain key.
    public static var unmanagedIdKeyPath: KeyPath<Movie, UUID> { \.id }

    /// How errors name the value's type.
    public static var errorDescription: String { "movie" }

    /// Copies the value into `managed`, linking it to the director of that name (added when
    /// missing). The identifier is written only to a new movie: an update never re-keys one.
    ///
    /// - Throws: `StrataError` when the director cannot be looked up.
    public func updating(managed: Movie) throws {
        if managed.isInserted { managed.id = id }
        if managed.title != title { managed.title = title }
        if managed.year != year { managed.year = year }
        if managed.rating != rating { managed.rating = rating }
        guard managed.director?.name != director else { return }
        guard let director, let context = managed.context else {
            managed.director = nil
            return
        }
        managed.director = try Self.director(named: director, in: context)
    }

    /// The director named `name` in `context` (saved, or inserted and not yet saved), or a new one.
    static func director(named name: String, in context: ObjectContext) throws -> Director {
        if let existing = try context.fetch(Director.self, where: \.name == name).first {
            return existing
        }
        let director = Director(context: context)
        director.name = name
        return director
    }
}
