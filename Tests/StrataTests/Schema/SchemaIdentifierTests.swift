import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Names that SQLite would take for one — it ignores the case of ASCII letters in table,
/// column and index names — are refused when the schema is built (issue 12, item 3), not when
/// a store opens or, worse, by two entities silently sharing a table.
@Suite struct SchemaIdentifierTests {
    /// The problems of a schema that must be invalid.
    private func problems(_ entities: [EntityDescription], sourceLocation: SourceLocation = #_sourceLocation)
        -> [StrataError]
    {
        do {
            let schema = try Schema(entities)
            Issue.record("Expected an invalid schema, got:\n\(schema)", sourceLocation: sourceLocation)
            return []
        } catch let error as StrataError {
            #expect(error.code == .invalidSchema, sourceLocation: sourceLocation)
            return error.details
        } catch {
            Issue.record("Expected a StrataError, got \(error)", sourceLocation: sourceLocation)
            return []
        }
    }

    private func string(_ name: String, transient: Bool = false) -> AttributeDescription {
        AttributeDescription(name: name, type: .string, isOptional: true, isTransient: transient)
    }

    @Test func entityNamesThatDifferOnlyInCaseAreRefused() throws {
        let details = problems([
            EntityDescription(name: "Thing", attributes: [string("title")]),
            EntityDescription(name: "thing", attributes: [string("label")]),
        ])
        #expect(details.map(\.code) == [.identifierCollision])
        let detail = try #require(details.first)
        #expect(detail.entityName == "thing" && detail.propertyName == nil)
        #expect(detail.message.hasPrefix("Entities Thing and thing differ only in letter case."), "\(detail.message)")
        #expect(detail.message.contains("rename"))
    }

    @Test func attributeNamesThatDifferOnlyInCaseAreRefused() throws {
        let details = problems([EntityDescription(name: "Thing", attributes: [string("name"), string("Name")])])
        #expect(details.map(\.code) == [.identifierCollision])
        let detail = try #require(details.first)
        #expect(detail.entityName == "Thing" && detail.propertyName == "Name")
        #expect(detail.message.hasPrefix("Thing.name and Thing.Name differ only in letter case."), "\(detail.message)")
        #expect(detail.message.contains("columns of the table Thing"))
    }

    @Test func columnsOfEveryEntityInOneTableMustNotCollide() throws {
        // Subentities share their root's table: an attribute of one and a to-one relationship
        // of its sibling would be one column, and so would an inherited name in another case.
        let details = problems([
            EntityDescription(name: "Person", attributes: [string("name")]),
            EntityDescription(name: "Student", superentity: "Person", attributes: [string("school"), string("NAME")]),
            EntityDescription(
                name: "Teacher", superentity: "Person",
                relationships: [.init(name: "School", destination: "Campus", inverse: "teachers")]),
            EntityDescription(
                name: "Campus",
                relationships: [.init(name: "teachers", destination: "Teacher", inverse: "School", isToMany: true)]),
        ])
        let found = details.map { "\($0.code)|\($0.entityName ?? "-")|\($0.propertyName ?? "-")" }
        #expect(found == ["identifierCollision|Student|NAME", "identifierCollision|Teacher|School"])
        #expect(details.first?.message.hasPrefix("Person.name and Student.NAME differ only in letter case.") == true)
        #expect(details.last?.message.contains("columns of the table Person, which Student and Teacher share") == true)
    }

    @Test func joinTablesAndIndexesOfOneEntityMustNotCollide() throws {
        let details = problems([
            EntityDescription(
                name: "Post",
                attributes: [.init(name: "title", type: .string, isIndexed: true), string("date")],
                relationships: [
                    .init(name: "tags", destination: "Tag", isToMany: true),
                    .init(name: "Tags", destination: "Tag", isToMany: true),
                ],
                indexes: [
                    IndexDescription(name: "byDate", ["date"]), IndexDescription(name: "BYDATE", ["date", "title"]),
                ]),
            EntityDescription(name: "Tag", attributes: [string("name")]),
        ])
        let found = details.map { "\($0.code)|\($0.entityName ?? "-")|\($0.propertyName ?? "-")" }
        #expect(found == ["identifierCollision|Post|Tags", "identifierCollision|Post|-"], "\(details)")
        #expect(details.first?.message.contains("join table") == true)
        #expect(details.last?.message.contains("'byDate' and 'BYDATE'") == true)
    }

    @Test func anIndexAddedForAnIndexedAttributeCountsToo() throws {
        let details = problems([
            EntityDescription(
                name: "Post", attributes: [.init(name: "title", type: .string, isIndexed: true), string("subtitle")],
                indexes: [IndexDescription(name: "By_title", ["subtitle"])])
        ])
        #expect(details.map(\.code) == [.identifierCollision])
        #expect(
            details.first?.message.contains("'By_title' and 'by_title' (added for the indexed attribute title)") == true
        )
    }

    @Test func everyCollisionIsListedInOneError() throws {
        let details = problems([
            EntityDescription(name: "Thing", attributes: [string("name"), string("Name"), string("NAME")]),
            EntityDescription(name: "thing"),
            EntityDescription(name: "THING"),
            EntityDescription(name: "Other", attributes: [string("value"), string("Value")]),
            EntityDescription(name: "sqlite_things"),
        ])
        let found = details.map { "\($0.code)|\($0.entityName ?? "-")|\($0.propertyName ?? "-")" }
        #expect(
            found == [
                "reservedName|sqlite_things|-",
                "identifierCollision|thing|-",
                "identifierCollision|Thing|Name",
                "identifierCollision|Other|Value",
            ], "\(details)")
        #expect(details[1].message.hasPrefix("Entities Thing, thing and THING differ only in letter case."))
        #expect(details[2].message.hasPrefix("Thing.name, Thing.Name and Thing.NAME differ only in letter case."))
    }

    @Test func sqliteReservesNamesStartingWithSqliteInAnyCase() throws {
        let details = problems([EntityDescription(name: "SQLite_Stats", attributes: [string("value")])])
        #expect(details.map(\.code) == [.reservedName])
        #expect(details.first?.message.contains("'sqlite_'") == true)
    }

    @Test func namesSQLKeepsApartAreAccepted() throws {
        let schema = try Schema([
            // Siblings may share a column by using the very same name.
            EntityDescription(name: "Person", attributes: [string("name")]),
            EntityDescription(name: "Student", superentity: "Person", attributes: [string("nickname")]),
            EntityDescription(name: "Teacher", superentity: "Person", attributes: [string("nickname")]),
            // A transient attribute and a to-many relationship stored through its inverse have
            // no column here; entities in other tables have columns of their own.
            EntityDescription(
                name: "Author",
                attributes: [string("Books", transient: true), string("Name")],
                relationships: [.init(name: "books", destination: "Book", inverse: "author", isToMany: true)],
                indexes: [IndexDescription(name: "ByName", ["Name"])]),
            EntityDescription(
                name: "Book", attributes: [string("name")],
                relationships: [.init(name: "author", destination: "Author", inverse: "books")],
                indexes: [IndexDescription(name: "byName", ["name"])]),
            // SQLite folds only ASCII letters: Ä and ä are two tables to it.
            EntityDescription(name: "Ärger"),
            EntityDescription(name: "ärger"),
        ])
        #expect(schema.entities.count == 7)
    }

    @Test func entitiesThatOnceSharedATableNowFailBeforeAnyStoreOpens() throws {
        let directory = try TemporaryDirectory()
        let error = try #require(throws: StrataError.self) {
            let schema = try Schema([
                EntityDescription(name: "Thing", attributes: [string("title")]),
                EntityDescription(name: "thing", attributes: [.init(name: "count", type: .integer64, defaultValue: 0)]),
            ])
            _ = try PersistentContainer(
                name: "Things", schema: schema, storeDescriptions: [.sqlite(directory.file("Things.sqlite"))])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.details.map(\.code) == [.identifierCollision])
        #expect(!FileManager.default.fileExists(atPath: directory.file("Things.sqlite").path))
    }
}
