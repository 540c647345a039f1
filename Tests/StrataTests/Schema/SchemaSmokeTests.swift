import Foundation
import Testing

@testable import Strata

@Suite struct SchemaSmokeTests {
    @Test func resolvesInheritedAttributesFirst() throws {
        let schema = try Schema([
            EntityDescription(name: "Student", superentity: "Person", attributes: [.init(name: "grade", type: .integer16)]),
            EntityDescription(name: "Person", isAbstract: true, attributes: [.init(name: "name", type: .string)]),
        ])
        let student = try #require(schema.entity(named: "Student"))
        #expect(student.attributes.map(\.name) == ["name", "grade"])
        #expect(student.attributeNumber(named: "grade") == 1)
        #expect(schema.entity(named: "Person")?.subentityNames == ["Student"])
    }
}
