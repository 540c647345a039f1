import Foundation

/// The body of `POST /movies`: a new movie. The server chooses its identifier.
///
/// ```json
/// {"title": "Heat", "year": 1995, "rating": 8.3, "director": "Michael Mann"}
/// ```
///
/// `rating` defaults to 0 and `director` to none. Range and length rules are the model's
/// (see ``Movie``): a value outside them is refused with `400 Bad Request`.
public struct MovieInput: Codable, Sendable, Equatable {
    /// The title.
    public var title: String
    /// The year of release.
    public var year: Int
    /// The rating, from 0 to 10.
    public var rating: Double?
    /// The director's name.
    public var director: String?

    /// Creates a body.
    public init(title: String, year: Int, rating: Double? = nil, director: String? = nil) {
        self.title = title
        self.year = year
        self.rating = rating
        self.director = director
    }

    /// The movie the body describes, with a new identifier.
    func makeResource() -> MovieResource {
        MovieResource(title: title, year: year, rating: rating ?? 0, director: director)
    }
}

/// The body of `PATCH /movies/:id`: the fields to change, the others left as they are.
///
/// ```json
/// {"rating": 9.1}
/// {"director": null}
/// ```
///
/// `"director": null` unlinks the director; leaving `director` out keeps it.
public struct MoviePatch: Codable, Sendable, Equatable {
    /// The new title.
    public var title: String?
    /// The new year.
    public var year: Int?
    /// The new rating.
    public var rating: Double?
    /// The new director: `nil` keeps the current one, `.some(nil)` removes it.
    public var director: String??

    /// Creates a patch.
    public init(title: String? = nil, year: Int? = nil, rating: Double? = nil, director: String?? = nil) {
        self.title = title
        self.year = year
        self.rating = rating
        self.director = director
    }

    private enum CodingKeys: String, CodingKey {
        case title, year, rating, director
    }

    /// Decodes a patch, telling a `null` director (remove it) from a missing one (keep it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        year = try container.decodeIfPresent(Int.self, forKey: .year)
        rating = try container.decodeIfPresent(Double.self, forKey: .rating)
        if container.contains(.director) {
            director = .some(try container.decodeIfPresent(String.self, forKey: .director))
        } else {
            director = nil
        }
    }

    /// Encodes the patch: only the fields it changes, `null` for a removed director.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(year, forKey: .year)
        try container.encodeIfPresent(rating, forKey: .rating)
        if let director {
            try container.encode(director, forKey: .director)
        }
    }

    /// `movie` with the patch's fields applied.
    func applied(to movie: MovieResource) -> MovieResource {
        var movie = movie
        if let title { movie.title = title }
        if let year { movie.year = year }
        if let rating { movie.rating = rating }
        if let director { movie.director = director }
        return movie
    }
}
