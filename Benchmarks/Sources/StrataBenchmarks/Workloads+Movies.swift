import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W3: insert movies with a UUID, a string, a date and a decimal, each related to one of 100
// directors created in the same save. Every contender stores the values as Strata does (see
// Strata's SQLiteValueCoding): the UUID as a 16-byte BLOB, the date as REAL seconds since
// 2001-01-01, the decimal as TEXT. The raw and GRDB tables also index the `director` column,
// as Strata indexes every to-one column.

@Entity final class Director: ManagedObject {
    var name: String = ""
    @Relationship(inverse: \Movie.director) var movies: Set<Movie> = []
}

@Entity final class Movie: ManagedObject {
    var id: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var title: String = ""
    var released: Date = Date(timeIntervalSinceReferenceDate: 0)
    var budget: Decimal = 0
    var director: Director?
}

let directorCount = 100

let createMovieTables = [
    "CREATE TABLE director (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE movie (id INTEGER PRIMARY KEY, uuid BLOB, title TEXT, released REAL, budget TEXT, director INTEGER REFERENCES director)",
    "CREATE INDEX movie_director ON movie(director)",
]

/// The values of movie number `row`, the same for every contender (the UUID is random).
enum MovieValues {
    static func title(_ row: Int) -> String { "Movie \(row)" }
    static func released(_ row: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(row % 20_000) * 86_400) }
    /// Whole cents, so that the decimal has a fractional part: 1000.07, 2000.08, …
    static func budget(_ row: Int) -> Decimal {
        Decimal(sign: .plus, exponent: -2, significand: Decimal(row * 100_000 + row % 100))
    }
    static func directorName(_ number: Int) -> String { "Director \(number)" }
    /// The director's primary key in the raw and GRDB tables (1...100).
    static func directorID(_ row: Int) -> Int64 { Int64(row % directorCount + 1) }
}

/// W3's Codable records: GRDB encodes UUIDs as 16-byte blobs and decimals as text by default;
/// the date strategy matches Strata's.
struct DirectorRecord: Codable, PersistableRecord {
    static let databaseTableName = "director"
    var id: Int64
    var name: String
}

struct MovieRecord: Codable, PersistableRecord {
    static let databaseTableName = "movie"
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }
    var id: Int64?
    var uuid: UUID
    var title: String
    var released: Date
    var budget: Decimal
    var director: Int64
}

/// W3's hand-written records: each column encoded by hand, as Strata encodes it.
struct FastDirectorRecord: PersistableRecord {
    static let databaseTableName = "director"
    var id: Int64
    var name: String
    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
    }
}

struct FastMovieRecord: PersistableRecord {
    static let databaseTableName = "movie"
    var uuid: UUID
    var title: String
    var released: Date
    var budget: Decimal
    var director: Int64
    func encode(to container: inout PersistenceContainer) throws {
        container["uuid"] = uuid  // a 16-byte blob
        container["title"] = title
        container["released"] = released.timeIntervalSinceReferenceDate
        container["budget"] = budget.description
        container["director"] = director
    }
}

/// W3: insert 100 directors and `count` movies related to them, in one save.
func insertMovies(_ contender: Contender, count: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    switch contender {
    case .strata:
        let container = try PersistentContainer(
            name: "W3", entities: [Movie.self, Director.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let directors = (0..<directorCount).map { number in
            let director = Director(context: context)
            director.name = MovieValues.directorName(number)
            return director
        }
        for row in 0..<count {
            let movie = Movie(context: context)
            movie.id = UUID()
            movie.title = MovieValues.title(row)
            movie.released = MovieValues.released(row)
            movie.budget = MovieValues.budget(row)
            movie.director = directors[row % directorCount]
        }
        try context.save()
        // Directors and their movies refer to each other (and to the context): without a reset
        // each run's object graph would stay in memory for good, as in any long-lived program.
        context.reset()
        try container.close()
    case .raw:
        let database = try RawDatabase(path: url.path)
        for sql in createMovieTables { try database.execute(sql) }
        try database.execute("BEGIN")
        let insertDirector = try database.prepare("INSERT INTO director (id, name) VALUES (?, ?)")
        defer { sqlite3_finalize(insertDirector) }
        for number in 0..<directorCount {
            sqlite3_bind_int64(insertDirector, 1, Int64(number + 1))
            sqlite3_bind_text(insertDirector, 2, MovieValues.directorName(number), -1, sqliteTransient)
            try database.stepDone(insertDirector)
        }
        let insertMovie = try database.prepare(
            "INSERT INTO movie (uuid, title, released, budget, director) VALUES (?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(insertMovie) }
        for row in 0..<count {
            withUnsafeBytes(of: UUID().uuid) { bytes in
                _ = sqlite3_bind_blob(insertMovie, 1, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
            }
            sqlite3_bind_text(insertMovie, 2, MovieValues.title(row), -1, sqliteTransient)
            sqlite3_bind_double(insertMovie, 3, MovieValues.released(row).timeIntervalSinceReferenceDate)
            sqlite3_bind_text(insertMovie, 4, MovieValues.budget(row).description, -1, sqliteTransient)
            sqlite3_bind_int64(insertMovie, 5, MovieValues.directorID(row))
            try database.stepDone(insertMovie)
        }
        try database.execute("COMMIT")
    case .grdbCodable, .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            for sql in createMovieTables { try db.execute(sql: sql) }
        }
        try queue.write { db in
            for number in 0..<directorCount {
                let id = Int64(number + 1)
                let name = MovieValues.directorName(number)
                if contender == .grdbCodable {
                    try DirectorRecord(id: id, name: name).insert(db)
                } else {
                    try FastDirectorRecord(id: id, name: name).insert(db)
                }
            }
            for row in 0..<count {
                if contender == .grdbCodable {
                    try MovieRecord(
                        id: nil, uuid: UUID(), title: MovieValues.title(row), released: MovieValues.released(row),
                        budget: MovieValues.budget(row), director: MovieValues.directorID(row)
                    ).insert(db)
                } else {
                    try FastMovieRecord(
                        uuid: UUID(), title: MovieValues.title(row), released: MovieValues.released(row),
                        budget: MovieValues.budget(row), director: MovieValues.directorID(row)
                    ).insert(db)
                }
            }
        }
    }
}

/// W3's check: every movie is stored, with values of the right storage classes, and related to
/// one of the 100 directors.
func verifyMovies(_ contender: Contender, count: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    let uuidColumn = contender == .strata ? "id" : "uuid"
    let movies = try queryIntegers(
        url,
        """
        SELECT COUNT(*), COUNT(DISTINCT director),
            SUM(typeof(\(uuidColumn)) = 'blob' AND length(\(uuidColumn)) = 16 AND typeof(released) = 'real' AND typeof(budget) = 'text')
        FROM movie
        """)
    try expect(
        movies, [Int64(count), Int64(directorCount), Int64(count)], "W3's movies, directors and well-typed rows")
    try expect(try queryIntegers(url, "SELECT COUNT(*) FROM director"), [Int64(directorCount)], "W3's directors")
    // The last movie's budget reads back exactly.
    let title = MovieValues.title(count - 1)
    let budget = MovieValues.budget(count - 1).description
    let last = try queryIntegers(url, "SELECT COUNT(*) FROM movie WHERE title = '\(title)' AND budget = '\(budget)'")
    try expect(last, [1], "W3's last movie with budget \(budget)")
}
