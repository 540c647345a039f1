import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata query` run as a person or a script runs it: formats, predicates, sorting, paging,
/// selections, aggregates, subentities, errors and colour.
@Suite(.timeLimit(.minutes(10))) struct QueryCommandTests {
    /// A title that CSV must quote: it holds a comma and a quote, and sorts after the others
    /// unless case is ignored.
    static let oddTitle = #"heist, the "big" one"#

    /// Four movies (three by two directors, one with no director, no release date and a
    /// fractional box office) and a critic.
    private static func makeStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Movies.sqlite")
        let container = try PersistentContainer(
            name: "Query", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let mann = Director(context: context)
        mann.name = "Michael Mann"
        mann.awards = 2
        let frankenheimer = Director(context: context)
        frankenheimer.name = "John Frankenheimer"
        let critic = Critic(context: context)
        critic.name = "Pauline K."
        critic.outlet = "The Weekly"
        let movies: [(String, Director?, String?, String)] = [
            ("Heat", mann, "1995-12-15T00:00:00Z", "187436818"),
            ("Collateral", mann, "2004-08-06T00:00:00Z", "220939174"),
            ("Ronin", frankenheimer, "1998-09-25T00:00:00Z", "70692101"),
            (oddTitle, nil, nil, "12.345"),
        ]
        for (title, director, released, gross) in movies {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
            movie.releaseDate = try released.map { try #require(ISO8601DateFormatter().date(from: $0)) }
            movie.boxOffice = try #require(Decimal(string: gross))
        }
        try context.save()
        try container.close()
        return url
    }

    /// Runs `strata` off the cooperative pool (it blocks while the child runs).
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

    /// The `title` of each NDJSON line.
    private func titles(inLines text: String) throws -> [String] {
        try objects(inLines: text).map { try #require($0["title"] as? String) }
    }

    /// An integer JSON value.
    private func integer(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value
    }

    // MARK: Formats

    @Test func printsNDJSONWhenPiped() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty)
        #expect(result.output.hasSuffix("\n"))
        let rows = try objects(inLines: result.output)
        #expect(rows.count == 4)
        let expectedKeys: Set<String> = ["_id", "id", "title", "releaseDate", "boxOffice", "genres", "director"]
        for row in rows { #expect(Set(row.keys) == expectedKeys) }
        let byTitle = Dictionary(uniqueKeysWithValues: rows.map { (($0["title"] as? String) ?? "", $0) })
        let heat = try #require(byTitle["Heat"])
        #expect(integer(heat["boxOffice"]) == 187_436_818)
        #expect(heat["releaseDate"] as? String == "1995-12-15T00:00:00Z")
        #expect((heat["id"] as? String).flatMap(UUID.init(uuidString:)) != nil)
        #expect(heat["genres"] as? [String] == [])
        // The director column holds the id of the person.
        let collateral = try #require(byTitle["Collateral"])
        let ronin = try #require(byTitle["Ronin"])
        #expect(integer(heat["director"]) != nil)
        #expect(integer(heat["director"]) == integer(collateral["director"]))
        #expect(integer(heat["director"]) != integer(ronin["director"]))
        let odd = try #require(byTitle[Self.oddTitle])
        #expect(odd["director"] is NSNull)
        #expect(odd["releaseDate"] is NSNull)
        // Ids are unique and increasing (primary-key order without --sort).
        let ids = rows.compactMap { integer($0["_id"]) }
        #expect(ids.count == 4 && ids == ids.sorted() && Set(ids).count == 4)
        #expect(rows.map { $0["title"] as? String } == ["Heat", "Collateral", "Ronin", Self.oddTitle])
    }

    @Test func tableFormatAlignsColumns() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata([
            "query", store.path, "Movie", "--format", "table", "--select", "title,boxOffice", "--sort", "title",
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count == 7, "\(result.output)")  // header, rule, four rows, final newline
        #expect(lines[6].isEmpty)
        // The rule under the header gives each column's width.
        let widths = lines[1].split(separator: " ", omittingEmptySubsequences: true).map(\.count)
        #expect(lines[1].allSatisfy { $0 == "─" || $0 == " " })
        #expect(widths == [Self.oddTitle.count, "boxOffice".count])
        // No escape sequences when standard output is a pipe.
        #expect(!result.output.contains("\u{1B}"))
        /// Column `index` of `line`, padded.
        func cell(_ line: String, _ index: Int) -> String {
            let start = widths[..<index].reduce(0, +) + 2 * index
            let characters = Array(line)
            guard start < characters.count else { return "" }
            return String(characters[start..<min(characters.count, start + widths[index])])
        }
        #expect(cell(lines[0], 0) == "title" + String(repeating: " ", count: widths[0] - 5))
        let expected: [(String, String)] = [
            ("Collateral", "220939174"), ("Heat", "187436818"), ("Ronin", "70692101"), (Self.oddTitle, "12.345"),
        ]
        for (line, (title, gross)) in zip(lines[2...5], expected) {
            // Text is left-aligned, numbers right-aligned, each in its column.
            #expect(cell(line, 0) == title + String(repeating: " ", count: widths[0] - title.count), "\(line)")
            #expect(cell(line, 1) == String(repeating: " ", count: widths[1] - gross.count) + gross, "\(line)")
            #expect(line.count == widths[0] + 2 + widths[1], "\(line)")
        }
    }

    @Test func printsATableOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await offThePool {
            try runInTerminal(["query", store.path, "Movie", "--select", "title", "--sort", "title"])
        }
        #expect(result.status == 0, "\(result.terminal)")
        let lines = result.terminal.components(separatedBy: "\r\n").map(stripEscapes)
        #expect(lines.first == "title", "\(result.terminal)")
        #expect(lines.dropFirst().first?.hasPrefix("───") == true)
        #expect(Array(lines.dropFirst(2).prefix(4)) == ["Collateral", "Heat", "Ronin", Self.oddTitle])
        #expect(!result.terminal.contains("{\""))
    }

    @Test func noColorLeavesOutEscapeSequences() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await offThePool {
            try runInTerminal(["query", store.path, "Movie"], environment: ["NO_COLOR": "1"])
        }
        #expect(result.status == 0, "\(result.terminal)")
        #expect(result.terminal.contains("───"), "not a table: \(result.terminal)")
        #expect(result.terminal.contains("Collateral"))
        #expect(!result.terminal.contains("\u{1B}["), "\(result.terminal.debugDescription)")
    }

    @Test func headerIsBoldOnATerminal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await offThePool {
            try runInTerminal(["query", store.path, "Movie", "--select", "title"], environment: ["NO_COLOR": nil])
        }
        #expect(result.status == 0, "\(result.terminal)")
        #expect(result.terminal.hasPrefix("\u{1B}[1mtitle\u{1B}[0m"), "\(result.terminal.debugDescription)")
        // Only the header is styled: the rows are plain.
        #expect(result.terminal.contains("\r\nHeat\r\n"), "\(result.terminal.debugDescription)")
    }

    @Test func jsonPrintsOneArray() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        for flags in [["--json"], ["--format", "json"]] {
            let result = try await strata(["query", store.path, "Movie", "--sort", "title"] + flags)
            #expect(result.status == 0, "\(result.errorOutput)")
            let parsed = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
            let array = try #require(parsed as? [[String: Any]], "\(result.output)")
            #expect(array.map { $0["title"] as? String } == ["Collateral", "Heat", "Ronin", Self.oddTitle])
            #expect(array.first.map { integer($0["boxOffice"]) } == 220_939_174)
        }
        // No rows: still an array.
        let empty = try await strata(["query", store.path, "Movie", "--json", "--where", "title == \"Thief\""])
        #expect(empty.status == 0, "\(empty.errorOutput)")
        let parsed = try JSONSerialization.jsonObject(with: Data(empty.output.utf8))
        #expect((parsed as? [Any])?.isEmpty == true, "\(empty.output)")
    }

    @Test func csvHasAHeaderAndQuotesFields() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie", "--csv", "--select", "title,boxOffice", "--sort", "title"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(
            result.output.components(separatedBy: "\r\n") == [
                "title,boxOffice",
                "Collateral,220939174",
                "Heat,187436818",
                "Ronin,70692101",
                #""heist, the ""big"" one",12.345"#,
                "",
            ], "\(result.output.debugDescription)")

        // Every column by default, null as an empty field.
        let all = try await strata(["query", store.path, "Movie", "--format", "csv", "--where", "director == nil"])
        #expect(all.status == 0, "\(all.errorOutput)")
        let lines = all.output.components(separatedBy: "\r\n")
        #expect(lines.first == "_id,id,title,releaseDate,boxOffice,genres,director")
        #expect(lines.count == 3, "\(all.output.debugDescription)")
        let fields = lines.count > 1 ? lines[1] : ""
        #expect(fields.contains(#","heist, the ""big"" one",,12.345,"#), "\(fields)")
        #expect(fields.hasSuffix(","), "no director: an empty last field: \(fields)")
    }

    // MARK: Predicates, sorting, paging, selections

    @Test func whereBeginsWithIgnoringCase() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let ignoringCase = try await strata([
            "query", store.path, "Movie", "--where", #"title BEGINSWITH[c] "he""#, "--sort", "title",
        ])
        #expect(ignoringCase.status == 0, "\(ignoringCase.errorOutput)")
        #expect(try titles(inLines: ignoringCase.output) == ["Heat", Self.oddTitle])
        let exact = try await strata(["query", store.path, "Movie", "--where", #"title BEGINSWITH "he""#])
        #expect(exact.status == 0, "\(exact.errorOutput)")
        #expect(try titles(inLines: exact.output) == [Self.oddTitle])
    }

    @Test func whereFollowsARelationship() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata([
            "query", store.path, "Movie", "-w", #"director.name == "Michael Mann""#, "--sort", "-releaseDate",
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(try titles(inLines: result.output) == ["Collateral", "Heat"])
        let numbers = try await strata(["query", store.path, "Movie", "--where", "boxOffice > 100000000", "--sort", "title"])
        #expect(numbers.status == 0, "\(numbers.errorOutput)")
        #expect(try titles(inLines: numbers.output) == ["Collateral", "Heat"])
    }

    @Test func sortsDescending() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie", "--sort", "-title"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(try titles(inLines: result.output) == [Self.oddTitle, "Ronin", "Heat", "Collateral"])
    }

    @Test func sortsIgnoringCase() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let plain = try await strata(["query", store.path, "Movie", "--sort", "title"])
        #expect(plain.status == 0, "\(plain.errorOutput)")
        #expect(try titles(inLines: plain.output) == ["Collateral", "Heat", "Ronin", Self.oddTitle])
        let folded = try await strata(["query", store.path, "Movie", "--sort", "title[c]"])
        #expect(folded.status == 0, "\(folded.errorOutput)")
        #expect(try titles(inLines: folded.output) == ["Collateral", "Heat", Self.oddTitle, "Ronin"])
    }

    @Test func sortsByADecimal() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie", "--sort", "boxOffice"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(try titles(inLines: result.output) == [Self.oddTitle, "Ronin", "Heat", "Collateral"])
    }

    @Test func limitAndOffsetPage() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let first = try await strata(["query", store.path, "Movie", "--sort", "title", "--limit", "2"])
        #expect(first.status == 0, "\(first.errorOutput)")
        #expect(try titles(inLines: first.output) == ["Collateral", "Heat"])
        let second = try await strata(["query", store.path, "Movie", "--sort", "title", "-n", "2", "--offset", "1"])
        #expect(second.status == 0, "\(second.errorOutput)")
        #expect(try titles(inLines: second.output) == ["Heat", "Ronin"])
        let past = try await strata(["query", store.path, "Movie", "--sort", "title", "--offset", "4"])
        #expect(past.status == 0, "\(past.errorOutput)")
        #expect(past.output.isEmpty)
    }

    @Test func selectShowsOnlyTheNamedKeys() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie", "--select", "title,director.name", "--sort", "title"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let rows = try objects(inLines: result.output)
        #expect(rows.count == 4)
        for row in rows.prefix(3) { #expect(Set(row.keys) == ["title", "director.name"]) }
        #expect(rows.map { $0["director.name"] as? String } == ["Michael Mann", "Michael Mann", "John Frankenheimer", nil])
        // The key order is the order asked for.
        #expect(result.output.split(separator: "\n").first == #"{"title":"Collateral","director.name":"Michael Mann"}"#)
    }

    // MARK: Aggregates

    @Test func countsWithAndWithoutAPredicate() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let all = try await strata(["query", store.path, "Movie", "--count"])
        #expect(all.status == 0, "\(all.errorOutput)")
        #expect(all.output == "{\"count\":4}\n")
        let mann = try await strata(["query", store.path, "Movie", "--count", "--where", #"director.name == "Michael Mann""#])
        #expect(mann.status == 0, "\(mann.errorOutput)")
        #expect(mann.output == "{\"count\":2}\n")
        let none = try await strata(["query", store.path, "Movie", "--count", "--where", #"title == "Thief""#])
        #expect(none.status == 0, "\(none.errorOutput)")
        #expect(none.output == "{\"count\":0}\n")
    }

    @Test func sumAverageMinimumAndMaximum() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata([
            "query", store.path, "Movie", "--sum", "boxOffice", "--avg", "boxOffice", "--min", "boxOffice", "--max",
            "boxOffice",
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        let rows = try objects(inLines: result.output)
        try #require(rows.count == 1, "\(result.output)")
        #expect(Set(rows[0].keys) == ["sum(boxOffice)", "avg(boxOffice)", "min(boxOffice)", "max(boxOffice)"])
        // Decimals are summed exactly: 187436818 + 220939174 + 70692101 + 12.345.
        #expect(result.output.contains(#""sum(boxOffice)":479068105.345,"#), "\(result.output)")
        #expect(result.output.contains(#""min(boxOffice)":12.345"#), "\(result.output)")
        #expect(result.output.contains(#""max(boxOffice)":220939174"#), "\(result.output)")
        let average = try #require((rows[0]["avg(boxOffice)"] as? NSNumber)?.doubleValue)
        #expect(abs(average - 119_767_026.336_25) < 0.001, "\(result.output)")

        // With a predicate: the aggregates of the matching objects.
        let mann = try await strata([
            "query", store.path, "Movie", "--sum", "boxOffice", "--where", #"director.name == "Michael Mann""#,
        ])
        #expect(mann.status == 0, "\(mann.errorOutput)")
        #expect(mann.output == "{\"sum(boxOffice)\":408375992}\n")
    }

    /// Group rows keyed by director name ("" for the group without a director).
    private func groups(_ text: String, value key: String) throws -> [String: String] {
        var groups: [String: String] = [:]
        for row in try objects(inLines: text) {
            #expect(Set(row.keys) == ["director.name", key], "\(row)")
            let name = row["director.name"] as? String ?? ""
            groups[name] = (row[key] as? NSNumber)?.description ?? "?"
        }
        return groups
    }

    @Test func groupsByARelationshipKeyPathWithCounts() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Movie", "--group-by", "director.name", "--count"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.split(separator: "\n").count == 3, "\(result.output)")
        let counted = try groups(result.output, value: "count")
        #expect(counted == ["Michael Mann": "2", "John Frankenheimer": "1", "": "1"], "\(result.output)")
        // Without an aggregate, a group shows its count too.
        let bare = try await strata(["query", store.path, "Movie", "--group-by", "director.name"])
        #expect(bare.status == 0, "\(bare.errorOutput)")
        #expect(try groups(bare.output, value: "count") == counted)
    }

    @Test func groupsByARelationshipKeyPathWithSums() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata([
            "query", store.path, "Movie", "--group-by", "director.name", "--sum", "boxOffice", "--sort", "director.name",
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.output)")
        #expect(lines.contains(#"{"director.name":"Michael Mann","sum(boxOffice)":408375992}"#), "\(result.output)")
        #expect(lines.contains(#"{"director.name":"John Frankenheimer","sum(boxOffice)":70692101}"#), "\(result.output)")
        #expect(lines.contains { $0.contains(#""sum(boxOffice)":12.345"#) }, "\(result.output)")
        // Sorted by the group key: John before Michael.
        let named = lines.filter { $0.contains("Michael Mann") || $0.contains("John Frankenheimer") }
        #expect(named.first?.contains("John Frankenheimer") == true, "\(result.output)")
    }

    // MARK: Subentities

    @Test func anEntityIncludesItsSubentities() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let result = try await strata(["query", store.path, "Person", "--sort", "name"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let rows = try objects(inLines: result.output)
        #expect(rows.map { $0["name"] as? String } == ["John Frankenheimer", "Michael Mann", "Pauline K."])
        #expect(rows.map { $0["_entity"] as? String } == ["Director", "Director", "Critic"])
        // Each row has its own entity's attributes.
        #expect(rows.count == 3 && integer(rows[1]["awards"]) == 2)
        #expect(rows.count == 3 && rows[2]["outlet"] as? String == "The Weekly")
        #expect(rows.count == 3 && rows[2]["awards"] == nil)
        let count = try await strata(["query", store.path, "Person", "--count"])
        #expect(count.output == "{\"count\":3}\n", "\(count.errorOutput)")
    }

    @Test func excludingSubentitiesLeavesThemOut() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        // Person is abstract: without its subentities it has no objects.
        let people = try await strata(["query", store.path, "Person", "--excluding-subentities"])
        #expect(people.status == 0, "\(people.errorOutput)")
        #expect(people.output.isEmpty, "\(people.output)")
        let count = try await strata(["query", store.path, "Person", "--count", "--excluding-subentities"])
        #expect(count.status == 0, "\(count.errorOutput)")
        #expect(count.output == "{\"count\":0}\n")
        let directors = try await strata(["query", store.path, "Director", "--count", "--excluding-subentities"])
        #expect(directors.output == "{\"count\":2}\n", "\(directors.errorOutput)")
    }

    // MARK: Errors

    /// A query that fails, and what its message must say.
    struct FailingQuery: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var messageFragments: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let failingQueries: [FailingQuery] = [
        // Bad syntax: the message names where the problem is.
        FailingQuery(arguments: ["Movie", "--where", "title == "], messageFragments: ["offset"]),
        FailingQuery(arguments: ["Movie", "--where", #"title BEGINSWITH[c] "he" AND"#], messageFragments: ["offset"]),
        FailingQuery(arguments: ["Movie", "--where", #"tittle == "Heat""#], messageFragments: ["Did you mean 'title'"]),
        FailingQuery(
            arguments: ["Movie", "--where", #"director.nmae == "Michael Mann""#], messageFragments: ["nmae", "Did you mean 'name'"]),
        FailingQuery(arguments: ["Movi"], messageFragments: ["Movi", "Did you mean 'Movie'"]),
        FailingQuery(arguments: ["Movie", "--sort", "nope"], messageFragments: ["nope"]),
        FailingQuery(arguments: ["Movie", "--sum", "title"], messageFragments: ["title"]),
    ]

    @Test(arguments: failingQueries) func aBadQueryFailsWithOneLine(_ query: FailingQuery) async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(in: directory)
        let before = try Data(contentsOf: store)
        let result = try await strata(["query", store.path] + query.arguments)
        #expect(result.status == 1, "\(result.errorOutput)")
        #expect(result.output.isEmpty, "\(result.output)")
        let lines = result.errorOutput.split(separator: "\n")
        #expect(lines.count == 1, "\(result.errorOutput)")
        #expect(result.errorOutput.hasPrefix("strata: error: "), "\(result.errorOutput)")
        for fragment in query.messageFragments {
            #expect(result.errorOutput.contains(fragment), "no “\(fragment)” in \(result.errorOutput)")
        }
        #expect(try Data(contentsOf: store) == before)
    }
}

/// `strata` on a pseudo-terminal, as ``runStrataInTerminal(_:)`` runs it, with `environment`
/// changed: a `nil` value removes the variable.
private func runInTerminal(
    _ arguments: [String], environment changes: [String: String?] = [:]
) throws -> (status: Int32, terminal: String) {
    let executable = try #require(
        StrataExecutable.locate(), "no `strata` next to the tests in \(StrataExecutable.candidateFolders())")
    func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let command = ([executable.path] + arguments).map(quoted).joined(separator: " ")
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    child.arguments = ["-qec", command, "/dev/null"]
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm"
    environment["NO_COLOR"] = nil
    for (name, value) in changes { environment[name] = value }
    child.environment = environment
    let outputPipe = Pipe()
    child.standardOutput = outputPipe
    child.standardError = FileHandle.nullDevice
    child.standardInput = FileHandle.nullDevice
    try child.run()
    let output = outputPipe.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    return (child.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// `text` without ANSI escape sequences (CSI … letter).
private func stripEscapes(_ text: String) -> String {
    text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*[A-Za-z]", with: "", options: .regularExpression)
}

extension QueryCommandTests {
    /// A table holds its rows to align them: it shows 10,000 and says how many it left out.
    @Test func aLongTableSaysWhatItLeftOut() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("Many.sqlite")
        let container = try PersistentContainer(
            name: "Query", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(store)])
        try container.close()
        let file = directory.file("many.ndjson")
        let lines = (1...10_005).map { #"{"id":"\#(UUID())","title":"Movie \#($0)","genres":[]}"# }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let imported = try await strata(["import", store.path, file.path, "--entity", "Movie"])
        #expect(imported.status == 0, "\(imported.errorOutput)")

        let table = try await strata(["query", store.path, "Movie", "--select", "title", "--format", "table"])
        #expect(table.status == 0, "\(table.errorOutput)")
        let shown = table.output.split(separator: "\n")
        #expect(shown.count == 2 + 10_000 + 1)  // header, rule, rows, the note
        #expect(shown.last?.contains("… and 5 more rows not shown") == true, "\(shown.last ?? "")")
        let all = try await strata(["query", store.path, "Movie", "--select", "title"])
        #expect(all.output.split(separator: "\n").count == 10_005)
    }
}
