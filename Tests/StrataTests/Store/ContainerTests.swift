import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Container behaviour beyond the store conformance suite: reopening files, closing,
/// concurrent background saves and the main actor's context.
@Suite struct ContainerTests {
    @Test func aFileStoreKeepsObjectsAcrossContainers() throws {
        let directory = try TemporaryDirectory()
        let id: ObjectID
        do {
            let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
            let context = container.newBackgroundContext()
            let movie = Movie(context: context)
            movie.title = "Ronin"
            try context.save()
            id = movie.objectID
            try container.close()
        }
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        let movie = try #require(try context.existingObject(with: id) as? Movie)
        #expect(movie.title == "Ronin")
        let typed: Movie = try context.existingObject(with: TypedObjectID<Movie>(id))
        #expect(typed === movie)
        #expect(throws: StrataError.self) { try context.existingObject(with: TypedObjectID<Review>(id)) }
        #expect(container.objectID(forURIRepresentation: id.uriRepresentation) == id)
    }

    @Test func anInMemoryStoreCanStartAsACopyOfAFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Seed.sqlite")
        let id: ObjectID
        do {
            let container = try PersistentContainer(name: "Seed", entities: [Movie.self], storeDescriptions: [.sqlite(url)])
            let context = container.newBackgroundContext()
            let movie = Movie(context: context)
            movie.title = "Heat"
            try context.save()
            id = movie.objectID
            try container.close()
        }
        let before = try Data(contentsOf: url)

        // A writable copy: saves stay in memory; the same IDs name the same objects.
        let copy = try PersistentContainer(name: "Copy", entities: [Movie.self], storeDescriptions: [.inMemory(copyOf: url)])
        let context = copy.newBackgroundContext()
        let movie = try #require(try context.existingObject(with: id) as? Movie)
        #expect(movie.title == "Heat")
        movie.title = "Thief"
        Movie(context: context).title = "Collateral"
        try context.save()
        #expect(try context.count(for: FetchRequest<Movie>()) == 2)
        try copy.close()
        #expect(try Data(contentsOf: url) == before)

        // A read-only copy refuses saves.
        let readOnly = try PersistentContainer(
            name: "ReadOnly", entities: [Movie.self], storeDescriptions: [.inMemory(copyOf: url, isReadOnly: true)])
        defer { try? readOnly.close() }
        let reader = readOnly.newBackgroundContext()
        #expect(try reader.fetch(FetchRequest<Movie>()).map(\.title) == ["Heat"])
        Movie(context: reader).title = "Ronin"
        let error = #expect(throws: StrataError.self) { try reader.save() }
        #expect(error?.code == .storeNotWritable)

        // A file that is not a store of the schema is refused as a file open would refuse it.
        try Data("not a store".utf8).write(to: directory.url.appendingPathComponent("Text.sqlite"))
        let foreign = #expect(throws: StrataError.self) {
            try PersistentContainer(
                name: "Foreign", entities: [Movie.self],
                storeDescriptions: [.inMemory(copyOf: directory.url.appendingPathComponent("Text.sqlite"))])
        }
        #expect(foreign?.code == .notAStore)

        // A file and its copy in one container would make object IDs ambiguous.
        let both = #expect(throws: StrataError.self) {
            try PersistentContainer(name: "Both", entities: [Movie.self], storeDescriptions: [.sqlite(url), .inMemory(copyOf: url)])
        }
        #expect(both?.message.contains("open the same store") == true)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func containersOfTheSameClassesShareOneSchema() throws {
        let directory = try TemporaryDirectory()
        let first = try PersistentContainer(
            name: "First", entities: [Movie.self],
            storeDescriptions: [.sqlite(directory.url.appendingPathComponent("a.sqlite"))])
        let second = try PersistentContainer(
            name: "Second", entities: [Movie.self], storeDescriptions: [.inMemory])
        #expect(first.schema === second.schema)
        #expect(try Schema.shared(for: [Movie.self]) === first.schema)
        #expect(try Schema.shared(for: [Movie.self, Review.self]) !== first.schema)
        // Objects of either container save and fetch as before.
        for container in [first, second] {
            let context = container.newBackgroundContext()
            Movie(context: context).title = "Heat"
            try context.save()
            #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.title) == ["Heat"])
        }
    }

    @Test func aClosedContainerRefusesToSave() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        _ = Movie(context: context)
        try container.close()
        #expect(throws: StrataError.self) { try context.save() }
        do { try context.save() } catch let error as StrataError { #expect(error.code == .storeClosed) }
    }

    @Test func backgroundTasksSaveConcurrently() async throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    try await container.performBackgroundTask(author: "worker \(worker)") { context in
                        for index in 0..<25 {
                            let movie = Movie(context: context)
                            movie.title = "Movie \(worker)-\(index)"
                            try context.save()
                        }
                        return try context.count(for: Movie.self)
                    }
                }
            }
            for try await count in group { #expect(count >= 25) }
        }
        let total = try await container.performBackgroundTask { try $0.count(for: Movie.self) }
        #expect(total == 100)
    }

    @Test @MainActor func theViewContextIsOneContextOnTheMainActor() throws {
        let container = try PersistentContainer(name: "View", entities: [Movie.self], storeDescriptions: [.inMemory])
        #expect(container.viewContext === container.viewContext)
        #expect(container.viewContext.name == "viewContext")
    }

    @Test func permanentIDsCanBeObtainedBeforeSaving() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        try context.obtainPermanentIDs(for: [movie, review])
        let id = movie.objectID
        #expect(!id.isTemporaryID)
        #expect(movie.isInserted)
        #expect(context.registeredObject(for: id) === movie)
        let other = container.newBackgroundContext()
        let extra = Movie(context: other)
        extra.title = "Saved in between"
        try other.save()
        #expect(extra.objectID != id)
        try context.save()
        #expect(movie.objectID == id)
        let reader = container.newBackgroundContext()
        let loaded = try #require(try reader.existingObject(with: id) as? Movie)
        #expect(loaded.title == "Heat")
        #expect(loaded.reviews.count == 1)
    }

    @Test func configurationsRouteEntitiesToTheirStores() throws {
        let schema = try Schema(
            [
                EntityDescription(name: "Note", attributes: [.init(name: "text", type: .string, defaultValue: "")]),
                EntityDescription(name: "Tag", attributes: [.init(name: "label", type: .string, defaultValue: "")]),
            ],
            configurations: ["Notes": ["Note"], "Tags": ["Tag"]])
        let directory = try TemporaryDirectory()
        let container = try PersistentContainer(
            name: "Routed", schema: schema,
            storeDescriptions: [
                .sqlite(directory.file("Notes.sqlite"), configuration: "Notes"),
                .sqlite(directory.file("Tags.sqlite"), configuration: "Tags"),
            ])
        let context = container.newBackgroundContext()
        let note = ManagedObject(entity: try #require(schema.entity(named: "Note")))
        try note.setValue("Remember", forKey: "text")
        context.insert(note)
        let tag = ManagedObject(entity: try #require(schema.entity(named: "Tag")))
        try tag.setValue("todo", forKey: "label")
        context.insert(tag)
        try context.save()
        #expect(note.objectID.storeIdentifier == container.stores[0].identifier)
        #expect(tag.objectID.storeIdentifier == container.stores[1].identifier)
        #expect(try container.stores[0].count(StoreFetchRequest(entityName: "Note")) == 1)
        #expect(try container.stores[1].count(StoreFetchRequest(entityName: "Tag")) == 1)
        #expect(container.stores[0].schema.entity(named: "Tag") == nil)
        let reader = container.newBackgroundContext()
        #expect(try reader.fetch(entityName: "Tag").map { try $0.value(forKey: "label") as? String } == ["todo"])
    }

    @Test func insertingAnObjectOfAnotherContextIsATypedErrorNotACrash() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.inMemory.makeContainer([Movie.self], in: directory)
        let first = container.newBackgroundContext()
        let movie = Movie(context: first)
        movie.title = "Heat"
        let second = container.newBackgroundContext()
        second.insert(movie)
        #expect(movie.context === first)
        do {
            try second.save()
            Issue.record("inserting another context's object was accepted")
        } catch let error as StrataError {
            #expect(error.details.map(\.code) == [.wrongContext])
        }
        try second.save()  // the error is reported once
        try first.save()
        #expect(try container.newBackgroundContext().count(for: Movie.self) == 1)
    }

    @Test func observersHearEveryCommitUntilCancelled() throws {
        let directory = try TemporaryDirectory()
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self], in: directory)
        let commits = CommitLog()
        let observation = container.addCommitObserver { commits.append($0) }
        let context = container.newBackgroundContext()
        context.transactionAuthor = "tester"
        context.name = "editor"
        let movie = Movie(context: context)
        movie.title = "Heat"
        try context.save()
        movie.title = "Heat (1995)"
        try context.save()
        context.delete(movie)
        try context.save()
        let seen = commits.all
        #expect(seen.count == 3)
        #expect(seen.first?.insertedObjectIDs == [movie.objectID])
        #expect(seen.first?.author == "tester")
        #expect(seen.first?.contextName == "editor")
        #expect(seen.dropFirst().first?.updatedObjectIDs == [movie.objectID])
        #expect(seen.last?.deletedObjectIDs == [movie.objectID])
        observation.cancel()
        let other = Movie(context: context)
        other.title = "Ronin"
        try context.save()
        #expect(commits.all.count == 3)
        // The container keeps one observer of its own (for savedChanges() and merging).
        let store = try #require(container.stores.first as? SQLiteStore)
        #expect(store.commitObservers.count == 1)
        do {
            let released = container.addCommitObserver { _ in }
            #expect(store.commitObservers.count == 2)
            _ = released
        }
        #expect(store.commitObservers.count == 1)
    }
}

/// Commits seen by an observer, safe to append to from any thread.
final class CommitLog: Sendable {
    private let lock = NSLock()
    // Only touched while `lock` is held.
    nonisolated(unsafe) private var commits: [StoreCommit] = []

    func append(_ commit: StoreCommit) {
        lock.withLock { commits.append(commit) }
    }

    var all: [StoreCommit] { lock.withLock { commits } }
}
