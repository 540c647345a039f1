import Foundation
import GRDB
import StrataTesting
import Testing

@testable import Strata

@Suite struct SQLiteStoreTests {
    static func schema() throws -> Schema { try Schema([Movie.self]) }

    static func insert(
        _ entity: String, _ attributes: [String: AttributeValue], in schema: Schema, toOne: [String: ObjectID] = [:]
    ) throws
        -> StoreChangeSet.Insert
    {
        let description = try #require(schema.entity(named: entity))
        return StoreChangeSet.Insert(
            objectID: ObjectID(entityName: entity),
            attributes: description.attributes.map { attributes[$0.name] ?? $0.defaultValue },
            toOne: description.relationships.map { toOne[$0.name] })
    }

    /// New rows are written many to a statement, with keys assigned before the rows: keys
    /// follow insertion order, references between new objects of one save arrive intact, and a
    /// key is never given twice, not even after the row that held the highest one is deleted
    /// and the store reopened.
    @Test func newRowsGetKeysInOrderThatAreNeverReused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        var highest: Int64 = 0
        do {
            let container = try PersistentContainer(
                name: "Keys", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            var movies: [Movie] = []
            var reviews: [Review] = []
            for index in 0..<150 {
                // Reviews of movies inserted later, and earlier, in the same save.
                if index.isMultiple(of: 3) { reviews.append(Review(context: context)) }
                let movie = Movie(title: "Movie \(index)", year: 2000)
                context.insert(movie)
                movies.append(movie)
            }
            for (number, review) in reviews.enumerated() {
                review.text = "review \(number)"
                review.movie = movies[(number * 7) % movies.count]
            }
            // One long run of one entity: statements of 64, 32 and 4 rows.
            let people = (0..<100).map { number in
                let person = Person(context: context)
                person.name = "Person \(number)"
                return person
            }
            let early = Person(context: context)
            try context.obtainPermanentIDs(for: [early])
            early.name = "Early"
            try context.save()
            let keys = movies.compactMap(\.objectID.primaryKey)
            #expect(keys.count == 150 && zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
            let fresh = container.newBackgroundContext()
            for (number, review) in reviews.enumerated() {
                let stored = try #require(try fresh.existingObject(with: review.objectID) as? Review)
                #expect(stored.text == "review \(number)")
                #expect(stored.movie?.objectID == movies[(number * 7) % movies.count].objectID)
            }
            #expect((try fresh.existingObject(with: early.objectID) as? Person)?.name == "Early")
            let storedPeople = try fresh.fetch(
                FetchRequest<Person>(predicate: (\Person.name).beginsWith("Person "), sortDescriptors: []))
            #expect(storedPeople.map(\.name) == people.map(\.name))
            #expect(storedPeople.map(\.objectID) == people.map(\.objectID))
            highest = try #require(keys.last)
            context.delete(try #require(movies.last))
            try context.save()
            let next = Movie(title: "Next", year: 2001)
            context.insert(next)
            try context.save()
            #expect((next.objectID.primaryKey ?? 0) == highest + 1)
            highest += 1
            context.delete(next)
            try context.save()
            try container.close()
        }
        let container = try PersistentContainer(
            name: "Keys", entities: [Movie.self, Review.self, Person.self], storeDescriptions: [.sqlite(url)])
        let context = container.newBackgroundContext()
        let after = Movie(title: "After reopening", year: 2002)
        context.insert(after)
        try context.save()
        #expect((after.objectID.primaryKey ?? 0) == highest + 1)
    }

    /// A change set saved straight to the store may carry a permanent ID the store never
    /// reserved; new rows in the same save get keys above it instead of colliding with it.
    @Test func newKeysStayAboveExplicitKeysOfTheSameSave() throws {
        let directory = try TemporaryDirectory()
        let schema = try Self.schema()
        let store = try SQLiteStore(url: directory.file("Movies.sqlite"), schema: schema)
        var explicit = try Self.insert("Person", ["name": "Explicit"], in: schema)
        explicit.objectID = ObjectID(entityName: "Person", storeIdentifier: store.identifier, primaryKey: 2)
        var changes = StoreChangeSet()
        changes.inserts =
            [try Self.insert("Person", ["name": "First"], in: schema), explicit]
            + (try (0..<3).map { _ in try Self.insert("Person", ["name": "Later"], in: schema) })
        let result = try store.save(changes)
        let keys = changes.inserts.compactMap { result.permanentIDs[$0.objectID]?.primaryKey }
        #expect(keys == [3, 2, 4, 5, 6])
        #expect(try store.count(StoreFetchRequest(entityName: "Person")) == 5)
    }

    /// A failing statement's SQL is a field of the error, not part of its message, and holds
    /// no bound value.
    @Test func aFailedStatementsSQLIsAFieldOfTheError() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        let store = try SQLiteStore(url: url, schema: try Self.schema())
        // Another program drops a table the store relies on.
        let other = try DatabaseQueue(path: url.path)
        try other.write { db in try db.execute(sql: "DROP TABLE \"Review\"") }
        let request = StoreFetchRequest(
            entityName: "Review", predicate: .comparison(.keyPath("text"), .equalTo, "secret words"))
        let error = try #require(throws: StrataError.self) { try store.fetch(request) }
        #expect(error.code == .storeError)
        let sql = try #require(error.sql)
        #expect(sql.hasPrefix("SELECT") && sql.contains("\"Review\""))
        #expect(!sql.contains("secret words"))
        #expect(!error.message.contains("SELECT"))
        #expect(error.description.contains(sql))
    }

    @Test func savesAndFetchesRowsAcrossReopening() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        let schema = try Self.schema()
        let id = UUID()
        var identifier = ""
        do {
            let store = try SQLiteStore(url: url, schema: schema)
            identifier = store.identifier
            var changes = StoreChangeSet()
            let movie = try Self.insert(
                "Movie",
                [
                    "id": .uuid(id), "title": "Heat", "boxOffice": .decimal(Decimal(string: "187436818.25")!),
                    "year": 1995,
                ],
                in: schema)
            changes.inserts = [
                movie,
                try Self.insert("Review", ["text": "Great", "stars": 5], in: schema, toOne: ["movie": movie.objectID]),
            ]
            let result = try store.save(changes)
            #expect(result.permanentIDs.count == 2)
        }
        let store = try SQLiteStore(url: url, schema: schema)
        #expect(store.identifier == identifier)
        let movies = try store.fetch(StoreFetchRequest(entityName: "Movie"))
        #expect(movies.count == 1)
        let movie = try #require(movies.first)
        let entity = try #require(schema.entity(named: "Movie"))
        #expect(movie.attributes[entity.attributeNumber(named: "id")!] == .uuid(id))
        #expect(movie.attributes[entity.attributeNumber(named: "title")!] == "Heat")
        #expect(
            movie.attributes[entity.attributeNumber(named: "boxOffice")!] == .decimal(Decimal(string: "187436818.25")!))
        let reviews = try store.relatedObjectIDs(of: movie.objectID, relationshipNamed: "reviews")
        #expect(reviews.count == 1)
        let review = try #require(try store.fetch(StoreFetchRequest(entityName: "Review")).first)
        #expect(review.toOne == [movie.objectID])
        #expect(try store.count(StoreFetchRequest(entityName: "Review")) == 1)
    }

    @Test func rejectsFilesThatAreNotStoresWithoutTouchingThem() throws {
        let directory = try TemporaryDirectory()
        let schema = try Self.schema()
        let text = directory.file("notes.txt")
        try Data("hello, this is not a database".utf8).write(to: text)
        #expect(throws: StrataError.self) { try SQLiteStore(url: text, schema: schema) }
        do { _ = try SQLiteStore(url: text, schema: schema) } catch let error as StrataError {
            #expect(error.code == .notAStore)
        }
        #expect(try Data(contentsOf: text) == Data("hello, this is not a database".utf8))

        let foreign = directory.file("foreign.sqlite")
        let queue = try DatabaseQueue(path: foreign.path)
        try queue.write { try $0.execute(sql: "CREATE TABLE t (x INTEGER)") }
        try queue.close()
        let before = try Data(contentsOf: foreign)
        do {
            _ = try SQLiteStore(url: foreign, schema: schema)
            Issue.record("opened a foreign database")
        } catch let error as StrataError {
            #expect(error.code == .notAStore)
        }
        #expect(try Data(contentsOf: foreign) == before)
    }

    @Test func rejectsTruncatedStores() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        let schema = try Self.schema()
        do {
            let store = try SQLiteStore(url: url, schema: schema)
            var changes = StoreChangeSet()
            changes.inserts = try (0..<200).map {
                try Self.insert("Movie", ["id": .uuid(UUID()), "title": .string("Movie \($0)")], in: schema)
            }
            _ = try store.save(changes)
        }
        // Checkpoint the WAL into the main file, then cut the file in half.
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        let truncated = try Data(contentsOf: url)
        do {
            _ = try SQLiteStore(url: url, schema: schema)
            Issue.record("opened a truncated store")
        } catch let error as StrataError {
            #expect(error.code == .corruptStore)
        }
        #expect(try Data(contentsOf: url) == truncated)
    }

    @Test func rejectsAStoreWrittenWithAnotherSchema() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("Movies.sqlite")
        _ = try SQLiteStore(url: url, schema: try Self.schema())
        var descriptions = try Self.schema().entityDescriptions
        let index = try #require(descriptions.firstIndex { $0.name == "Movie" })
        descriptions[index].attributes.append(AttributeDescription(name: "runtime", type: .integer32, isOptional: true))
        do {
            _ = try SQLiteStore(url: url, schema: try Schema(descriptions))
            Issue.record("opened a store with another schema")
        } catch let error as StrataError {
            #expect(error.code == .incompatibleSchema)
            #expect(error.details.map(\.message) == ["property Movie.runtime added"])
        }
    }

    @Test func detectsConcurrentChangesWithVersions() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.schema())
        let schema = store.schema
        var changes = StoreChangeSet()
        changes.inserts = [try Self.insert("Movie", ["id": .uuid(UUID()), "title": "Heat"], in: schema)]
        let result = try store.save(changes)
        let movieID = try #require(result.permanentIDs.values.first)
        // New rows start at version 2 (see StoreLayout.initialVersion).
        let initial = try #require(result.versions[movieID])
        #expect(initial == 2)
        let title = try #require(schema.entity(named: "Movie")?.attributeNumber(named: "title"))
        var first = StoreChangeSet()
        first.updates = [
            StoreChangeSet.Update(objectID: movieID, expectedVersion: initial, attributes: [title: "Ronin"], toOne: [:])
        ]
        #expect(try store.save(first).versions[movieID] == initial + 1)
        do {
            _ = try store.save(first)
            Issue.record("a stale update was saved")
        } catch let error as StrataError {
            #expect(error.code == .optimisticLockingFailure)
        }
        let row = try #require(try store.fetch(StoreFetchRequest(entityName: "Movie")).first)
        #expect(row.attributes[title] == "Ronin")
        #expect(row.version == initial + 1)
    }

    @Test func uniquenessConflictsSaveNothing() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.schema())
        let id = UUID()
        var changes = StoreChangeSet()
        changes.inserts = [
            try Self.insert("Movie", ["id": .uuid(UUID()), "title": "Other"], in: store.schema),
            try Self.insert("Movie", ["id": .uuid(id), "title": "Heat"], in: store.schema),
            try Self.insert("Movie", ["id": .uuid(id), "title": "Heat 2"], in: store.schema),
        ]
        do {
            _ = try store.save(changes)
            Issue.record("saved two movies with the same id")
        } catch let error as StrataError {
            #expect(error.code == .constraintConflict)
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Movie")) == 0)
    }

    @Test func keepsManyToManyAndOrderedRelationships() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.schema())
        let schema = store.schema
        let movie = try Self.insert("Movie", ["id": .uuid(UUID()), "title": "Heat"], in: schema)
        let people = try (0..<3).map { try Self.insert("Person", ["name": .string("P\($0)")], in: schema) }
        let cast = try #require(schema.entity(named: "Movie")?.relationshipNumber(named: "cast"))
        var changes = StoreChangeSet()
        changes.inserts = [movie] + people
        changes.toManyUpdates = [
            StoreChangeSet.ToManyUpdate(
                objectID: movie.objectID, relationshipNumber: cast, targets: [people[2].objectID, people[0].objectID])
        ]
        let result = try store.save(changes)
        let movieID = try #require(result.permanentIDs[movie.objectID])
        let ids = try store.relatedObjectIDs(of: movieID, relationshipNamed: "cast")
        #expect(ids == [result.permanentIDs[people[2].objectID], result.permanentIDs[people[0].objectID]])
        let person = try #require(result.permanentIDs[people[2].objectID])
        #expect(try store.relatedObjectIDs(of: person, relationshipNamed: "actedIn") == [movieID])
    }

    @Test func countHonoursMatching() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.schema())
        var changes = StoreChangeSet()
        changes.inserts = [
            try Self.insert("Movie", ["id": .uuid(UUID()), "title": "Heat"], in: store.schema),
            try Self.insert("Movie", ["id": .uuid(UUID()), "title": "Ronin"], in: store.schema),
        ]
        _ = try store.save(changes)
        let request = StoreFetchRequest(entityName: "Movie", matching: ["title": "Heat"])
        #expect(try store.fetch(request).count == 1)
        #expect(try store.count(request) == 1)
    }

    @Test func siblingSubentitiesMayStoreDifferentTypesUnderOneName() throws {
        let schema = try Schema([
            EntityDescription(name: "Thing", isAbstract: true),
            EntityDescription(name: "Box", superentity: "Thing", attributes: [.init(name: "code", type: .integer64)]),
            EntityDescription(name: "Bag", superentity: "Thing", attributes: [.init(name: "code", type: .string)]),
        ])
        let store = try SQLiteStore(inMemoryWith: schema)
        var changes = StoreChangeSet()
        changes.inserts = [
            try Self.insert("Box", ["code": 42], in: schema),
            try Self.insert("Bag", ["code": "0042"], in: schema),
        ]
        _ = try store.save(changes)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Box")).first?.attributes == [.integer(42)])
        #expect(try store.fetch(StoreFetchRequest(entityName: "Bag")).first?.attributes == [.string("0042")])
    }

    @Test func anUnwritableLocationIsATypedError() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.file("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        do {
            _ = try SQLiteStore(url: blocker.appendingPathComponent("Movies.sqlite"), schema: try Self.schema())
            Issue.record("a store was created below a regular file")
        } catch let error as StrataError {
            #expect(error.code == .storeNotWritable)
        }
        #expect(try Data(contentsOf: blocker) == Data("x".utf8))
    }
}
