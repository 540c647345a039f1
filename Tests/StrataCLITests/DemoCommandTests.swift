import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

@Suite struct DemoCommandTests {
    @Test func demoPrintsTheSampleSchemaAndObjects() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Demo.sqlite")
        var output = ""
        try await DemoCommand.run(storeURL: store, into: &output)
        #expect(output.contains("entity Movie"))
        #expect(output.contains("entity Director : Person"))
        #expect(output.contains("reviews -> Review (to-many, inverse movie, cascade)"))
        #expect(output.contains("Heat directed by Michael Mann, 1 review(s)"))
        #expect(output.contains("typeMismatch"))
        #expect(output.contains("Did you mean 'title'?"))
        #expect(output.contains("valueTooLarge"))
        #expect(output.contains("\"title\":\"Heat\""))
        #expect(output.contains("saved 3 movies, 6 reviews and 3 people"))
        #expect(output.contains("- Heat (1995) by Michael Mann, box office $187436818, reviews: 5, 4"))
        #expect(output.contains("- Ronin (1998) by John Frankenheimer"))
        #expect(output.contains("6 reviews in all"))
        #expect(output.contains(#"\.director?.name == "Michael Mann" -> ["Collateral", "Heat"]"#))
        #expect(output.contains(#"Review \.movie?.director?.name == "Michael Mann" -> 3 reviews of ["Collateral", "Heat"]"#))
        #expect(output.contains(#"title BEGINSWITH[c] %@ -> ["Heat"]"#))
        #expect(output.contains(#"{ $0.boxOffice > 100_000_000 } -> ["Collateral", "Heat"]"#))
        #expect(output.contains(#"title ==[cd] "RÖNIN" -> ["Ronin"]"#))
        #expect(output.contains("invalidPredicate at offset 21"))
        #expect(output.contains("total box office $479068093, average review 4.17 stars"))
        #expect(output.contains(#""Michael Mann": 2 movie(s), $408375992"#))
        #expect(output.contains(#"after a background insert:  ["Collateral", "Heat", "Ronin", "Thief"]"#))
        #expect(output.contains(#"after a background delete:  ["Collateral", "Heat", "Ronin"]"#))

        var second = ""
        try await DemoCommand.run(storeURL: store, into: &second)
        #expect(second.contains("already holds the demo's movies"))
        #expect(second.contains("6 reviews in all"))
        #expect(second.contains(#"after a background delete:  ["Collateral", "Heat", "Ronin"]"#))
    }

    @Test func demoRunsOnPostgreSQL() async throws {
        let schema = "demo_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let url = try PostgresTestServer.url(schema: schema)
        let (description, location) = try DemoCommand.storeDescription(for: url)
        #expect(location.hasPrefix("A PostgreSQL store at postgres://"))
        #expect(!location.contains(try #require(URLComponents(string: url)?.password)))
        var output = ""
        try await DemoCommand.run(store: description, location: location, into: &output)
        #expect(output.contains("saved 3 movies, 6 reviews and 3 people"))
        #expect(output.contains("- Heat (1995) by Michael Mann, box office $187436818, reviews: 5, 4"))
        #expect(output.contains(#"title ==[cd] "RÖNIN" -> ["Ronin"]"#))
        #expect(output.contains("total box office $479068093, average review 4.17 stars"))
        #expect(output.contains(#""Michael Mann": 2 movie(s), $408375992"#))
        #expect(output.contains(#"after a background delete:  ["Collateral", "Heat", "Ronin"]"#))
        var second = ""
        try await DemoCommand.run(store: description, location: location, into: &second)
        #expect(second.contains("already holds the demo's movies"))
    }

    @Test func demoModelIsValid() throws {
        let schema = try Schema([Movie.self, Director.self, Critic.self])
        #expect(schema.entity(named: "Person")?.subentityNames.sorted() == ["Critic", "Director"])
        #expect(schema.warnings.isEmpty)
    }
}
