import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata info` run as a person or a script runs it: what kind of store, what it holds, its
/// schema hash and its persistent history.
@Suite(.timeLimit(.minutes(10))) struct InfoCommandTests {
    /// What `info --json` prints.
    struct Report: Decodable {
        struct History: Decodable {
            var transactions: Int64
            var firstTransaction: Int64?
            var lastTransaction: Int64?
            var lastTimestamp: String?
            var lastAuthor: String?
            var lastContextName: String?
        }

        struct EntityCount: Decodable {
            var entity: String
            var objects: Int
        }

        var store: String
        var kind: String
        var fileSize: Int?
        var identifier: String
        var versionHash: String
        var persistentHistory: History?
        var entities: [EntityCount]
    }

    /// A store with `movies` movies, two directors and a critic, saved in one transaction (with
    /// `author`, when history is on); returns the store and the schema hash of its model.
    private static func makeStore(
        in directory: TemporaryDirectory, movies: Int, history: Bool = false, authors: [String] = []
    ) throws -> (url: URL, versionHash: String) {
        let url = directory.file("Info.sqlite")
        let container = try PersistentContainer(
            name: "Info", entities: [Movie.self, Director.self, Critic.self],
            storeDescriptions: [.sqlite(url, persistentHistoryTracking: history)])
        let context = container.newBackgroundContext()
        for name in ["Michael Mann", "John Frankenheimer"] { Director(context: context).name = name }
        Critic(context: context).name = "Pauline K."
        for number in 0..<movies { Movie(context: context).title = "Movie \(number)" }
        try context.save()
        for (number, author) in authors.enumerated() {
            let context = container.newBackgroundContext()
            context.transactionAuthor = TransactionAuthor(author)
            context.name = "\(author) context"
            Movie(context: context).title = "By \(author) \(number)"
            try context.save()
        }
        let hash = container.schema.versionHash
        try container.close()
        return (url, hash)
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// The value after `label` on the listing's line that starts with it.
    private func value(of label: String, in listing: String) -> String? {
        for line in listing.split(separator: "\n") where line.hasPrefix(label + "  ") {
            return line.dropFirst(label.count).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// A date in ISO 8601, with or without a fraction of a second.
    private func date(fromISO8601 text: String) -> Date? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    @Test func listsKindCountsAndVersionHash() async throws {
        let directory = try TemporaryDirectory()
        let (store, hash) = try Self.makeStore(in: directory, movies: 7)
        let before = try Data(contentsOf: store)
        let result = try await strata(["info", store.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
        let listing = result.output
        #expect(value(of: "Store", in: listing) == store.path)
        #expect(value(of: "Kind", in: listing) == "Strata SQLite store")
        #expect(value(of: "Version hash", in: listing) == hash)
        #expect(value(of: "History", in: listing) == "off")
        #expect(value(of: "Size", in: listing)?.hasSuffix("KB") == true, "\(listing)")
        #expect(value(of: "Identifier", in: listing).flatMap(UUID.init(uuidString:)) != nil, "\(listing)")
        // One line per concrete entity with its own objects (not its subentities').
        let counts = listing.split(separator: "\n").filter { $0.hasPrefix("  ") }.map {
            $0.split(separator: " ").map(String.init)
        }
        #expect(
            counts == [["Critic", "1"], ["Director", "2"], ["Movie", "7"], ["Review", "0"]], "\(listing)")
        #expect(listing.contains("Entities (4, 10 objects)"), "\(listing)")
        // No escape sequences on a pipe.
        #expect(!listing.contains("\u{1B}"))
        #expect(try Data(contentsOf: store) == before, "info wrote to the store")
    }

    @Test func jsonDecodesWithTheSameCounts() async throws {
        let directory = try TemporaryDirectory()
        let (store, hash) = try Self.makeStore(in: directory, movies: 12)
        let result = try await strata(["info", store.path, "--json"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))
        #expect(report.kind == "Strata SQLite store")
        #expect(report.store == store.path)
        #expect(report.versionHash == hash)
        #expect(report.persistentHistory == nil)
        let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? NSNumber
        #expect(report.fileSize == size?.intValue)
        #expect(
            Dictionary(uniqueKeysWithValues: report.entities.map { ($0.entity, $0.objects) }) == [
                "Movie": 12, "Director": 2, "Critic": 1, "Review": 0,
            ])
        // The listing and the JSON agree.
        let listing = try await strata(["info", store.path])
        #expect(value(of: "Identifier", in: listing.output) == report.identifier)
    }

    @Test func reportsPersistentHistoryAndTheLastAuthor() async throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.makeStore(in: directory, movies: 3, history: true, authors: ["importer", "editor"])
        let json = try await strata(["info", store.path, "--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.output.utf8))
        let history = try #require(report.persistentHistory, "\(json.output)")
        #expect(history.transactions == 3)
        #expect(history.lastAuthor == "editor")
        #expect(history.lastContextName == "editor context")
        #expect(history.lastTransaction.map { $0 - (history.firstTransaction ?? 0) } == 2)
        // The last transaction happened just now.
        let timestamp = try #require(history.lastTimestamp.flatMap(date(fromISO8601:)), "\(json.output)")
        #expect(abs(timestamp.timeIntervalSinceNow) < 600, "\(json.output)")
        #expect(report.entities.first { $0.entity == "Movie" }?.objects == 5)

        let listing = try await strata(["info", store.path])
        #expect(listing.status == 0, "\(listing.errorOutput)")
        let historyLine = try #require(value(of: "History", in: listing.output), "\(listing.output)")
        #expect(historyLine.hasPrefix("on, 3 transactions"), "\(historyLine)")
        let last = try #require(value(of: "Last transaction", in: listing.output), "\(listing.output)")
        #expect(last.hasSuffix("by editor (editor context)"), "\(last)")
        #expect(last.hasPrefix("#\(history.lastTransaction ?? -1) at "), "\(last)")
    }

    @Test func historyWithoutAnAuthorReportsNone() async throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.makeStore(in: directory, movies: 1, history: true)
        let json = try await strata(["info", store.path, "--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let report = try JSONDecoder().decode(Report.self, from: Data(json.output.utf8))
        #expect(report.persistentHistory?.transactions == 1, "\(json.output)")
        #expect(report.persistentHistory?.lastAuthor == nil)
        let listing = try await strata(["info", store.path])
        let last = value(of: "Last transaction", in: listing.output)
        #expect(last != nil && last?.contains(" by ") == false, "\(listing.output)")
    }
}
