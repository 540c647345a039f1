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

    @Test func subentitiesInheritIndexesAndIndexedAttributesAreNotDuplicated() throws {
        let schema = try Schema([
            EntityDescription(
                name: "Person", isAbstract: true,
                attributes: [.init(name: "name", type: .string, isIndexed: true)],
                indexes: [IndexDescription(name: "by_name", ["name"])]),
            EntityDescription(
                name: "Student", superentity: "Person",
                attributes: [.init(name: "grade", type: .integer16, isIndexed: true)]),
        ])
        #expect(schema.entity(named: "Person")?.indexes.map(\.name) == ["by_name"])
        #expect(schema.entity(named: "Student")?.indexes.map(\.name) == ["by_name", "by_grade"])
    }
}
