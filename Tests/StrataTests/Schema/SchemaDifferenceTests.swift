import Foundation
import Testing

@testable import Strata

/// The first version of a movie model; tests edit a copy to make the second.
private enum MovieModel {
    static var entities: [EntityDescription] {
        [
            EntityDescription(
                name: "Movie",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "year", type: .integer16),
                    AttributeDescription(name: "poster", type: .binaryData, isOptional: true),
                ],
                relationships: [RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie", isToMany: true)],
                uniquenessConstraints: [["title", "year"]]),
            EntityDescription(
                name: "Review",
                attributes: [AttributeDescription(name: "stars", type: .integer16)],
                relationships: [RelationshipDescription(name: "movie", destination: "Movie", inverse: "reviews")]),
            EntityDescription(name: "Studio", attributes: [AttributeDescription(name: "name", type: .string)]),
        ]
    }

    static func schema(_ change: (inout [EntityDescription]) -> Void = { _ in }) throws -> Schema {
        var entities = entities
        change(&entities)
        return try Schema(entities)
    }
}

extension Array where Element == EntityDescription {
    /// The entity named `name`; traps when it does not exist (a broken test).
    fileprivate subscript(named name: String) -> EntityDescription {
        get { self[firstIndex { $0.name == name }!] }
        set { self[firstIndex { $0.name == name }!] = newValue }
    }
}

@Suite struct SchemaDifferenceTests {
    private func difference(_ change: (inout [EntityDescription]) -> Void) throws -> SchemaDifference {
        try MovieModel.schema(change).difference(from: MovieModel.schema())
    }

    @Test func identicalSchemasHaveNoDifference() throws {
        let difference = try MovieModel.schema().difference(from: MovieModel.schema())
        #expect(difference.isEmpty)
        #expect(difference.changes == [])
        #expect(difference.description == "no differences")
    }

    @Test func reorderedAndCosmeticChangesHaveNoDifference() throws {
        let difference = try difference { entities in
            entities.reverse()
            entities[named: "Movie"].attributes.reverse()
            entities[named: "Movie"].attributes[0].defaultValue = .data(Data([1]))
            entities[named: "Movie"].indexes = [IndexDescription(["year"])]
            entities[named: "Review"].attributes[0].validation = ValidationRules(minimumValue: 1, maximumValue: 5)
        }
        #expect(difference.isEmpty, "\(difference)")
    }

    @Test func addedEntity() throws {
        let difference = try difference {
            $0.append(EntityDescription(name: "Actor", attributes: [AttributeDescription(name: "name", type: .string)]))
        }
        #expect(difference.changes == [.entityAdded("Actor")])
        #expect(difference.description == "entity Actor added")
        #expect(!difference.isEmpty)
    }

    @Test func removedEntity() throws {
        let difference = try difference { $0.removeAll { $0.name == "Studio" } }
        #expect(difference.changes == [.entityRemoved("Studio")])
    }

    @Test func entityRenamedThroughRenamingIdentifier() throws {
        let difference = try difference {
            $0[named: "Studio"].name = "Company"
            $0[named: "Company"].renamingIdentifier = "Studio"
        }
        #expect(difference.changes == [.entityRenamed(from: "Studio", to: "Company")])
        #expect(difference.description == "entity Studio renamed to Company")
    }

    @Test func entityRenamedWithoutIdentifierIsRemovedAndAdded() throws {
        let difference = try difference { $0[named: "Studio"].name = "Company" }
        #expect(difference.changes == [.entityAdded("Company"), .entityRemoved("Studio")])
    }

    @Test func renamedEntityWithChangedPropertiesListsBoth() throws {
        let difference = try difference {
            $0[named: "Studio"].name = "Company"
            $0[named: "Company"].renamingIdentifier = "Studio"
            $0[named: "Company"].attributes.append(AttributeDescription(name: "founded", type: .date, isOptional: true))
        }
        #expect(
            difference.changes == [
                .entityRenamed(from: "Studio", to: "Company"),
                .propertyAdded(entity: "Company", property: "founded"),
            ])
    }

    @Test func propertyAdded() throws {
        let difference = try difference {
            $0[named: "Movie"].attributes.append(AttributeDescription(name: "rating", type: .double, isOptional: true))
        }
        #expect(difference.changes == [.propertyAdded(entity: "Movie", property: "rating")])
        #expect(difference.description == "property Movie.rating added")
    }

    @Test func relationshipAdded() throws {
        let difference = try difference {
            $0[named: "Movie"].relationships.append(RelationshipDescription(name: "studio", destination: "Studio"))
        }
        #expect(difference.changes == [.propertyAdded(entity: "Movie", property: "studio")])
    }

    @Test func propertyRemoved() throws {
        let difference = try difference { $0[named: "Movie"].attributes.removeAll { $0.name == "poster" } }
        #expect(difference.changes == [.propertyRemoved(entity: "Movie", property: "poster")])
        #expect(difference.description == "property Movie.poster removed")
    }

    @Test func propertyRenamedThroughRenamingIdentifier() throws {
        let difference = try difference {
            $0[named: "Movie"].attributes[2] = AttributeDescription(
                name: "image", type: .binaryData, isOptional: true, renamingIdentifier: "poster")
        }
        #expect(difference.changes == [.propertyRenamed(entity: "Movie", from: "poster", to: "image")])
        #expect(difference.description == "property Movie.poster renamed to image")
    }

    @Test func renamedRelationship() throws {
        let difference = try difference {
            $0[named: "Review"].relationships[0].name = "film"
            $0[named: "Review"].relationships[0].renamingIdentifier = "movie"
            $0[named: "Movie"].relationships[0].inverseName = "film"
        }
        #expect(
            difference.changes == [
                .propertyChanged(
                    entity: "Movie", property: "reviews", detail: "to-many Review? inverse movie -> to-many Review? inverse film"),
                .propertyRenamed(entity: "Review", from: "movie", to: "film"),
            ])
    }

    @Test func propertyRenamedWithoutIdentifierIsRemovedAndAdded() throws {
        let difference = try difference { $0[named: "Studio"].attributes[0].name = "title" }
        #expect(
            difference.changes == [
                .propertyAdded(entity: "Studio", property: "title"),
                .propertyRemoved(entity: "Studio", property: "name"),
            ])
    }

    @Test func renamedAndRetypedPropertyListsBoth() throws {
        let difference = try difference {
            $0[named: "Studio"].attributes[0] = AttributeDescription(
                name: "code", type: .integer32, renamingIdentifier: "name")
        }
        #expect(
            difference.changes == [
                .propertyRenamed(entity: "Studio", from: "name", to: "code"),
                .propertyChanged(entity: "Studio", property: "code", detail: "String -> Integer 32"),
            ])
    }

    @Test func propertyTypeChanged() throws {
        let difference = try difference { $0[named: "Movie"].attributes[1].type = .integer32 }
        #expect(
            difference.changes == [.propertyChanged(entity: "Movie", property: "year", detail: "Integer 16 -> Integer 32")])
        #expect(difference.description == "property Movie.year changed: Integer 16 -> Integer 32")
    }

    @Test func propertyOptionalityChanged() throws {
        let difference = try difference { $0[named: "Movie"].attributes[0].isOptional = true }
        #expect(difference.changes == [.propertyChanged(entity: "Movie", property: "title", detail: "String -> String?")])
    }

    @Test func relationshipKindChanged() throws {
        let difference = try difference { $0[named: "Movie"].relationships[0].isOrdered = true }
        #expect(
            difference.changes == [
                .propertyChanged(
                    entity: "Movie", property: "reviews",
                    detail: "to-many Review? inverse movie -> ordered to-many Review? inverse movie")
            ])
    }

    @Test func entityLevelChanges() throws {
        let difference = try difference {
            $0[named: "Movie"].uniquenessConstraints = []
            $0.append(EntityDescription(name: "Media", isAbstract: true))
            $0[named: "Studio"].superentityName = "Media"
        }
        #expect(
            difference.changes == [
                .entityAdded("Media"),
                .entityChanged("Movie", detail: "uniqueness constraints changed"),
                .entityChanged("Studio", detail: "parent none -> Media"),
            ])
    }

    @Test func changesAreListedInEntityNameOrder() throws {
        let difference = try difference {
            $0.removeAll { $0.name == "Movie" || $0.name == "Review" }
            $0.append(EntityDescription(name: "Zebra"))
            $0.append(EntityDescription(name: "Aardvark"))
        }
        #expect(
            difference.changes == [
                .entityAdded("Aardvark"), .entityAdded("Zebra"), .entityRemoved("Movie"), .entityRemoved("Review"),
            ])
    }

    /// Changes the version hash sees; a difference must report each, so that an empty difference
    /// means the stores need no migration.
    @Test(arguments: HashVisibleChange.all)
    func everyHashChangeIsADifference(_ change: HashVisibleChange) throws {
        let original = try MovieModel.schema()
        let changed = try MovieModel.schema(change.apply)
        #expect(changed.versionHash != original.versionHash)
        #expect(changed.difference(from: original).changes == change.expected)
    }
}

struct HashVisibleChange: Sendable, CustomTestStringConvertible {
    var label: String
    var apply: @Sendable (inout [EntityDescription]) -> Void
    var expected: [SchemaDifference.Change]
    var testDescription: String { label }

    static let all: [HashVisibleChange] = [
        HashVisibleChange(
            label: "relationship transient",
            apply: { $0[named: "Review"].relationships[0].isTransient = true },
            expected: [
                .propertyChanged(
                    entity: "Review", property: "movie",
                    detail: "to-one Movie? inverse reviews -> to-one Movie? inverse reviews transient")
            ]),
        HashVisibleChange(
            label: "relationship optionality",
            apply: { $0[named: "Review"].relationships[0].isOptional = false },
            expected: [
                .propertyChanged(
                    entity: "Review", property: "movie", detail: "to-one Movie? inverse reviews -> to-one Movie inverse reviews")
            ]),
        HashVisibleChange(
            label: "external storage",
            apply: { $0[named: "Movie"].attributes[2].allowsExternalBinaryDataStorage = true },
            expected: [.propertyChanged(entity: "Movie", property: "poster", detail: "Binary? -> Binary? external")]),
        HashVisibleChange(
            label: "attribute transient",
            apply: { $0[named: "Movie"].attributes[2].isTransient = true },
            expected: [.propertyChanged(entity: "Movie", property: "poster", detail: "Binary? -> Binary? transient")]),
        HashVisibleChange(
            label: "version hash modifier",
            apply: { $0[named: "Studio"].versionHashModifier = "2" },
            expected: [.entityChanged("Studio", detail: "version hash modifier changed")]),
        HashVisibleChange(
            label: "abstractness",
            apply: {
                $0[named: "Studio"].isAbstract = true
                $0.append(EntityDescription(name: "Label", superentity: "Studio"))
            },
            expected: [.entityAdded("Label"), .entityChanged("Studio", detail: "now abstract")]),
        HashVisibleChange(
            label: "inverse moved to another relationship",
            apply: {
                $0[named: "Review"].relationships[0].inverseName = nil
                $0[named: "Review"].relationships.append(RelationshipDescription(name: "featured", destination: "Movie"))
                $0[named: "Movie"].relationships[0].inverseName = "featured"
            },
            expected: [
                .propertyChanged(
                    entity: "Movie", property: "reviews",
                    detail: "to-many Review? inverse movie -> to-many Review? inverse featured"),
                .propertyAdded(entity: "Review", property: "featured"),
                .propertyChanged(entity: "Review", property: "movie", detail: "to-one Movie? inverse reviews -> to-one Movie?"),
            ]),
    ]
}
