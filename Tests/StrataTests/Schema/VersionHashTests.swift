import Foundation
import Testing

@testable import Strata

/// A small library model used by the version hash tests, declared in either of two orders.
private enum LibraryModel {
    static func entities(reversed: Bool = false) -> [EntityDescription] {
        func ordered<T>(_ list: [T]) -> [T] { reversed ? list.reversed() : list }
        let entities = [
            EntityDescription(
                name: "Author",
                attributes: ordered([
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "born", type: .date, isOptional: true),
                    AttributeDescription(name: "portrait", type: .binaryData, isOptional: true, allowsExternalBinaryDataStorage: true),
                ]),
                relationships: ordered([
                    RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true),
                    RelationshipDescription(name: "agent", destination: "Agent"),
                ]),
                uniquenessConstraints: ordered([["name"], ordered(["name", "born"])])),
            EntityDescription(name: "Agent", attributes: [AttributeDescription(name: "phone", type: .string)]),
            EntityDescription(name: "Item", isAbstract: true, attributes: [AttributeDescription(name: "created", type: .date)]),
            EntityDescription(
                name: "Book", superentity: "Item",
                attributes: ordered([
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "isbn", type: .string),
                    AttributeDescription(name: "pages", type: .integer32),
                ]),
                relationships: ordered([
                    RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                    RelationshipDescription(name: "publisher", destination: "Publisher"),
                ]),
                uniquenessConstraints: [["isbn"]]),
            EntityDescription(name: "Publisher", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "Magazine", attributes: [AttributeDescription(name: "issue", type: .integer16)]),
        ]
        return ordered(entities)
    }

    static func schema(_ change: (inout [EntityDescription]) -> Void = { _ in }) throws -> Schema {
        var entities = entities()
        change(&entities)
        return try Schema(entities)
    }
}

extension Array where Element == EntityDescription {
    /// Edits the entity named `name` in place; traps when it does not exist (a broken test).
    fileprivate mutating func edit(_ name: String, _ change: (inout EntityDescription) -> Void) {
        guard let index = firstIndex(where: { $0.name == name }) else { fatalError("No entity \(name)") }
        change(&self[index])
    }
}

extension EntityDescription {
    fileprivate mutating func editAttribute(_ name: String, _ change: (inout AttributeDescription) -> Void) {
        guard let index = attributes.firstIndex(where: { $0.name == name }) else { fatalError("No attribute \(name)") }
        change(&attributes[index])
    }

    fileprivate mutating func editRelationship(_ name: String, _ change: (inout RelationshipDescription) -> Void) {
        guard let index = relationships.firstIndex(where: { $0.name == name }) else { fatalError("No relationship \(name)") }
        change(&relationships[index])
    }
}

/// A change to ``LibraryModel`` and the entity whose hash it must (or must not) change.
struct HashChange: Sendable, CustomTestStringConvertible {
    var label: String
    var entityName: String
    var apply: @Sendable (inout [EntityDescription]) -> Void
    var testDescription: String { label }

    static let storageChanges: [HashChange] = [
        HashChange(label: "attribute type", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("pages") { $0.type = .integer64 } }
        },
        HashChange(label: "attribute optionality", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("title") { $0.isOptional = true } }
        },
        HashChange(label: "new attribute", entityName: "Book") {
            $0.edit("Book") { $0.attributes.append(AttributeDescription(name: "subtitle", type: .string, isOptional: true)) }
        },
        HashChange(label: "removed attribute", entityName: "Agent") {
            $0.edit("Agent") { $0.attributes.removeAll() }
        },
        HashChange(label: "attribute renamed without identifier", entityName: "Publisher") {
            $0.edit("Publisher") { $0.editAttribute("name") { $0.name = "title" } }
        },
        HashChange(label: "attribute transient flag", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("title") { $0.isTransient = true } }
        },
        HashChange(label: "external binary storage", entityName: "Author") {
            $0.edit("Author") { $0.editAttribute("portrait") { $0.allowsExternalBinaryDataStorage = false } }
        },
        HashChange(label: "relationship to-one to to-many", entityName: "Book") {
            $0.edit("Book") { $0.editRelationship("author") { $0.isToMany = true } }
        },
        HashChange(label: "relationship ordered flag", entityName: "Author") {
            $0.edit("Author") { $0.editRelationship("books") { $0.isOrdered = true } }
        },
        HashChange(label: "relationship destination", entityName: "Book") {
            $0.edit("Book") { $0.editRelationship("publisher") { $0.destinationEntityName = "Magazine" } }
        },
        HashChange(label: "relationship transient flag", entityName: "Book") {
            $0.edit("Book") { $0.editRelationship("publisher") { $0.isTransient = true } }
        },
        HashChange(label: "relationship optionality", entityName: "Author") {
            $0.edit("Author") { $0.editRelationship("agent") { $0.isOptional = false } }
        },
        HashChange(label: "abstractness", entityName: "Item") {
            $0.edit("Item") { $0.isAbstract = false }
        },
        HashChange(label: "parent", entityName: "Magazine") {
            $0.edit("Magazine") { $0.superentityName = "Item" }
        },
        HashChange(label: "new uniqueness constraint", entityName: "Book") {
            $0.edit("Book") { $0.uniquenessConstraints.append(["title", "author"]) }
        },
        HashChange(label: "removed uniqueness constraint", entityName: "Author") {
            $0.edit("Author") { $0.uniquenessConstraints.removeLast() }
        },
        HashChange(label: "version hash modifier", entityName: "Book") {
            $0.edit("Book") { $0.versionHashModifier = "v2" }
        },
        HashChange(label: "attribute type in a parent", entityName: "Item") {
            $0.edit("Item") { $0.editAttribute("created") { $0.type = .double } }
        },
    ]

    static let cosmeticChanges: [HashChange] = [
        HashChange(label: "default value", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("title") { $0.defaultValue = "Untitled" } }
        },
        HashChange(label: "validation rules", entityName: "Book") {
            $0.edit("Book") {
                $0.editAttribute("pages") { $0.validation = ValidationRules(minimumValue: 1, maximumValue: 10_000) }
                $0.editAttribute("isbn") { $0.validation = ValidationRules(minimumLength: 10, maximumLength: 13, pattern: "[0-9X]+") }
            }
        },
        HashChange(label: "declared index", entityName: "Book") {
            $0.edit("Book") { $0.indexes = [IndexDescription(["title", "pages"])] }
        },
        HashChange(label: "indexed attribute", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("title") { $0.isIndexed = true } }
        },
        HashChange(label: "entity renaming identifier", entityName: "Book") {
            $0.edit("Book") { $0.renamingIdentifier = "Volume" }
        },
        HashChange(label: "attribute renaming identifier", entityName: "Book") {
            $0.edit("Book") { $0.editAttribute("title") { $0.renamingIdentifier = "name" } }
        },
        HashChange(label: "relationship renaming identifier", entityName: "Book") {
            $0.edit("Book") { $0.editRelationship("author") { $0.renamingIdentifier = "writer" } }
        },
        HashChange(label: "inverse inferred instead of named", entityName: "Author") {
            // Author.books and Book.author are the only unnamed pair between the two entities.
            $0.edit("Author") { $0.editRelationship("books") { $0.inverseName = nil } }
            $0.edit("Book") { $0.editRelationship("author") { $0.inverseName = nil } }
        },
        HashChange(label: "inverse named on one side only", entityName: "Book") {
            $0.edit("Book") { $0.editRelationship("author") { $0.inverseName = nil } }
        },
        HashChange(label: "uniqueness constraint column order", entityName: "Author") {
            $0.edit("Author") { $0.uniquenessConstraints = [["born", "name"], ["name"]] }
        },
    ]
}

@Suite struct VersionHashTests {
    private static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.allSatisfy { "0123456789abcdef".contains($0) }
    }

    @Test func declarationOrderDoesNotChangeHashes() throws {
        let forward = try Schema(LibraryModel.entities())
        let backward = try Schema(LibraryModel.entities(reversed: true))
        // The two declarations really are in different orders.
        #expect(forward.entities.map(\.name) != backward.entities.map(\.name))
        #expect(
            forward.entity(named: "Book")?.declaration.attributes.map(\.name)
                != backward.entity(named: "Book")?.declaration.attributes.map(\.name))

        #expect(forward.versionHash == backward.versionHash)
        for entity in forward.entities {
            #expect(entity.versionHash == backward.entity(named: entity.name)?.versionHash, "\(entity.name)")
        }
    }

    @Test func hashesAreSixtyFourLowercaseHexCharacters() throws {
        let schema = try LibraryModel.schema()
        #expect(Self.isHash(schema.versionHash), "\(schema.versionHash)")
        for entity in schema.entities {
            #expect(Self.isHash(entity.versionHash), "\(entity.name): \(entity.versionHash)")
        }
        #expect(Set(schema.entities.map(\.versionHash)).count == schema.entities.count)
        #expect(!schema.entities.map(\.versionHash).contains(schema.versionHash))
    }

    @Test func hashIsDeterministicAcrossConstructions() throws {
        func make() throws -> Schema {
            try Schema(
                [
                    EntityDescription(
                        name: "Note",
                        attributes: [
                            AttributeDescription(name: "text", type: .string),
                            AttributeDescription(name: "created", type: .date),
                        ],
                        uniquenessConstraints: [["created"]])
                ],
                versionIdentifier: "1")
        }
        let first = try make()
        let second = try make()
        #expect(first.versionHash == second.versionHash)
        #expect(first.entities[0].versionHash == second.entities[0].versionHash)
        // Stores record this hash; it must never change for an unchanged model, between runs or
        // releases. Update it only together with a deliberate change of the hash format.
        #expect(first.versionHash == "ae80f4f5709292c2982af7075d9f15ffdbfdaced2713836687ac226e5bd71550")
    }

    @Test func hashOfAModelWithEveryKindOfPropertyIsStable() throws {
        // Relationships (to-one, to-many, ordered, inverses), inheritance, constraints, a hash
        // modifier and every attribute type: stores record these hashes, so the way they are
        // computed may change only together with a deliberate change of the hash format.
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let schema = try XcodeModel.load(contentsOf: fixtures.appendingPathComponent("Library.xcdatamodel")).schema
        #expect(schema.versionHash == "34fc73af83ddcca3b7f1788cbdd2f45de85ca5561e9ce40c998dfb9f9b930092")
        #expect(schema.entity(named: "Book")?.versionHash.hasPrefix("1cfac4404150b96e") == true)
        #expect(schema.entity(named: "Reader")?.versionHash.hasPrefix("3a0722fddb622d04") == true)
    }

    @Test func versionIdentifierAndConfigurationsDoNotChangeTheHash() throws {
        let plain = try Schema(LibraryModel.entities())
        let labelled = try Schema(LibraryModel.entities(), configurations: ["Cloud": ["Book"]], versionIdentifier: "2.0")
        #expect(plain.versionHash == labelled.versionHash)
    }

    @Test func sha256MatchesTheStandardTestVector() {
        #expect(VersionHasher.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(VersionHasher.sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test(arguments: HashChange.storageChanges)
    func storageChangeChangesSchemaAndEntityHash(_ change: HashChange) throws {
        let original = try LibraryModel.schema()
        let changed = try LibraryModel.schema(change.apply)
        #expect(changed.versionHash != original.versionHash)
        let before = try #require(original.entity(named: change.entityName))
        let after = try #require(changed.entity(named: change.entityName))
        #expect(after.versionHash != before.versionHash)
        // Entities outside the changed entity's tree keep their hash.
        for entity in changed.entities where !entity.isKind(of: after) {
            #expect(entity.versionHash == original.entity(named: entity.name)?.versionHash, "\(entity.name)")
        }
    }

    @Test(arguments: HashChange.cosmeticChanges)
    func cosmeticChangeKeepsEveryHash(_ change: HashChange) throws {
        let original = try LibraryModel.schema()
        let changed = try LibraryModel.schema(change.apply)
        #expect(changed.entityDescriptions != original.entityDescriptions)
        #expect(changed.versionHash == original.versionHash)
        for entity in changed.entities {
            #expect(entity.versionHash == original.entity(named: entity.name)?.versionHash, "\(entity.name)")
        }
    }

    @Test func parentChangeChangesEverySubentityHash() throws {
        let original = try LibraryModel.schema()
        let changed = try LibraryModel.schema { $0.edit("Item") { $0.attributes.append(.init(name: "tag", type: .string)) } }
        #expect(changed.entity(named: "Item")?.versionHash != original.entity(named: "Item")?.versionHash)
        #expect(changed.entity(named: "Book")?.versionHash != original.entity(named: "Book")?.versionHash)
        #expect(changed.entity(named: "Author")?.versionHash == original.entity(named: "Author")?.versionHash)
    }
}
