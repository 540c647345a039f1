import Foundation
import GRDB
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// A many-to-many relationship, which the demo model lacks: its join table is what
/// `strata check` finds orphaned rows in.
enum CheckCommandModel {
    @Entity final class Shelf: ManagedObject {
        var name: String = ""
        @Relationship(inverse: \Book.shelves) var books: Set<Book> = []
    }

    @Entity final class Book: ManagedObject {
        var title: String = ""
        var shelves: Set<Shelf> = []
    }
}

/// `strata check` on stores damaged with raw SQL, as a crash, a bad tool or a person with
/// `sqlite3` leaves them: what it finds, what it repairs, and what it refuses to touch.
@Suite(.timeLimit(.minutes(10))) struct CheckCommandTests {
    typealias Shelf = CheckCommandModel.Shelf
    typealias Book = CheckCommandModel.Book

    /// The report `--json` prints.
    struct Report: Decodable {
        var store: String
        var problems: [Problem]
        var repaired: [Problem]?
    }

    struct Problem: Decodable {
        var kind: String
        var entity: String?
        var property: String?
        var count: Int
        var message: String
        var repairable: Bool
    }

    // MARK: Stores

    /// Three movies, two by one director, and a critic: consistent.
    private static func makeMovieStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Movies.sqlite")
        let container = try PersistentContainer(
            name: "Check", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let mann = Director(context: context)
        mann.name = "Michael Mann"
        let frankenheimer = Director(context: context)
        frankenheimer.name = "John Frankenheimer"
        Critic(context: context).name = "Pauline K."
        for (title, director) in [("Heat", mann), ("Collateral", mann), ("Ronin", frankenheimer)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
        }
        try context.save()
        try container.close()
        return url
    }

    /// Damage to the movie store.
    enum MovieDamage: CaseIterable {
        /// Heat's director is a key no person has (repairable: the relationship is optional).
        case danglingDirector
        /// Collateral has no id, which is required.
        case missingID
        /// Ronin has Heat's id, which must be unique (its unique index dropped first, as a
        /// damaged store would have lost it).
        case duplicateID
    }

    private static func damage(_ store: URL, with damages: Set<MovieDamage>) throws {
        let database = try DatabaseQueue(path: store.path)
        try database.write { db in
            if damages.contains(.danglingDirector) {
                try db.execute(sql: #"UPDATE "Movie" SET "director" = 999 WHERE "title" = 'Heat'"#)
                #expect(db.changesCount == 1)
            }
            if damages.contains(.missingID) {
                try db.execute(sql: #"UPDATE "Movie" SET "id" = NULL WHERE "title" = 'Collateral'"#)
                #expect(db.changesCount == 1)
            }
            if damages.contains(.duplicateID) {
                let uniqueIndexes = try String.fetchAll(
                    db,
                    sql:
                        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Movie' AND sql LIKE 'CREATE UNIQUE INDEX%'"
                )
                try #require(uniqueIndexes.count == 1, "\(uniqueIndexes)")
                try db.execute(sql: "DROP INDEX \(uniqueIndexes[0].quotedDatabaseIdentifier)")
                try db.execute(
                    sql:
                        #"UPDATE "Movie" SET "id" = (SELECT "id" FROM "Movie" WHERE "title" = 'Heat') WHERE "title" = 'Ronin'"#
                )
                #expect(db.changesCount == 1)
            }
        }
        try database.close()
    }

    /// Heat's director key and director entity, read with SQL.
    private static func heatsDirector(in store: URL) throws -> (key: Int64?, entity: String?) {
        let database = try DatabaseQueue(path: store.path)
        defer { try? database.close() }
        return try database.read { db in
            let row = try #require(try Row.fetchOne(db, sql: #"SELECT * FROM "Movie" WHERE "title" = 'Heat'"#))
            return (row["director"], row["_director_entity"])
        }
    }

    /// Two shelves and three books, Emma on both shelves: four links. Returns the store, its
    /// join table of `Book.shelves`, and the join table's columns of book keys and shelf keys.
    private static func makeShelfStore(
        in directory: TemporaryDirectory
    ) throws -> (url: URL, joinTable: String, bookColumn: String, shelfColumn: String) {
        let url = directory.file("Shelves.sqlite")
        let container = try PersistentContainer(
            name: "Shelves", entities: [Shelf.self, Book.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let fiction = Shelf(context: context)
        fiction.name = "Fiction"
        let classics = Shelf(context: context)
        classics.name = "Classics"
        for (title, shelves) in [("Dune", [fiction]), ("Emma", [fiction, classics]), ("Ulysses", [classics])] {
            let book = Book(context: context)
            book.title = title
            book.shelves = Set(shelves)
        }
        try context.save()
        let book = try #require(container.schema.entity(named: "Book"))
        let number = try #require(book.relationshipNumber(named: "shelves"))
        let layout = StoreLayout(schema: container.schema)
        guard case .joinTable(let table, let source, let target, _)? = layout.entities["Book"]?.toMany[number] else {
            throw CheckTestFailure("Book.shelves is not stored in a join table")
        }
        try container.close()
        return (url, table, source, target)
    }

    private struct CheckTestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The join rows (book key, shelf key) of the shelf store, read with SQL.
    private static func links(
        in store: (url: URL, joinTable: String, bookColumn: String, shelfColumn: String)
    ) throws -> [[Int64]] {
        let database = try DatabaseQueue(path: store.url.path)
        defer { try? database.close() }
        return try database.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT \(store.bookColumn.quotedDatabaseIdentifier), \(store.shelfColumn.quotedDatabaseIdentifier) FROM \(store.joinTable.quotedDatabaseIdentifier)"
            ).map { [$0[0], $0[1]] }.sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Deletes Emma's row alone, so that its two links name a book that does not exist;
    /// returns Emma's key.
    @discardableResult
    private static func deleteEmma(from store: URL) throws -> Int64 {
        let database = try DatabaseQueue(path: store.path)
        defer { try? database.close() }
        return try database.write { db in
            let key = try #require(try Int64.fetchOne(db, sql: #"SELECT "_pk" FROM "Book" WHERE "title" = 'Emma'"#))
            try db.execute(sql: #"DELETE FROM "Book" WHERE "_pk" = ?"#, arguments: [key])
            return key
        }
    }

    // MARK: Running

    /// Runs `strata` with standard input a pipe (never the test's terminal, if it has one).
    private func strata(_ arguments: [String]) async throws -> (status: Int32?, output: String, errorOutput: String) {
        let child = try InteractiveStrata(arguments)
        child.closeInput()
        let status = try await child.waitForExit()
        return (status, child.outputText, child.errorText)
    }

    /// `strata check --json`'s report.
    private func report(_ store: URL) async throws -> (status: Int32?, report: Report) {
        let result = try await strata(["check", store.path, "--json"])
        let report = try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))
        return (result.status, report)
    }

    // MARK: Consistent stores

    @Test func aConsistentStoreHasNoProblems() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        let result = try await strata(["check", store.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "✓ \(store.path): no problems found.\n", "\(result.output)")
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")

        let json = try await strata(["check", store.path, "--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect((object["problems"] as? [Any])?.isEmpty == true, "\(json.output)")
        #expect(object["store"] as? String == store.path, "\(json.output)")

        let shelves = try Self.makeShelfStore(in: directory)
        let (status, report) = try await report(shelves.url)
        #expect(status == 0)
        #expect(report.problems.isEmpty)
    }

    // MARK: Finding damage

    @Test func findsEachKindOfDamage() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: Set(MovieDamage.allCases))

        let text = try await strata(["check", store.path])
        #expect(text.status == 2, "\(text.errorOutput)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(store.path): 3 problems found.", "\(text.output)")
        #expect(lines.count == 4, "one line per problem: \(text.output)")
        #expect(lines.contains { $0.contains("[danglingToOne]") && $0.hasSuffix("(repairable)") }, "\(text.output)")
        #expect(
            lines.contains { $0.contains("[missingRequiredValue]") && $0.hasSuffix("(needs a person)") },
            "\(text.output)")
        #expect(
            lines.contains { $0.contains("[uniquenessViolation]") && $0.hasSuffix("(needs a person)") },
            "\(text.output)")

        let (status, report) = try await report(store)
        #expect(status == 2)
        let byKind = Dictionary(report.problems.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(report.problems.count == 3, "\(report.problems.map(\.kind))")
        let dangling = try #require(byKind["danglingToOne"])
        #expect(
            dangling.entity == "Movie" && dangling.property == "director" && dangling.count == 1 && dangling.repairable)
        let missing = try #require(byKind["missingRequiredValue"])
        #expect(missing.entity == "Movie" && missing.property == "id" && missing.count == 1 && !missing.repairable)
        let duplicate = try #require(byKind["uniquenessViolation"])
        #expect(
            duplicate.entity == "Movie" && duplicate.property == "id" && duplicate.count == 1 && !duplicate.repairable)
    }

    @Test func findsJoinRowsThatNameMissingObjects() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeShelfStore(in: directory)
        #expect(try Self.links(in: store).count == 4)
        try Self.deleteEmma(from: store.url)

        let (status, report) = try await report(store.url)
        #expect(status == 2)
        try #require(report.problems.count == 1, "\(report.problems.map(\.message))")
        let orphaned = report.problems[0]
        #expect(orphaned.kind == "orphanedJoinRows")
        #expect(orphaned.count == 2, "Emma was on two shelves: \(orphaned.message)")
        #expect(orphaned.repairable)
        #expect(orphaned.message.contains(store.joinTable), "\(orphaned.message)")
    }

    @Test func aTruncatedFileIsAnIntegrityProblem() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        let bytes = try Data(contentsOf: store)
        try #require(bytes.count > 8192)
        try bytes.prefix(bytes.count / 2).write(to: store)

        let text = try await strata(["check", store.path])
        // A finding, not a crash and not a failure of the check.
        #expect(text.status == 2, "\(text.errorOutput)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "a heading and one line per problem: \(text.output)")
        #expect(lines.first?.hasSuffix("1 problem found.") == true, "\(text.output)")
        #expect(lines.last?.contains("[integrity]") == true, "\(text.output)")
        #expect(lines.last?.contains("truncated") == true, "\(text.output)")

        let (status, report) = try await report(store)
        #expect(status == 2)
        #expect(report.problems.map(\.kind) == ["integrity"])
        #expect(report.problems.first?.repairable == false)
        // Nothing was written to the damaged file.
        #expect(try Data(contentsOf: store) == bytes.prefix(bytes.count / 2))
    }

    // MARK: Repairing

    @Test func repairWithoutATerminalOrYesChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: [.danglingDirector, .missingID])
        let before = try Data(contentsOf: store)

        let result = try await strata(["check", store.path, "--repair"])
        #expect(result.status == 1, "\(result.errorOutput)")
        #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)")
        #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("--yes"), "\(result.errorOutput)")
        #expect(try Data(contentsOf: store) == before)
        #expect(try Self.heatsDirector(in: store).key == 999)
        let (_, report) = try await report(store)
        #expect(Set(report.problems.map(\.kind)) == ["danglingToOne", "missingRequiredValue"])
    }

    @Test func repairWithYesFixesWhatIsRepairableAndLeavesTheRest() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: [.danglingDirector, .missingID])

        let result = try await strata(["check", store.path, "--repair", "--yes"])
        // The missing id needs a person: problems remain.
        #expect(result.status == 2, "\(result.errorOutput)")
        #expect(result.output.contains("Repaired 1 problem (1 row changed); 1 remains."), "\(result.output)")
        let director = try Self.heatsDirector(in: store)
        #expect(director.key == nil && director.entity == nil)
        let (status, report) = try await report(store)
        #expect(status == 2)
        #expect(report.problems.map(\.kind) == ["missingRequiredValue"])
        // Collateral still has no id: the repair touched nothing else.
        let database = try DatabaseQueue(path: store.path)
        defer { try? database.close() }
        let ids = try await database.read { db in
            try Row.fetchAll(db, sql: #"SELECT "title", "id" IS NULL AS "missing" FROM "Movie" ORDER BY "title""#)
                .map { "\($0["title"] as String? ?? "?")=\($0["missing"] as Bool? ?? false)" }
        }
        #expect(ids == ["Collateral=true", "Heat=false", "Ronin=false"])
    }

    @Test func repairWithYesRemovesOrphanedJoinRows() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeShelfStore(in: directory)
        let links = try Self.links(in: store)
        let emma = try Self.deleteEmma(from: store.url)

        let result = try await strata(["check", store.url.path, "--repair", "--yes", "--json"])
        // Nothing remains.
        #expect(result.status == 0, "\(result.errorOutput)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))
        #expect(report.problems.isEmpty)
        #expect(report.repaired?.map(\.kind) == ["orphanedJoinRows"])
        #expect(report.repaired?.first?.count == 2)
        // Exactly Emma's links are gone; the others stay.
        #expect(try Self.links(in: store) == links.filter { $0[0] != emma })
        #expect(try Self.links(in: store).count == 2)
        let again = try await self.report(store.url)
        #expect(again.status == 0)
        #expect(again.report.problems.isEmpty)
    }

    /// A store whose unique index is gone and whose rows break the constraint: the repairable
    /// problems are repaired and the duplicates are left for a person, as the documentation
    /// says ("nothing else is changed").
    /// Opening a store for writing restores its missing indexes, which its duplicates prevent:
    /// the repair refuses with the reason and changes nothing, rather than half-repair.
    @Test func repairRefusesWhileUniquenessViolationsRemain() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: [.danglingDirector, .duplicateID])

        let result = try await strata(["check", store.path, "--repair", "--yes"])
        #expect(result.status == 2, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("resolve the duplicates first"), "\(result.errorOutput)")
        #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)")
        #expect(try Self.heatsDirector(in: store).key == 999)
        let (status, report) = try await report(store)
        #expect(status == 2)
        #expect(Set(report.problems.map(\.kind)) == ["uniquenessViolation", "danglingToOne"])
    }

    @Test func yesWithoutRepairIsAUsageError() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: [.danglingDirector])
        let result = try await strata(["check", store.path, "--yes"])
        #expect(result.status == 64)
        #expect(result.output.isEmpty, "\(result.output)")
        #expect(result.errorOutput.contains("--repair"), "\(result.errorOutput)")
        #expect(try Self.heatsDirector(in: store).key == 999)
    }

    @Test(arguments: ["n", "y"]) func repairAsksAtATerminal(answer: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeMovieStore(in: directory)
        try Self.damage(store, with: [.danglingDirector])
        let before = try Data(contentsOf: store)

        let terminal = try InteractiveStrata(["check", store.path, "--repair"], inTerminal: true)
        try #require(
            try await terminal.waitForOutput { $0.contains("[y/N] ") },
            "no question: \(terminal.outputText.debugDescription)")
        #expect(terminal.outputText.contains("Repair 1 problem (1 row) in \(store.path)? [y/N] "))
        try terminal.write(answer + "\n")
        let status = try await terminal.waitForExit()
        terminal.closeInput()

        if answer == "y" {
            #expect(status == 0, "\(terminal.outputText.debugDescription)")
            #expect(terminal.outputText.contains("Repaired 1 problem (1 row changed); 0 remain."))
            #expect(try Self.heatsDirector(in: store).key == nil)
        } else {
            #expect(status == 2, "\(terminal.outputText.debugDescription)")
            #expect(terminal.outputText.contains("Nothing was changed."), "\(terminal.outputText.debugDescription)")
            #expect(try Data(contentsOf: store) == before)
            #expect(try Self.heatsDirector(in: store).key == 999)
        }
    }
}
