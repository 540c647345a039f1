import Foundation
import Testing

@testable import Strata

/// The three ways of defining a model — `@Entity` classes, an Xcode model file and entity
/// descriptions written by hand — give the same schema.
@Suite struct ModelEquivalenceTests {
    static func fixture(_ name: String) throws -> URL {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return folder.appendingPathComponent(name)
    }

    @Test func xcodeModelMatchesEntityClasses() throws {
        let fromClasses = try Schema([Movie.self])
        let model = try XcodeModel.load(contentsOf: Self.fixture("MovieGraph.xcdatamodel"))
        let fromFile = model.schema
        #expect(model.warnings.isEmpty)
        #expect(Set(fromClasses.entities.map(\.name)) == Set(fromFile.entities.map(\.name)))
        for entity in fromClasses.entities {
            let other = try #require(fromFile.entity(named: entity.name))
            #expect(entity.versionHash == other.versionHash, "entity \(entity.name)")
            for attribute in entity.attributes {
                let twin = try #require(other.attribute(named: attribute.name))
                #expect(twin.type == attribute.type, "\(entity.name).\(attribute.name)")
                #expect(twin.isOptional == attribute.isOptional, "\(entity.name).\(attribute.name)")
                #expect(twin.defaultValue == attribute.defaultValue, "\(entity.name).\(attribute.name)")
                #expect(twin.validation == attribute.validation, "\(entity.name).\(attribute.name)")
            }
            for relationship in entity.relationships {
                let twin = try #require(other.relationship(named: relationship.name))
                #expect(twin.deleteRule == relationship.deleteRule, "\(entity.name).\(relationship.name)")
                #expect(twin.inverseName == relationship.inverseName, "\(entity.name).\(relationship.name)")
                #expect(twin.isOrdered == relationship.isOrdered, "\(entity.name).\(relationship.name)")
            }
            #expect(
                Set(entity.uniquenessConstraints.map { $0.sorted() }) == Set(other.uniquenessConstraints.map { $0.sorted() }))
            #expect(
                Set(entity.indexes.map { $0.elements.map(\.propertyName) })
                    == Set(other.indexes.map { $0.elements.map(\.propertyName) }))
        }
        #expect(fromClasses.versionHash == fromFile.versionHash)
    }

    @Test func handWrittenDescriptionsMatchEntityClasses() throws {
        let fromClasses = try Schema([Car.self, Bike.self])
        let byHand = try Schema([
            EntityDescription(name: "Bike", superentity: "Vehicle", attributes: [.init(name: "isElectric", type: .boolean, defaultValue: false)]),
            EntityDescription(name: "Car", superentity: "Vehicle", attributes: [.init(name: "seats", type: .integer16, defaultValue: 5)]),
            EntityDescription(
                name: "Vehicle", isAbstract: true,
                attributes: [.init(name: "wheels", type: .integer64, defaultValue: 4), .init(name: "maker", type: .string, defaultValue: "")]),
        ])
        #expect(fromClasses.versionHash == byHand.versionHash)
        #expect(byHand.entity(named: "Vehicle")?.subentityNames.sorted() == ["Bike", "Car"])
    }

    @Test func aChangedClassNoLongerMatches() throws {
        let fromClasses = try Schema([Movie.self])
        var descriptions = fromClasses.entityDescriptions
        let index = try #require(descriptions.firstIndex { $0.name == "Movie" })
        descriptions[index].attributes[0].isOptional.toggle()
        let changed = try Schema(descriptions)
        #expect(changed.versionHash != fromClasses.versionHash)
        #expect(changed.difference(from: fromClasses).changes == [
            .propertyChanged(entity: "Movie", property: "id", detail: "UUID -> UUID?")
        ])
    }
}
