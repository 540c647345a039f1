import Foundation
import PostgresNIO
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// Two versions whose schemas each test chooses (the PostgreSQL counterpart of the SQLite
/// tests' `TwoVersions`).
enum OldAndNew: String, ModelVersion {
    case old, new

    @TaskLocal static var schemas: [OldAndNew: Schema] = [:]

    var modelVersion: Schema {
        get throws {
            guard let schema = Self.schemas[self] else { throw StrataError(.migrationFailed, "no schema for \(self)") }
            return schema
        }
    }
}

/// Lightweight migrations of PostgreSQL stores: the checks of SQLite's
/// `LightweightMigrationTests` whose behaviour does not depend on the store, on the same model.
/// Where SQLite compares the file's bytes to show that a refused migration left the store as it
/// was, these compare every object (values and links), the version the store reports, and the
/// tables, columns and indexes its PostgreSQL schema holds.
@Suite(.timeLimit(.minutes(10))) struct PostgresLightweightMigrationTests {
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
            relationships: [
                RelationshipDescription(name: "movies", destination: "Movie", inverse: "tags", isToMany: true)
            ]),
        EntityDescription(
            name: "Review", attributes: [AttributeDescription(name: "stars", type: .integer16)],
            relationships: [RelationshipDescription(name: "movie", destination: "Movie", inverse: "reviews")]),
        EntityDescription(
            name: "Short", superentity: "Review", attributes: [AttributeDescription(name: "words", type: .integer16)]),
    ]

    static func insert(_ entity: String, in context: ObjectContext, _ values: [String: Any]) throws -> ManagedObject {
        let object = ManagedObject(entity: try #require(context.schema.entity(named: entity)))
        context.insert(object)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    static func movie(titled title: String, in context: ObjectContext) throws -> ManagedObject {
        try #require(
            try context.fetch(
                FetchRequest<ManagedObject>(
                    entityName: "Movie", predicate: try FetchPredicate(format: "title == '\(title)'"))
            )
            .first)
    }

    /// Runs `body` off the cooperative threads with a store of its own, which lives (and is
    /// dropped) no sooner than `body` returns.
    static func withFixture(_ body: (Fixture) throws -> Void) async throws {
        try await offThePool {
            let fixture = try Fixture()
            try withExtendedLifetime(fixture) { try body(fixture) }
        }
    }

    /// A store in a PostgreSQL schema of its own (dropped when the fixture goes), and the steps
    /// the tests take with it.
    struct Fixture {
        let database: PostgresTestDatabase
        var description: StoreDescription { database.description() }

        init() throws {
            database = try PostgresTestDatabase()
        }

        func open(_ schema: Schema) throws -> PersistentContainer {
            try PersistentContainer(name: "Store", schema: schema, storeDescriptions: [description])
        }

        /// Writes two movies (one without a studio), two tags linked to both, and a review and
        /// a short review of the first.
        func makeStore(_ schema: Schema) throws {
            let container = try open(schema)
            let context = container.newBackgroundContext()
            let heat = try insert(
                "Movie", in: context, ["title": "Heat", "year": Int16(1995), "rating": 8.5, "studio": "Warner"])
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

        /// Writes the usual store with `old`, migrates it to `new`, and opens it with `new`.
        func migrate(_ old: [EntityDescription], _ new: [EntityDescription]) throws -> PersistentContainer {
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            try makeStore(try #require(schemas[.old]))
            try OldAndNew.$schemas.withValue(schemas) {
                #expect(try OldAndNew.versionsForStore(description) == [.old])
                try OldAndNew.migrationManager().migrateStore(description)
                #expect(try OldAndNew.versionsForStore(description) == [.new])
            }
            return try open(try #require(schemas[.new]))
        }

        /// Writes the usual store with `schemas[.old]`, lets `prepare` add to it (saved after),
        /// migrates it to `schemas[.new]`, and opens it with that schema.
        func migrate(_ schemas: [OldAndNew: Schema], preparing prepare: (ObjectContext) throws -> Void) throws
            -> PersistentContainer
        {
            let oldSchema = try #require(schemas[.old])
            try makeStore(oldSchema)
            let container = try open(oldSchema)
            let context = container.newBackgroundContext()
            try prepare(context)
            try context.save()
            try container.close()
            try OldAndNew.$schemas.withValue(schemas) { try OldAndNew.migrationManager().migrateStore(description) }
            return try open(try #require(schemas[.new]))
        }

        /// Writes the usual store with `old`, expects migrating it to `new` to fail with `code`
        /// and to leave the store as it was.
        func expectRefused(_ old: [EntityDescription], _ new: [EntityDescription], code: StrataError.Code) throws
            -> StrataError?
        {
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            let oldSchema = try #require(schemas[.old])
            try makeStore(oldSchema)
            let error = try expectRefused(schemas)
            #expect(error?.code == code)
            let container = try open(oldSchema)
            defer { try? container.close() }
            #expect(
                try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Movie")) == 2)
            return error
        }

        /// Expects migrating the store to `schemas[.new]` to fail, and to leave it as it was:
        /// the same objects, values and links, still reported as the old version, in the same
        /// tables.
        func expectRefused(_ schemas: [OldAndNew: Schema]) throws -> StrataError? {
            let oldSchema = try #require(schemas[.old])
            let objectsBefore = try objects(oldSchema)
            let tablesBefore = try tables()
            let error = OldAndNew.$schemas.withValue(schemas) {
                #expect(throws: StrataError.self) { try OldAndNew.migrationManager().migrateStore(description) }
            }
            #expect(try tables() == tablesBefore)
            #expect(try OldAndNew.$schemas.withValue(schemas) { try OldAndNew.versionsForStore(description) } == [.old])
            #expect(try objects(oldSchema) == objectsBefore)
            return error
        }

        /// Every stored object, as a line: its ID, entity, values, and the IDs of the objects
        /// it links to.
        func objects(_ schema: Schema) throws -> [String] {
            let container = try open(schema)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            var lines: [String] = []
            for root in schema.entities where root.superentity == nil {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: root.name)) {
                    var line = "\(object.objectID) \(object.entity.name)"
                    for attribute in object.entity.attributes {
                        line += " \(attribute.name)=\(String(describing: try object.value(forKey: attribute.name)))"
                    }
                    for relationship in object.entity.relationships {
                        let value = try object.value(forKey: relationship.name)
                        let targets: [ManagedObject]
                        if let many = value as? Set<ManagedObject> {
                            targets = Array(many)
                        } else if let ordered = value as? [ManagedObject] {
                            targets = ordered
                        } else {
                            targets = (value as? ManagedObject).map { [$0] } ?? []
                        }
                        line +=
                            " \(relationship.name)=[\(targets.map(\.objectID.description).sorted().joined(separator: ","))]"
                    }
                    lines.append(line)
                }
            }
            return lines.sorted()
        }

        /// The tables, views, sequences and indexes of the store's PostgreSQL schema, with their
        /// columns: what another program sees of it.
        func tables() throws -> [String] {
            try database.execute(
                """
                SELECT c.relname::text || ' ' || c.relkind::text || ' ' || COALESCE(string_agg(
                    a.attname::text || ':' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN '!' ELSE '' END,
                    ',' ORDER BY a.attnum), '')
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE n.nspname = current_schema()
                GROUP BY c.relname, c.relkind ORDER BY 1
                """
            ).rows.map { try $0.decode(String.self) }
        }
    }

    @Test func renamesWideningAdditionsAndRemovalsKeepTheData() async throws {
        try await Self.withFixture { fixture in
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
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let films = try context.fetch(
                FetchRequest<ManagedObject>(entityName: "Film", sortDescriptors: [FetchSortDescriptor(key: "name")]))
            #expect(try films.map { try $0.value(forKey: "name") as? String } == ["Heat", "Thief"])
            #expect(try films.map { try $0.value(forKey: "year") as? Int64 } == [1995, 1981])
            #expect(try films.map { try $0.value(forKey: "runtime") as? Int64 } == [90, 90])
            #expect(try films.map { try $0.value(forKey: "studio") as? String } == ["Warner", "unknown"])
            // Links survive the renames: tags of each film, the review's film.
            #expect(try films.map { (try $0.value(forKey: "tags") as? Set<ManagedObject>)?.count } == [2, 2])
            let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
            #expect(reviews.count == 1)  // the short review's entity was removed with its rows
            #expect(
                try (reviews.first?.value(forKey: "film") as? ManagedObject)?.value(forKey: "name") as? String == "Heat"
            )
            // The migrated store takes new objects.
            _ = try Self.insert("Film", in: context, ["name": "Ronin", "year": Int64(1998)])
            try context.save()
            #expect(
                try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Film")) == 3)
        }
    }

    @Test func aRequiredAttributeWithoutDefaultIsRefusedWhenObjectsExist() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[0].attributes.append(AttributeDescription(name: "budget", type: .integer64))
            let error = try fixture.expectRefused(Self.movies, new, code: .unsupportedMigration)
            #expect(error?.message.contains("Movie.budget") == true, "\(String(describing: error))")
            #expect(error?.message.contains("2 stored Movie objects") == true)
        }
    }

    @Test func aTypeChangeNeedsACustomStage() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[0].attributes[1] = AttributeDescription(name: "year", type: .string)
            let error = try fixture.expectRefused(Self.movies, new, code: .unsupportedMigration)
            #expect(error?.message.contains("Movie.year changes type") == true, "\(String(describing: error))")
            #expect(error?.message.contains("custom stage") == true)
        }
    }

    @Test func aUniquenessConstraintThatStoredRowsBreakIsRefusedNamingThem() async throws {
        try await Self.withFixture { fixture in
            var old = Self.movies
            old.removeAll { $0.name == "Short" }
            var new = old
            new[0].uniquenessConstraints = [["year"]]
            new[1].uniquenessConstraints = [["name"]]
            new[2].uniquenessConstraints = [["stars"]]
            new[2].attributes[0].defaultValue = .integer(0)
            // Two reviews with the same stars break the new constraint; the movie's year and
            // the (absent) tags do not.
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            let container = try fixture.open(try #require(schemas[.old]))
            let context = container.newBackgroundContext()
            var reviews: [ManagedObject] = []
            for stars in [3, 3, 5] { reviews.append(try Self.insert("Review", in: context, ["stars": Int16(stars)])) }
            _ = try Self.insert("Movie", in: context, ["title": "Heat", "year": Int16(1995)])
            try context.save()
            try container.close()
            let error = try fixture.expectRefused(schemas)
            #expect(error?.code == .constraintConflict)
            let clashing = try reviews.prefix(2).map { try #require($0.objectID.primaryKey) }.sorted()
            #expect(
                error?.message.contains("rows \(clashing.map(String.init).joined(separator: ","))") == true,
                "\(String(describing: error))")
        }
    }

    @Test func anAddedUniquenessConstraintIsEnforcedAfterwards() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[1].uniquenessConstraints = [["name"]]
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            _ = try Self.insert("Tag", in: context, ["name": "crime"])
            let error = #expect(throws: StrataError.self) { try context.save() }
            #expect(error?.code == .constraintConflict)
            // A name no tag has is still saved.
            context.rollback()
            _ = try Self.insert("Tag", in: context, ["name": "heist"])
            try context.save()
            #expect(
                try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 3)
        }
    }

    @Test func aNewParentOverAnExistingEntityKeepsItsObjectsAndLinks() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new.append(
                EntityDescription(
                    name: "Item", isAbstract: true,
                    attributes: [AttributeDescription(name: "label", type: .string, defaultValue: .string("none"))]))
            new[1].superentityName = "Item"
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let items = try context.fetch(
                FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "label")]))
            #expect(items.count == 2)
            #expect(try items.map { try $0.value(forKey: "label") as? String } == ["none", "none"])
            let tags = try context.fetch(
                FetchRequest<ManagedObject>(entityName: "Tag", sortDescriptors: [FetchSortDescriptor(key: "name")]))
            #expect(try tags.map { try $0.value(forKey: "name") as? String } == ["crime", "night"])
            #expect(try tags.map { (try $0.value(forKey: "movies") as? Set<ManagedObject>)?.count } == [2, 2])
            let heat = try Self.movie(titled: "Heat", in: context)
            #expect((try heat.value(forKey: "tags") as? Set<ManagedObject>)?.count == 2)
            // New objects of the moved entity get keys that do not clash with the old ones.
            let tag = try Self.insert("Tag", in: context, ["name": "heist", "label": "new"])
            try tag.setValue(Set([heat]), forKey: "movies")
            try context.save()
            #expect(!tags.map(\.objectID).contains(tag.objectID))
            let fresh = container.newBackgroundContext()
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 3)
            #expect(
                (try Self.movie(titled: "Heat", in: fresh).value(forKey: "tags") as? Set<ManagedObject>)?.count == 3)
        }
    }

    @Test func anEntityLeavingItsHierarchyKeepsItsObjectsAndLinksToItAreReleased() async throws {
        try await Self.withFixture { fixture in
            // Movie.featured points at a Review; the stored one is a Short, which stops being a
            // Review: the link must go, not dangle.
            var old = Self.movies
            old[0].relationships.append(RelationshipDescription(name: "featured", destination: "Review"))
            old[2].relationships.append(RelationshipDescription(name: "related", destination: "Review", isToMany: true))
            var new = old
            new[3] = EntityDescription(
                name: "Short",
                attributes: [
                    AttributeDescription(name: "stars", type: .integer16),
                    AttributeDescription(name: "words", type: .integer16),
                ],
                relationships: [RelationshipDescription(name: "movie", destination: "Movie")])
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            let container = try fixture.migrate(schemas) { context in
                let heat = try Self.movie(titled: "Heat", in: context)
                let short = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Short")).first)
                let review = try #require(
                    try context.fetch(
                        FetchRequest<ManagedObject>(
                            entityName: "Review", predicate: try FetchPredicate(format: "stars == 5"))
                    ).first)
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
            let heat = try Self.movie(titled: "Heat", in: context)
            #expect(try heat.value(forKey: "featured") == nil)
            #expect((try heat.value(forKey: "reviews") as? Set<ManagedObject>) == Set(reviews))
            let review = try #require(reviews.first)
            #expect((try review.value(forKey: "related") as? Set<ManagedObject>) == Set(reviews))
            // Keys keep counting from the moved rows: a new Short does not reuse the old one's.
            let another = try Self.insert("Short", in: context, ["stars": Int16(1), "words": Int16(9)])
            try context.save()
            #expect(another.objectID != short.objectID)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Short")) == 2)
        }
    }

    @Test func anEntityMovingUnderANewParentWithinItsHierarchyGetsItsDefaults() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new.append(
                EntityDescription(
                    name: "Critique", superentity: "Review",
                    attributes: [AttributeDescription(name: "outlet", type: .string, defaultValue: .string("unknown"))])
            )
            new[3].superentityName = "Critique"
            let container = try fixture.migrate(Self.movies, new)
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
    }

    @Test func aPostgreSQLFailureInAStepIsAMigrationErrorThatLeavesTheStore() async throws {
        try await Self.withFixture { fixture in
            // Something other than Strata added a view over Movie.studio, so PostgreSQL refuses
            // to drop the column.
            try fixture.makeStore(try Schema(Self.movies))
            try fixture.database.execute("CREATE VIEW studios AS SELECT studio FROM \"Movie\"")
            var new = Self.movies
            new[0].attributes.removeAll { $0.name == "studio" }
            let error = try fixture.expectRefused([.old: try Schema(Self.movies), .new: try Schema(new)])
            #expect(error?.code == .migrationFailed)
            #expect(error?.message.contains("failed in PostgreSQL") == true, "\(String(describing: error))")
            #expect(error?.message.contains("was not modified") == true)
        }
    }

    @Test func aChainOfRenamesRenamesEachObjectOnce() async throws {
        try await Self.withFixture { fixture in
            // Old: Review ← Long, Short. New: Long is called Short, and Short is called Brief.
            var old = Self.movies
            old.append(
                EntityDescription(
                    name: "Long", superentity: "Review",
                    attributes: [AttributeDescription(name: "pages", type: .integer16)]))
            var new = Self.movies
            new[3].name = "Brief"
            new[3].renamingIdentifier = "Short"
            var long = old[4]
            long.name = "Short"
            long.renamingIdentifier = "Long"
            new.append(long)
            let container = try fixture.migrate([.old: try Schema(old), .new: try Schema(new)]) { context in
                _ = try Self.insert("Long", in: context, ["stars": Int16(3), "pages": Int16(12)])
            }
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let briefs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Brief"))
            #expect(try briefs.map { try $0.value(forKey: "words") as? Int16 } == [3])  // the old Short
            let shorts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Short"))
            #expect(try shorts.map { try $0.value(forKey: "pages") as? Int16 } == [12])  // the old Long
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Review")) == 3)
        }
    }

    @Test func movedObjectsKeepKeysThatAreNeverGivenAgain() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[3] = EntityDescription(
                name: "Short",
                attributes: [
                    AttributeDescription(name: "stars", type: .integer16),
                    AttributeDescription(name: "words", type: .integer16),
                ])
            var deletedKey: Int64 = 0
            let container = try fixture.migrate([.old: try Schema(Self.movies), .new: try Schema(new)]) { context in
                // A second short, deleted: its key was the highest the Review table gave.
                let short = try Self.insert("Short", in: context, ["stars": Int16(2), "words": Int16(1)])
                try context.save()
                deletedKey = try #require(short.objectID.primaryKey)
                context.delete(short)
            }
            defer { try? container.close() }
            #expect(deletedKey > 0)
            let context = container.newBackgroundContext()
            let fresh = try Self.insert("Short", in: context, ["stars": Int16(1), "words": Int16(1)])
            try context.save()
            #expect(try #require(fresh.objectID.primaryKey) > deletedKey)
        }
    }

    @Test func hierarchyMovesThatCannotBeInferredAreRefused() async throws {
        try await Self.withFixture { fixture in
            // A required to-one whose stored target leaves its destination's hierarchy.
            var required = Self.movies
            required[0].relationships.append(
                RelationshipDescription(name: "featured", destination: "Review", isOptional: false))
            var requiredNew = required
            requiredNew[3] = EntityDescription(
                name: "Short",
                attributes: [
                    AttributeDescription(name: "stars", type: .integer16),
                    AttributeDescription(name: "words", type: .integer16),
                ])
            let schemas: [OldAndNew: Schema] = [.old: try Schema(required), .new: try Schema(requiredNew)]
            let container = try fixture.open(try #require(schemas[.old]))
            let context = container.newBackgroundContext()
            let short = try Self.insert("Short", in: context, ["stars": Int16(4), "words": Int16(3)])
            _ = try Self.insert("Movie", in: context, ["title": "Heat", "year": Int16(1995), "featured": short])
            try context.save()
            try container.close()
            let error = try fixture.expectRefused(schemas)
            #expect(error?.code == .unsupportedMigration)
            #expect(error?.message.contains("Movie.featured is required") == true, "\(String(describing: error))")
        }
    }

    @Test func anInheritedToManyRelationshipMovingOutOfItsHierarchyIsRefused() async throws {
        try await Self.withFixture { fixture in
            // Its links are stored with the old parent (a join table named after it).
            var inherited = Self.movies
            inherited[2].relationships.append(
                RelationshipDescription(name: "labels", destination: "Tag", isToMany: true))
            var inheritedNew = inherited
            inheritedNew[3] = EntityDescription(
                name: "Short", attributes: [AttributeDescription(name: "stars", type: .integer16)],
                relationships: [RelationshipDescription(name: "labels", destination: "Tag", isToMany: true)])
            let moved = try fixture.expectRefused(inherited, inheritedNew, code: .unsupportedMigration)
            #expect(
                moved?.message.contains("Short.labels, which Short inherited from Review") == true,
                "\(String(describing: moved))")
        }
    }

    @Test func aSubentityTakingItsRemovedRootsTableIsRefused() async throws {
        try await Self.withFixture { fixture in
            var movie = Self.movies[0]
            movie.relationships.removeAll { $0.name == "reviews" }
            var review = EntityDescription(
                name: "Review", attributes: [AttributeDescription(name: "stars", type: .integer16)])
            review.renamingIdentifier = "Short"
            let taken = try fixture.expectRefused(
                Self.movies, [movie, Self.movies[1], review], code: .unsupportedMigration)
            #expect(
                taken?.message.contains("takes the table of the old Review hierarchy") == true,
                "\(String(describing: taken))")
        }
    }

    /// The counterpart of SQLite's check that its file locks outlive a refused migration and a
    /// second container closing: here the open container's hold on the store (which keeps
    /// migrations out) must outlive them.
    @Test(arguments: ["a refused migration", "a second container closing"])
    func anOpenContainersHoldOnTheStoreOutlives(event: String) async throws {
        try await Self.withFixture { fixture in
            let schema = try Schema(Self.movies)
            try fixture.makeStore(schema)
            var new = Self.movies
            new[1].attributes.append(AttributeDescription(name: "color", type: .string, isOptional: true))
            let schemas: [OldAndNew: Schema] = [.old: schema, .new: try Schema(new)]
            let main = try fixture.open(schema)
            func migrate() -> StrataError? {
                OldAndNew.$schemas.withValue(schemas) {
                    #expect(throws: StrataError.self) {
                        try OldAndNew.migrationManager().migrateStore(fixture.description)
                    }
                }
            }
            if event == "a refused migration" {
                #expect(migrate()?.code == .storeInUse)
            } else {
                try fixture.open(schema).close()
            }
            #expect(migrate()?.code == .storeInUse, "a migration ran while a container had the store open")
            let context = main.newBackgroundContext()
            _ = try Self.insert("Tag", in: context, ["name": "saved after"])
            try context.save()
            try main.close()
            let reopened = try fixture.open(schema)
            #expect(try reopened.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 3)
            try reopened.close()
            // Once no container has it open, the store migrates.
            try OldAndNew.$schemas.withValue(schemas) {
                try OldAndNew.migrationManager().migrateStore(fixture.description)
                #expect(try OldAndNew.versionsForStore(fixture.description) == [.new])
            }
        }
    }

    @Test func mergingTwoHierarchiesIsRefused() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[1].superentityName = "Review"
            let error = try fixture.expectRefused(Self.movies, new, code: .unsupportedMigration)
            #expect(
                error?.message.contains("would merge the hierarchies of Review and Tag") == true,
                "\(String(describing: error))")
        }
    }

    @Test func aToOneBecomingToManyMovesItsLinksToAJoinTable() async throws {
        try await Self.withFixture { fixture in
            // Review.movie (to-one) becomes Review.movies (to-many): one-to-many becomes many-to-many.
            var new = Self.movies
            new[2].relationships[0] = RelationshipDescription(
                name: "movies", destination: "Movie", inverse: "reviews", isToMany: true, renamingIdentifier: "movie")
            new[0].relationships[1].inverseName = "movies"
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
            #expect(reviews.count == 2)
            for review in reviews {
                let movies = try #require(try review.value(forKey: "movies") as? Set<ManagedObject>)
                #expect(try movies.map { try $0.value(forKey: "title") as? String } == ["Heat"])
            }
            let heat = try Self.movie(titled: "Heat", in: context)
            #expect((try heat.value(forKey: "reviews") as? Set<ManagedObject>)?.count == 2)
            // The join table takes new links.
            let thief = try Self.movie(titled: "Thief", in: context)
            let review = try #require(reviews.first)
            try review.setValue(Set([heat, thief]), forKey: "movies")
            try context.save()
            let fresh = container.newBackgroundContext()
            #expect(
                (try Self.movie(titled: "Thief", in: fresh).value(forKey: "reviews") as? Set<ManagedObject>)?.count == 1
            )
        }
    }

    @Test func aToManyBecomingToOneKeepsSingleLinksAndRefusesSeveral() async throws {
        try await Self.withFixture { fixture in
            // Movie.reviews ↔ Review.movie becomes one-to-one: every review has one movie, but
            // Heat has two reviews, so the migration is refused, naming Heat's row.
            var new = Self.movies
            new[0].relationships[1] = RelationshipDescription(name: "reviews", destination: "Review", inverse: "movie")
            let error = try fixture.expectRefused(Self.movies, new, code: .unsupportedMigration)
            #expect(error?.message.contains("Movie.reviews becomes to-one") == true, "\(String(describing: error))")
            let container = try fixture.open(try Schema(Self.movies))
            defer { try? container.close() }
            let heat = try Self.movie(titled: "Heat", in: container.newBackgroundContext())
            let key = try #require(heat.objectID.primaryKey)
            #expect(error?.message.contains("rows \(key))") == true, "\(String(describing: error))")
        }
    }

    @Test func aManyToManyBecomingOneToManyMovesItsLinksToAColumn() async throws {
        try await Self.withFixture { fixture in
            // Tag.movies (many-to-many with Movie.tags) becomes Tag.movie, to-one: each movie
            // then has many tags, each tag one movie. Give each tag one movie first.
            var old = Self.movies
            old.removeAll { $0.name == "Short" }
            var new = old
            new[1].relationships[0] = RelationshipDescription(
                name: "movie", destination: "Movie", inverse: "tags", renamingIdentifier: "movies")
            new[0].relationships[0].inverseName = "movie"
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            let container = try fixture.open(try #require(schemas[.old]))
            let context = container.newBackgroundContext()
            let heat = try Self.insert("Movie", in: context, ["title": "Heat", "year": Int16(1995)])
            let thief = try Self.insert("Movie", in: context, ["title": "Thief", "year": Int16(1981)])
            try Self.insert("Tag", in: context, ["name": "crime"]).setValue(Set([heat]), forKey: "movies")
            try Self.insert("Tag", in: context, ["name": "night"]).setValue(Set([thief]), forKey: "movies")
            _ = try Self.insert("Tag", in: context, ["name": "unused"])
            try context.save()
            try container.close()
            try OldAndNew.$schemas.withValue(schemas) {
                try OldAndNew.migrationManager().migrateStore(fixture.description)
            }
            let migrated = try fixture.open(try #require(schemas[.new]))
            defer { try? migrated.close() }
            let migratedContext = migrated.newBackgroundContext()
            let tags = try migratedContext.fetch(
                FetchRequest<ManagedObject>(entityName: "Tag", sortDescriptors: [FetchSortDescriptor(key: "name")]))
            let movies = try tags.map {
                try ($0.value(forKey: "movie") as? ManagedObject)?.value(forKey: "title") as? String
            }
            #expect(movies == ["Heat", "Thief", nil])
            let heatTags =
                try Self.movie(titled: "Heat", in: migratedContext).value(forKey: "tags") as? Set<ManagedObject>
            #expect(try heatTags?.map { try $0.value(forKey: "name") as? String } == ["crime"])
        }
    }

    // Found in review: renaming identifiers win over names, sibling columns, subentity
    // destinations.

    @Test func aRenamingIdentifierWinsOverANameTheOldSchemaHasToo() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[0].attributes[0] = AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title")
            new[0].attributes[3] = AttributeDescription(
                name: "title", type: .string, isOptional: true, renamingIdentifier: "studio")
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let movies = try context.fetch(
                FetchRequest<ManagedObject>(entityName: "Movie", sortDescriptors: [FetchSortDescriptor(key: "heading")])
            )
            #expect(try movies.map { try $0.value(forKey: "heading") as? String } == ["Heat", "Thief"])
            #expect(try movies.map { try $0.value(forKey: "title") as? String } == ["Warner", nil])
            _ = try Self.insert("Movie", in: context, ["heading": "Ronin", "year": Int16(1998), "title": "UA"])
            try context.save()
            #expect(
                try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Movie")) == 3)
        }
    }

    @Test func twoPropertiesContinuingOneAreRefused() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new[0].attributes.append(
                AttributeDescription(name: "name", type: .string, isOptional: true, renamingIdentifier: "title"))
            new[0].attributes[0] = AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title")
            let error = try fixture.expectRefused(Self.movies, new, code: .unsupportedMigration)
            #expect(
                error?.message.contains("heading and name of Movie both continue title") == true,
                "\(String(describing: error))")
        }
    }

    @Test func siblingsGivingASharedColumnDifferentMeaningsAreRefused() async throws {
        try await Self.withFixture { fixture in
            let old = [
                EntityDescription(name: "Item", isAbstract: true),
                EntityDescription(
                    name: "A", superentity: "Item",
                    attributes: [AttributeDescription(name: "x", type: .string, isOptional: true)]),
                EntityDescription(
                    name: "B", superentity: "Item",
                    attributes: [AttributeDescription(name: "x", type: .string, isOptional: true)]),
            ]
            var new = old
            new[1].attributes = [
                AttributeDescription(name: "y", type: .string, isOptional: true, renamingIdentifier: "x")
            ]
            let schemas: [OldAndNew: Schema] = [.old: try Schema(old), .new: try Schema(new)]
            let container = try fixture.open(try #require(schemas[.old]))
            let context = container.newBackgroundContext()
            _ = try Self.insert("A", in: context, ["x": "a"])
            _ = try Self.insert("B", in: context, ["x": "b"])
            try context.save()
            try container.close()
            let error = try fixture.expectRefused(schemas)
            #expect(error?.code == .unsupportedMigration)
            #expect(error?.message.contains("Item.x would split into x, y") == true, "\(String(describing: error))")
        }
    }

    @Test func aDestinationThatGainsASubentityKeepsRelationshipsUsable() async throws {
        try await Self.withFixture { fixture in
            var new = Self.movies
            new.append(EntityDescription(name: "Documentary", superentity: "Movie"))
            let container = try fixture.migrate(Self.movies, new)
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let reviews = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
            #expect(
                try reviews.map { try ($0.value(forKey: "movie") as? ManagedObject)?.entity.name } == [
                    "Movie", "Movie",
                ])
            let result = try context.execute(
                BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Review")))
            #expect(result.count == 2)
            #expect(
                try container.newBackgroundContext().count(for: FetchRequest<ManagedObject>(entityName: "Review")) == 0)
        }
    }
}
