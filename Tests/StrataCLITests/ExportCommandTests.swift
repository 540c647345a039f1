import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata export` run as a person or a script runs it: every format, one entity or all,
/// `--output` files and their failures, and how values are written.
@Suite(.timeLimit(.minutes(10))) struct ExportCommandTests {
    /// More movies than the export holds in memory at a time (a thousand rows).
    static let movieCount = 2345

    /// A store with `movies` movies ("Movie 0", "Movie 1", …, box office 0, 1000, 2000 …),
    /// two directors and a critic.
    private static func makeStore(in directory: TemporaryDirectory, movies: Int) throws -> URL {
        let url = directory.file("Export.sqlite")
        let container = try PersistentContainer(
            name: "Export", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        for name in ["Michael Mann", "John Frankenheimer"] { Director(context: context).name = name }
        Critic(context: context).name = "Pauline K."
        for number in 0..<movies {
            let movie = Movie(context: context)
            movie.title = "Movie \(number)"
            movie.boxOffice = Decimal(number * 1000)
        }
        try context.save()
        try container.close()
        return url
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// Each line of NDJSON as a dictionary.
    private func objects(inLines text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    private func integer(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value
    }

    /// The names in `directory`, hidden ones included.
    private func contents(of directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    /// Checks a failure: status 1, nothing on standard output, one "strata: error:" line.
    private func expectOneLineFailure(
        _ result: (status: Int32, output: String, errorOutput: String), sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.output.isEmpty, "\(result.output.prefix(300))", sourceLocation: sourceLocation)
        #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(!result.errorOutput.contains("Fatal error"), sourceLocation: sourceLocation)
    }

    // MARK: Formats

    @Test func ndjsonHasOneLinePerObject() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: Self.movieCount)
        let result = try await strata(["export", store.path, "--entity", "Movie"])
        #expect(result.status == 0, "\(result.errorOutput)")
        // No progress bar when standard error is not a terminal.
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == Self.movieCount + 1 && lines.last == "", "\(lines.count) lines")
        let rows = try objects(inLines: result.output)
        #expect(rows.count == Self.movieCount)
        let ids = rows.compactMap { integer($0["_id"]) }
        #expect(ids.count == Self.movieCount)
        #expect(Set(ids).count == Self.movieCount, "_id values repeat")
        #expect(ids == ids.sorted(), "not in primary-key order")
        #expect(Set(rows.compactMap { $0["title"] as? String }) == Set((0..<Self.movieCount).map { "Movie \($0)" }))
        // One entity without subentities: no _entity.
        #expect(rows.allSatisfy { $0["_entity"] == nil })
        #expect(Set(rows.first?.keys.map { $0 } ?? []) == ["_id", "id", "title", "releaseDate", "boxOffice", "genres", "director"])
    }

    @Test func jsonIsOneArray() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: Self.movieCount)
        let result = try await strata(["export", store.path, "-e", "Movie", "--format", "json"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
        let array = try #require(parsed as? [[String: Any]])
        #expect(array.count == Self.movieCount)
        #expect(Set(array.compactMap { integer($0["_id"]) }).count == Self.movieCount)
        let first = try #require(array.first)
        #expect(first["title"] as? String == "Movie 0")
        #expect(integer(first["boxOffice"]) == 0)
        #expect(integer(array.last?["boxOffice"]) == Int64((Self.movieCount - 1) * 1000))
    }

    @Test func everyEntityWithoutEntityOption() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 5)
        let result = try await strata(["export", store.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        let rows = try objects(inLines: result.output)
        #expect(rows.count == 8)
        #expect(rows.allSatisfy { $0["_entity"] is String }, "a line without _entity")
        var counts: [String: Int] = [:]
        for row in rows { counts[row["_entity"] as? String ?? "?", default: 0] += 1 }
        #expect(counts == ["Movie": 5, "Director": 2, "Critic": 1])
        // Each subentity's rows carry its own attributes.
        #expect(rows.contains { $0["_entity"] as? String == "Critic" && $0["name"] as? String == "Pauline K." })

        // JSON: one array per entity, keyed by name.
        let json = try await strata(["export", store.path, "--format", "json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8))
        let byEntity = try #require(parsed as? [String: [[String: Any]]], "\(json.output.prefix(300))")
        #expect(byEntity.mapValues(\.count) == ["Movie": 5, "Person": 3, "Review": 0])
        #expect(Set(byEntity["Person"]?.compactMap { $0["_entity"] as? String } ?? []) == ["Director", "Critic"])
    }

    @Test func csvHasAHeaderAndOneLinePerObject() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 3)
        let result = try await strata(["export", store.path, "--entity", "Movie", "--format", "csv"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.components(separatedBy: "\r\n")
        #expect(lines.first == "_id,id,title,releaseDate,boxOffice,genres,director")
        #expect(lines.count == 5 && lines.last == "", "\(result.output.debugDescription)")
        #expect(lines.dropFirst().first?.contains(",Movie 0,,0,") == true, "\(result.output.debugDescription)")
    }

    @Test func csvOfEveryEntityFails() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 3)
        let result = try await strata(["export", store.path, "--format", "csv"])
        expectOneLineFailure(result)
        #expect(result.errorOutput.contains("--entity"), "\(result.errorOutput)")
        let two = try await strata(["export", store.path, "--format", "csv", "-e", "Movie", "-e", "Person"])
        expectOneLineFailure(two)
    }

    // MARK: Files

    @Test func outputWritesTheFileAndSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 4)
        let file = directory.file("everything.ndjson")
        let result = try await strata(["export", store.path, "--output", file.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.isEmpty, "data went to standard output: \(result.output)")
        #expect(result.errorOutput == "Exported 7 objects to \(file.path).\n", "\(result.errorOutput)")
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(try objects(inLines: written).count == 7)
        // Nothing else is left beside the file.
        #expect(try contents(of: directory.url).filter { !$0.hasPrefix("Export.sqlite") } == ["everything.ndjson"])

        // An existing file is replaced.
        let again = try await strata(["export", store.path, "-e", "Director", "-o", file.path, "--format", "json"])
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(again.errorOutput == "Exported 2 objects to \(file.path).\n", "\(again.errorOutput)")
        let parsed = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        #expect((parsed as? [Any])?.count == 2)

        // Thousands are grouped.
        let manyDirectory = try TemporaryDirectory()
        let many = try Self.makeStore(in: manyDirectory, movies: Self.movieCount)
        let big = manyDirectory.file("movies.csv")
        let bigResult = try await strata(["export", many.path, "-e", "Movie", "--format", "csv", "-o", big.path])
        #expect(bigResult.status == 0, "\(bigResult.errorOutput)")
        #expect(bigResult.errorOutput == "Exported 2,345 objects to \(big.path).\n", "\(bigResult.errorOutput)")
        let csv = try String(contentsOf: big, encoding: .utf8)
        #expect(csv.components(separatedBy: "\r\n").count == Self.movieCount + 2)
    }

    /// Output paths that cannot be written.
    enum UnwritablePath: String, CaseIterable, Sendable {
        case inProc, missingFolder, directory
    }

    @Test(arguments: UnwritablePath.allCases) func anUnwritableOutputFailsAndLeavesNothing(_ kind: UnwritablePath) async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 3)
        let target: URL =
            switch kind {
            case .inProc: URL(fileURLWithPath: "/proc/nope/x.json")
            case .missingFolder: directory.file("missing").appendingPathComponent("x.json")
            case .directory: directory.url
            }
        let before = try contents(of: directory.url)
        let storeBefore = try Data(contentsOf: store)
        let result = try await strata(["export", store.path, "--format", "json", "--output", target.path])
        expectOneLineFailure(result)
        #expect(result.errorOutput.contains(target.path), "\(result.errorOutput)")
        #expect(try contents(of: directory.url) == before, "files left behind")
        if kind != .directory { #expect(!FileManager.default.fileExists(atPath: target.path)) }
        #expect(try Data(contentsOf: store) == storeBefore)
    }

    @Test func aFailedExportLeavesAnExistingFileAlone() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 3)
        let file = directory.file("movies.json")
        try Data("previous export\n".utf8).write(to: file)
        let result = try await strata(["export", store.path, "-e", "Movie", "--where", "nope == 1", "-o", file.path])
        expectOneLineFailure(result)
        #expect(try String(contentsOf: file, encoding: .utf8) == "previous export\n")
        #expect(try contents(of: directory.url).filter { !$0.hasPrefix("Export.sqlite") } == ["movies.json"])
    }

    // MARK: Values

    @Test func valuesHaveOneEncodingEach() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Values.sqlite")
        let id = try #require(UUID(uuidString: "8C55D0FA-64DB-4DFC-B452-0D69976D2B0A"))
        do {
            let container = try PersistentContainer(
                name: "Export", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            let movie = Movie(context: context)
            movie.id = id
            movie.title = "Heat"
            movie.boxOffice = try #require(Decimal(string: "12.345"))
            // 2026-11-27T10:00:00.25Z
            movie.releaseDate = Date(timeIntervalSince1970: 1_795_773_600.25)
            movie.genres = ["crime", "drama"]
            let undated = Movie(context: context)
            undated.title = "Undated"
            Critic(context: context).name = "Anonymous"
            try context.save()
            try container.close()
        }
        let result = try await strata(["export", url.path, "--entity", "Movie"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(result.output)")
        #expect(lines[0].contains(#""boxOffice":12.345,"#), "\(lines[0])")
        #expect(lines[0].contains(#""releaseDate":"2026-11-27T10:00:00.25Z""#), "\(lines[0])")
        #expect(lines[0].contains(#""id":"8C55D0FA-64DB-4DFC-B452-0D69976D2B0A""#), "\(lines[0])")
        #expect(lines[0].contains(#""genres":["crime","drama"]"#), "\(lines[0])")
        #expect(lines[0].contains(#""director":null"#), "\(lines[0])")
        #expect(lines[1].contains(#""releaseDate":null"#), "\(lines[1])")
        let rows = try objects(inLines: result.output)
        #expect(rows[1]["releaseDate"] is NSNull)
        #expect(rows[1]["title"] as? String == "Undated")

        let critic = try await strata(["export", url.path, "--entity", "Critic"])
        #expect(critic.status == 0, "\(critic.errorOutput)")
        #expect(critic.output.contains(#""outlet":null"#), "\(critic.output)")
        #expect(critic.output.contains(#""born":null"#), "\(critic.output)")

        // CSV: the same text, null as an empty field.
        let csv = try await strata(["export", url.path, "--entity", "Movie", "--format", "csv"])
        #expect(csv.status == 0, "\(csv.errorOutput)")
        let csvLines = csv.output.components(separatedBy: "\r\n")
        #expect(csvLines.count == 4, "\(csv.output.debugDescription)")
        #expect(
            csvLines.dropFirst().first?.hasSuffix(
                #",8C55D0FA-64DB-4DFC-B452-0D69976D2B0A,Heat,2026-11-27T10:00:00.25Z,12.345,"[""crime"",""drama""]","#)
                == true, "\(csv.output.debugDescription)")
        #expect(csvLines.dropFirst(2).first?.contains(",Undated,,0,") == true, "\(csv.output.debugDescription)")
    }

    @Test func whereExportsOnlyMatchingObjects() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory, movies: 10)
        let result = try await strata(["export", store.path, "--entity", "Movie", "--where", "boxOffice >= 7000"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let titles = try objects(inLines: result.output).compactMap { $0["title"] as? String }
        #expect(titles == ["Movie 7", "Movie 8", "Movie 9"])
        let people = try await strata(["export", store.path, "-e", "Person", "-w", #"name BEGINSWITH "Michael""#])
        #expect(people.status == 0, "\(people.errorOutput)")
        #expect(try objects(inLines: people.output).map { $0["name"] as? String } == ["Michael Mann"])

        // --where needs one --entity: a usage error.
        let without = try await strata(["export", store.path, "--where", "boxOffice >= 7000"])
        #expect(without.status == 64, "\(without.errorOutput)")
        #expect(without.output.isEmpty)
        // A bad predicate: one line.
        let bad = try await strata(["export", store.path, "-e", "Movie", "--where", "boxOffice >="])
        expectOneLineFailure(bad)
    }
}
