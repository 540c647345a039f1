import Foundation
import Strata
import Testing

/// The migration checks every persistent store must pass: a store of one model version
/// migrates to the next keeping its data, refuses what it cannot migrate without a trace, and
/// reports the version that wrote it.
///
/// ```swift
/// @Test(arguments: MigrationConformanceSuite.Check.allCases)
/// func migrates(check: MigrationConformanceSuite.Check) throws {
///     let directory = try TemporaryDirectory()
///     let suite = MigrationConformanceSuite { .sqlite(directory.url.appendingPathComponent("\(UUID()).sqlite")) }
///     try suite.run(check)
/// }
/// ```
public struct MigrationConformanceSuite: Sendable {
    /// One check of the suite.
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Renames, a defaulted new attribute, an entity rename and a new uniqueness
        /// constraint, migrated in lightweight steps, keep every object and link.
        case lightweightStepsKeepTheData
        /// A custom stage that throws leaves the store as it was.
        case aFailingStageLeavesTheStoreAsItWas
        /// Stored rows that break a new uniqueness constraint stop the migration, leaving the
        /// store as it was.
        case aConstraintViolationLeavesTheStoreAsItWas
        /// The version that wrote a store is the one detected, before and after migrating.
        case theVersionThatWroteAStoreIsDetected
        /// A custom stage's hooks see the old schema before and the new one after.
        case customStagesRunOnTheSchemaOfTheirSide
        /// A new parent over an existing entity and an entity leaving its hierarchy keep the
        /// objects, and release links to objects that left a relationship's destination.
        case hierarchyChangesKeepTheData
        /// An attribute added with a default value gives stored objects that value, optional or
        /// not (as Core Data fills it); an optional attribute that gains a default keeps its
        /// stored missing values.
        case addedAttributesGiveStoredObjectsTheirDefaults

        /// The check's name.
        public var testDescription: String { rawValue }
    }

    /// Makes the description of a new, empty store each time it is called.
    public let makeStoreDescription: @Sendable () throws -> StoreDescription

    /// A suite over stores `makeStoreDescription` describes.
    public init(makeStoreDescription: @escaping @Sendable () throws -> StoreDescription) {
        self.makeStoreDescription = makeStoreDescription
    }

    /// Runs one check.
    public func run(_ check: Check) throws {
        switch check {
        case .lightweightStepsKeepTheData: try lightweightStepsKeepTheData()
        case .aFailingStageLeavesTheStoreAsItWas: try aFailingStageLeavesTheStoreAsItWas()
        case .aConstraintViolationLeavesTheStoreAsItWas: try aConstraintViolationLeavesTheStoreAsItWas()
        case .theVersionThatWroteAStoreIsDetected: try theVersionThatWroteAStoreIsDetected()
        case .customStagesRunOnTheSchemaOfTheirSide: try customStagesRunOnTheSchemaOfTheirSide()
        case .hierarchyChangesKeepTheData: try hierarchyChangesKeepTheData()
        case .addedAttributesGiveStoredObjectsTheirDefaults: try addedAttributesGiveStoredObjectsTheirDefaults()
        }
    }

    // MARK: The model

    /// v1: books with tags; v2: `title` renamed to `name`, a required `pages` with a default,
    /// `Tag` renamed to `Label`; v3: `name` unique.
    enum Versions: String, ModelVersion {
        case v1, v2, v3

        var modelVersion: Schema {
            get throws {
                var book = EntityDescription(
                    name: "Book",
                    attributes: [AttributeDescription(name: "title", type: .string, defaultValue: .string(""))],
                    relationships: [RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", isToMany: true)])
                var tag = EntityDescription(
                    name: "Tag", attributes: [AttributeDescription(name: "word", type: .string, defaultValue: .string(""))],
                    relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", isToMany: true)])
                if self != .v1 {
                    book.attributes = [
                        AttributeDescription(name: "name", type: .string, defaultValue: .string(""), renamingIdentifier: "title"),
                        AttributeDescription(name: "pages", type: .integer32, defaultValue: .integer(100)),
                    ]
                    tag.name = "Label"
                    tag.renamingIdentifier = "Tag"
                    book.relationships[0].destinationEntityName = "Label"
                }
                if self == .v3 { book.uniquenessConstraints = [["name"]] }
                return try Schema([book, tag])
            }
        }
    }

    /// h1: `Work` with a subentity `Book`, and `Note` pointing at a work; h2: a new abstract
    /// parent `Item` (with a defaulted attribute) over `Note`, and `Book` out of `Work`'s
    /// hierarchy with attributes of its own.
    enum Hierarchies: String, ModelVersion {
        case h1, h2

        var modelVersion: Schema {
            get throws {
                let title = AttributeDescription(name: "title", type: .string, defaultValue: .string(""))
                let pages = AttributeDescription(name: "pages", type: .integer32, defaultValue: .integer(0))
                var note = EntityDescription(
                    name: "Note", attributes: [AttributeDescription(name: "text", type: .string, defaultValue: .string(""))],
                    relationships: [RelationshipDescription(name: "about", destination: "Work")])
                let work = EntityDescription(name: "Work", attributes: [title])
                guard self == .h2 else {
                    return try Schema([work, EntityDescription(name: "Book", superentity: "Work", attributes: [pages]), note])
                }
                note.superentityName = "Item"
                return try Schema([
                    EntityDescription(
                        name: "Item", isAbstract: true,
                        attributes: [AttributeDescription(name: "label", type: .string, defaultValue: .string("none"))]),
                    note, work, EntityDescription(name: "Book", attributes: [title, pages]),
                ])
            }
        }
    }

    /// d1: books with a title and an optional note; d2: an optional `rating` and a required
    /// `pages`, both with defaults, and the note with a default now.
    enum Defaults: String, ModelVersion {
        case d1, d2

        var modelVersion: Schema {
            get throws {
                var attributes = [
                    AttributeDescription(name: "title", type: .string, defaultValue: .string("")),
                    AttributeDescription(
                        name: "note", type: .string, isOptional: true, defaultValue: self == .d2 ? .string("none") : .null),
                ]
                if self == .d2 {
                    attributes.append(AttributeDescription(name: "rating", type: .double, isOptional: true, defaultValue: .double(3.5)))
                    attributes.append(AttributeDescription(name: "pages", type: .integer32, defaultValue: .integer(100)))
                }
                return try Schema([EntityDescription(name: "Book", attributes: attributes)])
            }
        }
    }

    /// Writes v1 books titled `titles`, each tagged "old".
    private func makeV1Store(_ titles: [String]) throws -> StoreDescription {
        let description = try makeStoreDescription()
        let schema = try Versions.v1.modelVersion
        let container = try PersistentContainer(name: "Migration", schema: schema, storeDescriptions: [description])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let tag = try insert("Tag", in: context, ["word": "old"])
        for title in titles {
            let book = try insert("Book", in: context, ["title": title])
            try book.setValue(Set([tag]), forKey: "tags")
        }
        try context.save()
        return description
    }

    private func insert(_ entity: String, in context: ObjectContext, _ values: [String: any Sendable]) throws -> ManagedObject {
        let object = ManagedObject(entity: try #require(context.schema.entity(named: entity)))
        context.insert(object)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    private func open(_ description: StoreDescription, at version: Versions) throws -> PersistentContainer {
        try PersistentContainer(name: "Migration", schema: try version.modelVersion, storeDescriptions: [description])
    }

    private func titles(in description: StoreDescription, at version: Versions) throws -> [String] {
        let container = try open(description, at: version)
        defer { try? container.close() }
        let key = version == .v1 ? "title" : "name"
        return try container.newBackgroundContext()
            .fetch(FetchRequest<ManagedObject>(entityName: "Book", sortDescriptors: [FetchSortDescriptor(key: key)]))
            .map { try $0.value(forKey: key) as? String ?? "" }
    }

    // MARK: Checks

    func lightweightStepsKeepTheData() throws {
        let description = try makeV1Store(["Dune", "Emma"])
        try Versions.migrationManager().migrateStore(description, to: .v3)
        #expect(try Versions.versionsForStore(description) == [.v3])
        #expect(try titles(in: description, at: .v3) == ["Dune", "Emma"])
        let container = try open(description, at: .v3)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
        #expect(try books.map { try $0.value(forKey: "pages") as? Int32 } == [100, 100])
        let labels = try books.map { try ($0.value(forKey: "tags") as? Set<ManagedObject>)?.count }
        #expect(labels == [1, 1])
        // The new uniqueness constraint holds from now on.
        _ = try insert("Book", in: context, ["name": "Dune"])
        #expect(throws: StrataError.self) { try context.save() }
    }

    func addedAttributesGiveStoredObjectsTheirDefaults() throws {
        let description = try makeStoreDescription()
        do {
            let container = try PersistentContainer(name: "Defaults", schema: try Defaults.d1.modelVersion, storeDescriptions: [description])
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            _ = try insert("Book", in: context, ["title": "Dune"])
            _ = try insert("Book", in: context, ["title": "Emma", "note": "kept"])
            try context.save()
        }
        try Defaults.migrationManager().migrateStore(description, to: .d2)
        let container = try PersistentContainer(name: "Defaults", schema: try Defaults.d2.modelVersion, storeDescriptions: [description])
        defer { try? container.close() }
        let books = try container.newBackgroundContext()
            .fetch(FetchRequest<ManagedObject>(entityName: "Book", sortDescriptors: [FetchSortDescriptor(key: "title")]))
        try #require(books.count == 2)
        for book in books {
            #expect(try book.value(forKey: "rating") as? Double == 3.5)
            #expect(try book.value(forKey: "pages") as? Int32 == 100)
        }
        #expect(try books[0].value(forKey: "note") == nil)  // a missing value stays missing
        #expect(try books[1].value(forKey: "note") as? String == "kept")
    }

    func aFailingStageLeavesTheStoreAsItWas() throws {
        struct Refused: Error {}
        let description = try makeV1Store(["Dune"])
        let manager = StagedMigrationManager<Versions>([
            Versions.v1.migrationStage(toVersion: .v2, label: "Refuse", postMigration: { _ in throw Refused() })
        ])
        let error = #expect(throws: StrataError.self) { try manager.migrateStore(description, to: .v3) }
        #expect(error?.code == .migrationFailed)
        #expect(try Versions.versionsForStore(description) == [.v1])
        #expect(try titles(in: description, at: .v1) == ["Dune"])
    }

    func aConstraintViolationLeavesTheStoreAsItWas() throws {
        let description = try makeV1Store(["Dune", "Dune", "Emma"])
        let error = #expect(throws: StrataError.self) { try Versions.migrationManager().migrateStore(description, to: .v3) }
        #expect(error?.code == .constraintConflict)
        #expect(try Versions.versionsForStore(description) == [.v1])
        #expect(try titles(in: description, at: .v1) == ["Dune", "Dune", "Emma"])
        // Migrating as far as the data allows works.
        try Versions.migrationManager().migrateStore(description, to: .v2)
        #expect(try titles(in: description, at: .v2) == ["Dune", "Dune", "Emma"])
    }

    func theVersionThatWroteAStoreIsDetected() throws {
        let description = try makeV1Store([])
        #expect(try Versions.versionsForStore(description) == [.v1])
        let plan = try Versions.migrationManager().plan(forStore: description)
        #expect(plan.source == .v1 && plan.destination == .v3 && plan.stages.count == 2)
        try Versions.migrationManager().migrateStore(description, to: .v2)
        #expect(try Versions.versionsForStore(description) == [.v2])
        let container = try open(description, at: .v2)
        defer { try? container.close() }
        #expect(try Versions.versions(compatibleWith: container) == [.v2])
    }

    func customStagesRunOnTheSchemaOfTheirSide() throws {
        let description = try makeV1Store(["dune"])
        let manager = StagedMigrationManager<Versions>([
            Versions.v1.migrationStage(
                toVersion: .v2, label: "Capitalize",
                preMigration: { context in
                    for book in try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")) {
                        let title = try book.value(forKey: "title") as? String ?? ""
                        try book.setValue(title.capitalized, forKey: "title")
                    }
                },
                postMigration: { context in
                    for book in try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")) {
                        try book.setValue(Int32(412), forKey: "pages")
                    }
                })
        ])
        try manager.migrateStore(description, to: .v3)
        #expect(try titles(in: description, at: .v3) == ["Dune"])
        let container = try open(description, at: .v3)
        defer { try? container.close() }
        let pages = try container.newBackgroundContext().fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            .map { try $0.value(forKey: "pages") as? Int32 }
        #expect(pages == [412])
    }

    func hierarchyChangesKeepTheData() throws {
        let description = try makeStoreDescription()
        do {
            let container = try PersistentContainer(name: "Migration", schema: try Hierarchies.h1.modelVersion, storeDescriptions: [description])
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let essay = try insert("Work", in: context, ["title": "Essay"])
            let dune = try insert("Book", in: context, ["title": "Dune", "pages": Int32(412)])
            try insert("Note", in: context, ["text": "on the essay"]).setValue(essay, forKey: "about")
            try insert("Note", in: context, ["text": "on dune"]).setValue(dune, forKey: "about")
            try context.save()
        }
        try Hierarchies.migrationManager().migrateStore(description, to: .h2)
        #expect(try Hierarchies.versionsForStore(description) == [.h2])
        let container = try PersistentContainer(name: "Migration", schema: try Hierarchies.h2.modelVersion, storeDescriptions: [description])
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 2)
        let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortDescriptors: [FetchSortDescriptor(key: "text")]))
        #expect(try items.map { try $0.value(forKey: "text") as? String } == ["on dune", "on the essay"])
        #expect(try items.map { try $0.value(forKey: "label") as? String } == ["none", "none"])
        // The book is no longer a work: the note about it lets go; the one about the essay keeps it.
        #expect(try items[0].value(forKey: "about") == nil)
        #expect(try (items[1].value(forKey: "about") as? ManagedObject)?.value(forKey: "title") as? String == "Essay")
        let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
        #expect(try books.map { try $0.value(forKey: "title") as? String } == ["Dune"])
        #expect(try books.map { try $0.value(forKey: "pages") as? Int32 } == [412])
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Work")) == 1)
    }
}
