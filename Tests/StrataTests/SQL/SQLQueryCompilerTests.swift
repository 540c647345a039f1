import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// The shared query compiler, on SQLite: comparisons a filter only keeps or drops stay bare, so
/// that an index serves them; under `NOT` they read as false for `NULL`, as in memory.
@Suite struct SQLQueryCompilerTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
        let context = container.newBackgroundContext()
        for (title, year) in [("Heat", 1995), ("Ronin", 1998), ("Alien", 1979), ("Zodiac", 2007)] {
            context.insert(Movie(title: title, year: Int16(year)))
        }
        try context.save()
    }

    /// `title` is indexed (`@Attribute(.unique)`): each of these filters is answered from it.
    static let indexedFilters: [(String, QueryPredicate)] = [
        ("equal", .comparison(.keyPath("title"), .equalTo, "Heat")),
        ("less", .comparison(.keyPath("title"), .lessThan, "H")),
        ("at least", .comparison(.keyPath("title"), .greaterThanOrEqualTo, "R")),
        ("range", .and([.comparison(.keyPath("title"), .greaterThan, "B"), .comparison(.keyPath("title"), .lessThan, "S")])),
        ("in", .comparison(.keyPath("title"), .in, .list(["Heat", "Ronin"]))),
        ("nil", .comparison(.keyPath("title"), .equalTo, .value(.null))),
    ]

    @Test(arguments: indexedFilters.map(\.0))
    func filtersThatOnlyKeepOrDropRowsUseTheIndex(_ name: String) throws {
        let predicate = try #require(Self.indexedFilters.first { $0.0 == name }?.1)
        let store = try #require(container.stores.first as? SQLiteStore)
        var query = try #require(
            try store.makeQuery(
                FetchPlan(StoreFetchRequest(entityName: "Movie", predicate: predicate), in: store.schema)))
        let sql = "EXPLAIN QUERY PLAN SELECT t0.\"_pk\"" + query.sql(withOrder: false)
        let arguments = StatementArguments(query.arguments)
        let plan = try store.writer.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.contains { $0.contains("INDEX") && $0.contains("title") }, "\(name): \(plan)")
    }

    @Test func negatedComparisonsKeepRowsWhoseValueIsNil() throws {
        let context = container.newBackgroundContext()
        context.insert(Movie(title: "Undated", year: 2020))
        let dated = Movie(title: "Dated", year: 2021)
        context.insert(dated)
        dated.releaseDate = Date(timeIntervalSince1970: 1_000_000)
        try context.save()
        let moment = Date(timeIntervalSince1970: 0)
        // `releaseDate > moment` is NULL for a nil date; NOT must still keep that movie.
        let kept = try context.fetch(FetchRequest<Movie>(format: "NOT (releaseDate < %@) AND year >= 2020", moment))
        #expect(kept.map(\.title).sorted() == ["Dated", "Undated"])
        let later = try context.fetch(FetchRequest<Movie>(format: "NOT (releaseDate > %@) AND year >= 2020", moment))
        #expect(later.map(\.title) == ["Undated"])
        // A nil in a list never matches; under NOT it keeps every other row.
        let listed = try context.fetch(
            FetchRequest<Movie>(format: "NOT (releaseDate IN {%@, nil}) AND year >= 2020", moment))
        #expect(listed.map(\.title).sorted() == ["Dated", "Undated"])
    }
}
