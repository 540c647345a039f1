import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W19 and W20 (issue 37): every movie of W3's store read with its director's name, a to-one
// relationship touched on every fetched object. Strata fetches the movies and follows
// `movie.director` — W19 as it comes (each director a fault, fired when first read), W20 with
// `relationshipKeyPathsForPrefetching = ["director"]` (Core Data's), which loads the directors
// with the movies. Raw SQLite and GRDB read the same values with one join, as their users would;
// their figures are the same workload in both rows.

/// A movie and its director's name as the raw and GRDB contenders read them.
private struct MovieWithDirector: Decodable, FetchableRecord {
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }
    var uuid: UUID
    var title: String
    var released: Date
    var budget: Decimal
    var name: String
}

private let movieJoin = """
    SELECT m.uuid, m.title, m.released, m.budget, d.name AS name
    FROM movie m JOIN director d ON d.id = m.director ORDER BY m.id
    """

/// Prepares W3's store for a contender (not timed), in a new scratch folder.
func prepareMovies(_ contender: Contender, count: Int) throws -> URL {
    let folder = try scratchFolder()
    try insertMovies(contender, count: count, in: folder)
    return folder
}

/// W19 and W20: every movie, every attribute and its director's name read.
func fetchMoviesWithDirectors(_ contender: Contender, count: Int, prefetching: Bool, in folder: URL) throws {
    let url = storeURL(in: folder)
    var movies = 0
    var nameLengths = 0
    var checksum = 0.0  // the movies' own values, so that every one is read
    func read(uuid: UUID, title: String, released: Date, budget: Decimal, directorName: String?) {
        movies += 1
        nameLengths += directorName?.utf8.count ?? 0
        checksum += Double(uuid.uuid.0) + Double(title.utf8.count) + released.timeIntervalSinceReferenceDate
            + NSDecimalNumber(decimal: budget).doubleValue
    }
    switch contender {
    case .strata:
        let container = try PersistentContainer(
            name: "W3", entities: [Movie.self, Director.self], storeDescriptions: [.sqlite(url)])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        var request = FetchRequest<Movie>()
        if prefetching { request.relationshipKeyPathsForPrefetching = ["director"] }
        for movie in try context.fetch(request) {
            read(
                uuid: movie.id, title: movie.title, released: movie.released, budget: movie.budget,
                directorName: movie.director?.name)
        }
        // Directors and their movies refer to each other: let the graph go, as W3 does.
        context.reset()
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare(movieJoin)
        defer { sqlite3_finalize(statement) }
        var rows: [(UUID, String, Date, Decimal, String)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            if let bytes = sqlite3_column_blob(statement, 0), sqlite3_column_bytes(statement, 0) == 16 {
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
            }
            let title = String(cString: sqlite3_column_text(statement, 1))
            let released = Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 2))
            let budget = Decimal(string: String(cString: sqlite3_column_text(statement, 3))) ?? 0
            let name = String(cString: sqlite3_column_text(statement, 4))
            rows.append((uuid, title, released, budget, name))
        }
        for row in rows { read(uuid: row.0, title: row.1, released: row.2, budget: row.3, directorName: row.4) }
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        let rows = try queue.read { db in try MovieWithDirector.fetchAll(db, sql: movieJoin) }
        for row in rows {
            read(uuid: row.uuid, title: row.title, released: row.released, budget: row.budget, directorName: row.name)
        }
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: movieJoin).map { row -> (UUID, String, Date, Decimal, String) in
                let released: Double = row[2]
                let budget: String = row[3]
                return (row[0], row[1], Date(timeIntervalSinceReferenceDate: released), Decimal(string: budget) ?? 0, row[4])
            }
        }
        for row in rows { read(uuid: row.0, title: row.1, released: row.2, budget: row.3, directorName: row.4) }
    }
    try expect(movies, count, "W19/W20's movies")
    let expectedLengths = (0..<count).reduce(0) { $0 + MovieValues.directorName($1 % directorCount).utf8.count }
    try expect(nameLengths, expectedLengths, "W19/W20's director names")
    if checksum == 0 { throw BenchmarkError("W19/W20 read no attributes") }
}
