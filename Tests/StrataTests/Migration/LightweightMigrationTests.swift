import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

/// Two versions whose schemas each test chooses.
enum TwoVersions: String, ModelVersion {
    case old, new

    @TaskLocal static var schemas: [TwoVersions: Schema] = [:]

    var modelVersion: Schema {
        get throws {
            guard let schema = Self.schemas[self] else { throw StrataError(.migrationFailed, "no schema for \(self)") }
            return schema
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct LightweightMigrationTests {
    let directory: TemporaryDirectory
    var url: URL { directory.url.appendingPathComponent("Store.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    static let movies: [EntityDescription] = [
        EntityDescription(
            name: "Movie",
            attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "year", type: .integer16),
                AttributeDescription(name: "rating", type: .double, isOptional: true),
                AttributeDescription(name: "studio", type: .string, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "movies", isToMany: true),
                RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie", isToMany: true),
            ]),
        EntityDescription(
            name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "movies", destination: "Movie", inverse: "tags", isToMany: true)]),
        EntityDescription(
            name: "Review", attributes: [AttributeDescription(name: "stars", type: .integer16)],
            relationships: [RelationshipDescription(name: "movie", destination: "Movie", inverse: "reviews")]),
        EntityDescription(name: "Short", superentity: "Review", attributes: [AttributeDescription(name: "words", type: .integer16)]),
    ]

    func insert(_ entity: String, in context: ObjectContext, _ values: [String: Any]) throws -> ManagedObject {
        let object = ManagedObject(entity: try #require(context.schema.entity(named: entity)))
        context.insert(object)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// Writes two movies (one without a studio), two tags linked to both, and a review and a
    /// short review of the first.
    func makeStore(_ schema: Schema) throws {
        let container = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let heat = try insert("Movie", in: context, ["title": "Heat", "year": Int16(1995), "rating": 8.5, "studio": "Warner"])
        let thief = try insert("Movie", in: context, ["title": "Thief", "year": Int16(1981)])
        for name in ["crime", "night"] {
            let tag = try insert("Tag", in: context, ["name": name])
            try tag.setValue(Set([heat, thief]), forKey: "movies")
        }
        try insert("Review", in: context, ["stars": Int16(5)]).setValue(heat, forKey: "movie")
        try insert("Short", in: context, ["stars": Int16(4), "words": Int16(3)]).setValue(heat, forKey: "movie")
        try context.save()
        try container.close()
    }

    func migrate(_ old: [EntityDescription], _ new: [EntityDescription]) throws -> PersistentContainer {
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        try makeStore(try #require(schemas[.old]))
        try TwoVersions.$schemas.withValue(schemas) {
            #expect(try TwoVersions.versionsForStore(at: url) == [.old])
            try TwoVersions.migrationManager().migrateStore(at: url)
            #expect(try TwoVersions.versionsForStore(at: url) == [.new])
        }
        return try PersistentContainer(name: "Store", schema: try #require(schemas[.new]), storeDescriptions: [.sqlite(url)])
    }

    /// Writes the usual store with `schemas[.old]`, lets `prepare` add to it (saved after),
    /// migrates it to `schemas[.new]`, and opens it with that schema.
    func migrate(_ schemas: [TwoVersions: Schema], preparing prepare: (ObjectContext) throws -> Void) throws -> PersistentContainer {
        let oldSchema = try #require(schemas[.old])
        try makeStore(oldSchema)
        let container = try PersistentContainer(name: "Store", schema: oldSchema, storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        try prepare(context)
        try context.save()
        try container.close()
        try TwoVersions.$schemas.withValue(schemas) { try TwoVersions.migrationManager().migrateStore(at: url) }
        return try PersistentContainer(name: "Store", schema: try #require(schemas[.new]), storeDescriptions: [.sqlite(url)])
    }

    /// Expects migrating to `new` to fail with `code` and to leave the store as it was.
    func expectRefused(_ old: [EntityDescription], _ new: [EntityDescription], code: StrataError.Code) throws -> StrataError? {
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        try makeStore(try #require(schemas[.old]))
        let before = try Data(contentsOf: url)
        let error = TwoVersions.$schemas.withValue(schemas) {
            #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
        }
        #expect(error?.code == code)
        #expect(try Data(contentsOf: url) == before)
        let container = try PersistentContainer(name: "Store", schema: try #require(schemas[.old]), storeDescriptions: [.sqlite(url)])
        #expect(try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Movie")) == 2)
        try container.close()
        return error
    }

    @Test func renamesWideningAdditionsAndRemovalsKeepTheData() throws {
        var new = Self.movies
        new[0].name = "Film"
        new[0].renamingIdentifier = "Movie"
        new[0].attributes = [
            AttributeDescription(name: "name", type: .string, renamingIdentifier: "title"),
            AttributeDescription(name: "year", type: .integer64),
            AttributeDescription(name: "runtime", type: .integer64, defaultValue: .integer(90)),
            AttributeDescription(name: "studio", type: .string, defaultValue: .string("unknown")),  // now required
            AttributeDescription(name: "note", type: .string, isOptional: true),
        ]
        new[0].relationships[0].destinationEntityName = "Tag"
        new[1].relationships[0].destinationEntityName = "Film"
        new[2].relationships[0].destinationEntityName = "Film"
        new[2].relationships[0].name = "film"
        new[2].relationships[0].renamingIdentifier = "movie"
        new[0].relationships[1].inverseName = "film"
        new.removeAll { $0.name == "Short" }
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let films = try context.fetch(FetchRequest<ManagedObject>(entityName: "Film", sortDescriptors: [FetchSortDescriptor(key: "name")]))
        #expect(try films.map { try $0.value(forKey: "name") as? String } == ["Heat", "Thief"])
        #expect(try films.map { try $0.value(forKey: "year") as? Int64 } == [1995, 1981])
        #expect(try films.map { try $0.value(forKey: "runtime") as? Int64 } == [90, 90])
        #expect(try films.map { try $0.value(forKey: "studio") as? String } == ["Warner", "unknown"])
        // Links survive the renames: tags of each film, the review's film.
        #expect(try films.map { (try $0.value(forKey: "tags") as? Set<ManagedObject>)?.count } == [2, 2])
        let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
        #expect(reviews.count == 1)  // the short review's entity was removed with its rows
        #expect(try (reviews.first?.value(forKey: "film") as? ManagedObject)?.value(forKey: "name") as? String == "Heat")
        // The migrated store takes new objects.
        _ = try insert("Film", in: context, ["name": "Ronin", "year": Int64(1998)])
        try context.save()
        #expect(try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Film")) == 3)
    }

    @Test func aRequiredAttributeWithoutDefaultIsRefusedWhenObjectsExist() throws {
        var new = Self.movies
        new[0].attributes.append(AttributeDescription(name: "budget", type: .integer64))
        let error = try expectRefused(Self.movies, new, code: .unsupportedMigration)
        #expect(error?.message.contains("Movie.budget") == true)
        #expect(error?.message.contains("2 stored Movie objects") == true)
    }

    @Test func aTypeChangeNeedsACustomStage() throws {
        var new = Self.movies
        new[0].attributes[1] = AttributeDescription(name: "year", type: .string)
        let error = try expectRefused(Self.movies, new, code: .unsupportedMigration)
        #expect(error?.message.contains("Movie.year changes type") == true)
        #expect(error?.message.contains("custom stage") == true)
    }

    @Test func aUniquenessConstraintThatStoredRowsBreakIsRefusedNamingThem() throws {
        var new = Self.movies
        new[1].uniquenessConstraints = [["name"]]
        new[0].uniquenessConstraints = [["year"]]
        // Every movie has its own year, so only a clash of tags could fail — there is none;
        // make one: both tags get the same name through a constraint on a shared value.
        new[2].uniquenessConstraints = [["stars"]]
        new[2].attributes[0].defaultValue = .integer(0)
        var old = Self.movies
        old.removeAll { $0.name == "Short" }
        new.removeAll { $0.name == "Short" }
        // Two reviews with the same stars break the new constraint.
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        let container = try PersistentContainer(name: "Store", schema: try #require(schemas[.old]), storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        for stars in [3, 3, 5] { _ = try insert("Review", in: context, ["stars": Int16(stars)]) }
        _ = try insert("Movie", in: context, ["title": "Heat", "year": Int16(1995)])
        try context.save()
        try container.close()
        let before = try Data(contentsOf: url)
        let error = TwoVersions.$schemas.withValue(schemas) {
            #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
        }
        #expect(error?.code == .constraintConflict)
        #expect(error?.message.contains("rows 1,2") == true)
        #expect(try Data(contentsOf: url) == before)
        #expect(try TwoVersions.$schemas.withValue(schemas) { try TwoVersions.versionsForStore(at: url) } == [.old])
    }

    @Test func anAddedUniquenessConstraintIsEnforcedAfterwards() throws {
        var new = Self.movies
        new[1].uniquenessConstraints = [["name"]]
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        _ = try insert("Tag", in: context, ["name": "crime"])
        let error = #expect(throws: StrataError.self) { try context.save() }
        #expect(error?.code == .constraintConflict)
    }

    @Test func aNewParentOverAnExistingEntityKeepsItsObjectsAndLinks() throws {
        var new = Self.movies
        new.append(
            EntityDescription(
                name: "Item", isAbstract: true,
                attributes: [AttributeDescription(name: "label", type: .string, defaultValue: .string("none"))]))
        new[1].superentityName = "Item"
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "label")]))
        #expect(items.count == 2)
        #expect(try items.map { try $0.value(forKey: "label") as? String } == ["none", "none"])
        let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag", sortDescriptors: [FetchSortDescriptor(key: "name")]))
        #expect(try tags.map { try $0.value(forKey: "name") as? String } == ["crime", "night"])
        #expect((try tags[0].value(forKey: "movies") as? Set<ManagedObject>)?.count == 2)
        let heat = try #require(
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", predicate: try FetchPredicate(format: "title == 'Heat'"))).first)
        #expect((try heat.value(forKey: "tags") as? Set<ManagedObject>)?.count == 2)
        // New objects of the moved entity get keys that do not clash with the old ones.
        let tag = try insert("Tag", in: context, ["name": "heist", "label": "new"])
        try tag.setValue(Set([heat]), forKey: "movies")
        try context.save()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 3)
    }

    @Test func anEntityLeavingItsHierarchyKeepsItsObjectsAndLinksToItAreReleased() throws {
        // Movie.featured points at a Review; the stored one is a Short, which stops being a
        // Review: the link must go, not dangle.
        var old = Self.movies
        old[0].relationships.append(RelationshipDescription(name: "featured", destination: "Review"))
        old[2].relationships.append(RelationshipDescription(name: "related", destination: "Review", isToMany: true))
        var new = old
        new[3] = EntityDescription(
            name: "Short",
            attributes: [AttributeDescription(name: "stars", type: .integer16), AttributeDescription(name: "words", type: .integer16)],
            relationships: [RelationshipDescription(name: "movie", destination: "Movie")])
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        let container = try migrate(schemas) { context in
            let heat = try #require(
                try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", predicate: try FetchPredicate(format: "title == 'Heat'"))).first)
            let short = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Short")).first)
            let review = try #require(
                try context.fetch(FetchRequest<ManagedObject>(entityName: "Review", predicate: try FetchPredicate(format: "stars == 5"))).first)
            try heat.setValue(short, forKey: "featured")
            try review.setValue(Set([short, review]), forKey: "related")
        }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let shorts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Short"))
        #expect(shorts.count == 1)
        let short = try #require(shorts.first)
        #expect(try short.value(forKey: "words") as? Int16 == 3)
        #expect(try short.value(forKey: "stars") as? Int16 == 4)
        #expect(try (short.value(forKey: "movie") as? ManagedObject)?.value(forKey: "title") as? String == "Heat")
        let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
        #expect(reviews.count == 1)
        let heat = try #require(
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", predicate: try FetchPredicate(format: "title == 'Heat'"))).first)
        #expect(try heat.value(forKey: "featured") == nil)
        #expect((try heat.value(forKey: "reviews") as? Set<ManagedObject>) == Set(reviews))
        #expect((try reviews[0].value(forKey: "related") as? Set<ManagedObject>) == Set(reviews))
        // Keys keep counting from the moved rows: a new Short does not reuse the old one's.
        let another = try insert("Short", in: context, ["stars": Int16(1), "words": Int16(9)])
        try context.save()
        #expect(another.objectID != short.objectID)
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Short")) == 2)
    }

    @Test func anEntityMovingUnderANewParentWithinItsHierarchyGetsItsDefaults() throws {
        var new = Self.movies
        new.append(
            EntityDescription(
                name: "Critique", superentity: "Review",
                attributes: [AttributeDescription(name: "outlet", type: .string, defaultValue: .string("unknown"))]))
        new[3].superentityName = "Critique"
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let critiques = try context.fetch(FetchRequest<ManagedObject>(entityName: "Critique"))
        #expect(critiques.count == 1)
        let short = try #require(critiques.first)
        #expect(short.entity.name == "Short")
        #expect(try short.value(forKey: "outlet") as? String == "unknown")
        #expect(try short.value(forKey: "words") as? Int16 == 3)
        #expect(try (short.value(forKey: "movie") as? ManagedObject)?.value(forKey: "title") as? String == "Heat")
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Review")) == 2)
    }

    @Test func anSQLiteFailureInAStepIsAMigrationErrorThatLeavesTheStore() throws {
        // Something other than Strata added a view over Movie.studio, so SQLite refuses to drop
        // the column.
        try makeStore(try Schema(Self.movies))
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in try db.execute(sql: "CREATE VIEW studios AS SELECT studio FROM Movie") }
        try queue.close()
        var new = Self.movies
        new[0].attributes.removeAll { $0.name == "studio" }
        let schemas: [TwoVersions: Schema] = [.old: try Schema(Self.movies), .new: try Schema(new)]
        let before = try Data(contentsOf: url)
        let error = TwoVersions.$schemas.withValue(schemas) {
            #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("failed in SQLite") == true, "\(String(describing: error))")
        #expect(error?.message.contains("was not modified") == true)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aChainOfRenamesRenamesEachObjectOnce() throws {
        // Old: Review ← Long, Short. New: Long is called Short, and Short is called Brief.
        var old = Self.movies
        old.append(EntityDescription(name: "Long", superentity: "Review", attributes: [AttributeDescription(name: "pages", type: .integer16)]))
        var new = Self.movies
        new[3].name = "Brief"
        new[3].renamingIdentifier = "Short"
        var long = old[4]
        long.name = "Short"
        long.renamingIdentifier = "Long"
        new.append(long)
        let container = try migrate([.old: try Schema(old), .new: try Schema(new)]) { context in
            _ = try insert("Long", in: context, ["stars": Int16(3), "pages": Int16(12)])
        }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let briefs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Brief"))
        #expect(try briefs.map { try $0.value(forKey: "words") as? Int16 } == [3])  // the old Short
        let shorts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Short"))
        #expect(try shorts.map { try $0.value(forKey: "pages") as? Int16 } == [12])  // the old Long
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Review")) == 3)
    }

    @Test func movedObjectsKeepKeysThatAreNeverGivenAgain() throws {
        var new = Self.movies
        new[3] = EntityDescription(
            name: "Short", attributes: [AttributeDescription(name: "stars", type: .integer16), AttributeDescription(name: "words", type: .integer16)])
        var deletedKey: Int64 = 0
        let container = try migrate([.old: try Schema(Self.movies), .new: try Schema(new)]) { context in
            // A second short, deleted: its key was the highest the Review table gave.
            let short = try insert("Short", in: context, ["stars": Int16(2), "words": Int16(1)])
            try context.save()
            deletedKey = try #require(short.objectID.primaryKey)
            context.delete(short)
        }
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let fresh = try insert("Short", in: context, ["stars": Int16(1), "words": Int16(1)])
        try context.save()
        #expect(try #require(fresh.objectID.primaryKey) > deletedKey)
    }

    @Test func hierarchyMovesThatCannotBeInferredAreRefused() throws {
        // A required to-one whose stored target leaves its destination's hierarchy.
        var required = Self.movies
        required[0].relationships.append(RelationshipDescription(name: "featured", destination: "Review", isOptional: false))
        var requiredNew = required
        requiredNew[3] = EntityDescription(
            name: "Short", attributes: [AttributeDescription(name: "stars", type: .integer16), AttributeDescription(name: "words", type: .integer16)])
        let schemas: [TwoVersions: Schema] = [.old: try Schema(required), .new: try Schema(requiredNew)]
        do {
            let container = try PersistentContainer(name: "Store", schema: try #require(schemas[.old]), storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            let short = try insert("Short", in: context, ["stars": Int16(4), "words": Int16(3)])
            _ = try insert("Movie", in: context, ["title": "Heat", "year": Int16(1995), "featured": short])
            try context.save()
            try container.close()
        }
        let before = try Data(contentsOf: url)
        let error = TwoVersions.$schemas.withValue(schemas) {
            #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
        }
        #expect(error?.code == .unsupportedMigration)
        #expect(error?.message.contains("Movie.featured is required") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: url) == before)

    }

    @Test func anInheritedToManyRelationshipMovingOutOfItsHierarchyIsRefused() throws {
        // Its links are stored with the old parent (a join table named after it).
        var inherited = Self.movies
        inherited[2].relationships.append(RelationshipDescription(name: "labels", destination: "Tag", isToMany: true))
        var inheritedNew = inherited
        inheritedNew[3] = EntityDescription(
            name: "Short", attributes: [AttributeDescription(name: "stars", type: .integer16)],
            relationships: [RelationshipDescription(name: "labels", destination: "Tag", isToMany: true)])
        let moved = try expectRefused(inherited, inheritedNew, code: .unsupportedMigration)
        #expect(moved?.message.contains("Short.labels, which Short inherited from Review") == true, "\(String(describing: moved))")
    }

    @Test func aSubentityTakingItsRemovedRootsTableIsRefused() throws {
        var movie = Self.movies[0]
        movie.relationships.removeAll { $0.name == "reviews" }
        var review = EntityDescription(name: "Review", attributes: [AttributeDescription(name: "stars", type: .integer16)])
        review.renamingIdentifier = "Short"
        let taken = try expectRefused(Self.movies, [movie, Self.movies[1], review], code: .unsupportedMigration)
        #expect(taken?.message.contains("takes the table of the old Review hierarchy") == true, "\(String(describing: taken))")
    }

    /// Another process opens the store with plain SQLite, reads, and closes: were this process's
    /// SQLite locks dropped, it would take itself for the last connection and delete the WAL.
    func touchFromAnotherProcess() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('select count(*) from Tag').fetchall(); c.close()", url.path,
        ]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test(arguments: ["a refused migration", "a second container closing"])
    func theStoreLockNeverDropsAnOpenContainersSQLiteLocks(event: String) throws {
        let schema = try Schema(Self.movies)
        try makeStore(schema)
        let main = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
        if event == "a refused migration" {
            var new = Self.movies
            new[1].attributes.append(AttributeDescription(name: "color", type: .string, isOptional: true))
            let schemas: [TwoVersions: Schema] = [.old: schema, .new: try Schema(new)]
            let refused = TwoVersions.$schemas.withValue(schemas) {
                #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
            }
            #expect(refused?.code == .storeInUse)
        } else {
            let second = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
            try second.close()
        }
        try touchFromAnotherProcess()
        let context = main.newBackgroundContext()
        _ = try insert("Tag", in: context, ["name": "saved after"])
        try context.save()
        try main.close()
        let reopened = try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [.sqlite(url)])
        defer { try? reopened.close() }
        #expect(try reopened.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 3)
    }

    @Test func mergingTwoHierarchiesIsRefused() throws {
        var new = Self.movies
        new[1].superentityName = "Review"
        let error = try expectRefused(Self.movies, new, code: .unsupportedMigration)
        #expect(error?.message.contains("would merge the hierarchies of Review and Tag") == true)
    }

    @Test func aToOneBecomingToManyMovesItsLinksToAJoinTable() throws {
        // Review.movie (to-one) becomes Review.movies (to-many): one-to-many becomes many-to-many.
        var new = Self.movies
        new[2].relationships[0] = RelationshipDescription(
            name: "movies", destination: "Movie", inverse: "reviews", isToMany: true, renamingIdentifier: "movie")
        new[0].relationships[1].inverseName = "movies"
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
        #expect(reviews.count == 2)
        for review in reviews {
            let movies = try #require(try review.value(forKey: "movies") as? Set<ManagedObject>)
            #expect(try movies.map { try $0.value(forKey: "title") as? String } == ["Heat"])
        }
        let heat = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", predicate: try FetchPredicate(format: "title == 'Heat'"))).first)
        #expect((try heat.value(forKey: "reviews") as? Set<ManagedObject>)?.count == 2)
    }

    @Test func aToManyBecomingToOneKeepsSingleLinksAndRefusesSeveral() throws {
        // Movie.reviews ↔ Review.movie becomes one-to-one: every review has one movie, but Heat
        // has two reviews, so the migration is refused, naming Heat's row.
        var new = Self.movies
        new[0].relationships[1] = RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie")
        let error = try expectRefused(Self.movies, new, code: .unsupportedMigration)
        #expect(error?.message.contains("Movie.reviews becomes to-one") == true)
        #expect(error?.message.contains("rows 1") == true)
    }

    @Test func aManyToManyBecomingOneToManyMovesItsLinksToAColumn() throws {
        // Tag.movies (many-to-many with Movie.tags) becomes Tag.movie, to-one: each movie
        // then has many tags, each tag one movie. Give each tag one movie first.
        var old = Self.movies
        old.removeAll { $0.name == "Short" }
        var new = old
        new[1].relationships[0] = RelationshipDescription(name: "movie", destination: "Movie", inverse: "tags", renamingIdentifier: "movies")
        new[0].relationships[0].inverseName = "movie"
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        let container = try PersistentContainer(name: "Store", schema: try #require(schemas[.old]), storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let heat = try insert("Movie", in: context, ["title": "Heat", "year": Int16(1995)])
        let thief = try insert("Movie", in: context, ["title": "Thief", "year": Int16(1981)])
        try insert("Tag", in: context, ["name": "crime"]).setValue(Set([heat]), forKey: "movies")
        try insert("Tag", in: context, ["name": "night"]).setValue(Set([thief]), forKey: "movies")
        _ = try insert("Tag", in: context, ["name": "unused"])
        try context.save()
        try container.close()
        try TwoVersions.$schemas.withValue(schemas) { try TwoVersions.migrationManager().migrateStore(at: url) }
        let migrated = try PersistentContainer(name: "Store", schema: try #require(schemas[.new]), storeDescriptions: [.sqlite(url)])
        defer { try? migrated.close() }
        let tags = try migrated.newBackgroundContext().fetch(
            FetchRequest<ManagedObject>(entityName: "Tag", sortDescriptors: [FetchSortDescriptor(key: "name")]))
        let movies = try tags.map { try ($0.value(forKey: "movie") as? ManagedObject)?.value(forKey: "title") as? String }
        #expect(movies == ["Heat", "Thief", nil])
    }

    // Found in review: renaming identifiers win over names, sibling columns, subentity
    // destinations.

    @Test func aRenamingIdentifierWinsOverANameTheOldSchemaHasToo() throws {
        var new = Self.movies
        new[0].attributes[0] = AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title")
        new[0].attributes[3] = AttributeDescription(name: "title", type: .string, isOptional: true, renamingIdentifier: "studio")
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let movies = try context.fetch(FetchRequest<ManagedObject>(entityName: "Movie", sortDescriptors: [FetchSortDescriptor(key: "heading")]))
        #expect(try movies.map { try $0.value(forKey: "heading") as? String } == ["Heat", "Thief"])
        #expect(try movies.map { try $0.value(forKey: "title") as? String } == ["Warner", nil])
        _ = try insert("Movie", in: context, ["heading": "Ronin", "year": Int16(1998), "title": "UA"])
        try context.save()
    }

    @Test func twoPropertiesContinuingOneAreRefused() throws {
        var new = Self.movies
        new[0].attributes.append(AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "title"))
        new[0].attributes[0] = AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title")
        let error = try expectRefused(Self.movies, new, code: .unsupportedMigration)
        #expect(error?.message.contains("heading and name of Movie both continue title") == true)
    }

    @Test func siblingsGivingASharedColumnDifferentMeaningsAreRefused() throws {
        let old = [
            EntityDescription(name: "Item", isAbstract: true),
            EntityDescription(name: "A", superentity: "Item", attributes: [AttributeDescription(name: "x", type: .string, isOptional: true)]),
            EntityDescription(name: "B", superentity: "Item", attributes: [AttributeDescription(name: "x", type: .string, isOptional: true)]),
        ]
        var new = old
        new[1].attributes = [AttributeDescription(name: "y", type: .string, isOptional: true, renamingIdentifier: "x")]
        let schemas: [TwoVersions: Schema] = [.old: try Schema(old), .new: try Schema(new)]
        try PersistentContainer(name: "Store", schema: try #require(schemas[.old]), storeDescriptions: [.sqlite(url)]).close()
        let error = TwoVersions.$schemas.withValue(schemas) {
            #expect(throws: StrataError.self) { try TwoVersions.migrationManager().migrateStore(at: url) }
        }
        #expect(error?.code == .unsupportedMigration)
        #expect(error?.message.contains("Item.x would split into x, y") == true)
    }

    @Test func aDestinationThatGainsASubentityKeepsRelationshipsUsable() throws {
        var new = Self.movies
        new.append(EntityDescription(name: "Documentary", superentity: "Movie"))
        let container = try migrate(Self.movies, new)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
        #expect(try reviews.map { try ($0.value(forKey: "movie") as? ManagedObject)?.entity.name } == ["Movie", "Movie"])
        let result = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Review")))
        #expect(result.count == 2)
    }
}
