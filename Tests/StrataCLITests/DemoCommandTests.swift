import Foundation
import Strata
import Testing

@testable import StrataCLI

@Suite struct DemoCommandTests {
    @Test func demoPrintsTheSampleSchemaAndObjects() throws {
        var output = ""
        try DemoCommand.run(into: &output)
        #expect(output.contains("entity Movie"))
        #expect(output.contains("entity Director : Person"))
        #expect(output.contains("reviews -> Review (to-many, inverse movie, cascade)"))
        #expect(output.contains("Heat directed by Michael Mann, 1 review(s)"))
        #expect(output.contains("typeMismatch"))
        #expect(output.contains("Did you mean 'title'?"))
        #expect(output.contains("valueTooLarge"))
        #expect(output.contains("\"title\":\"Heat\""))
    }

    @Test func demoModelIsValid() throws {
        let schema = try Schema([Movie.self, Director.self, Critic.self])
        #expect(schema.entity(named: "Person")?.subentityNames.sorted() == ["Critic", "Director"])
        #expect(schema.warnings.isEmpty)
    }
}
