import Foundation
import Strata
import Testing

/// The repository kit (CoreDataRepository-style): value types in and out, async CRUD,
/// batches, fetches, aggregates and live subscriptions.
enum RepoGuide {
    // sample: Bridging value types and managed objects
    @Entity final class RepoMovie: ManagedObject {
        @Attribute(.unique) var id: UUID = UUID()
        var title: String = ""
        var releaseDate: Date = Date(timeIntervalSince1970: 0)
        var boxOffice: Decimal = 0
    }

    struct Movie: UnmanagedModel, ManagedIdReferencable, Equatable {
        typealias ManagedModel = RepoMovie
        let id: UUID
        var title: String = ""
        var releaseDate: Date
        var boxOffice: Decimal = 0
        var managedId: ObjectID?
    }
    // end sample
}

// sample: Bridging value types and managed objects (conformance)
extension RepoGuide.Movie {
    /// Managed to value: the kit's `RepoMovie.asUnmanaged`.
    init(managed: ManagedModel) {
        self.init(
            id: managed.id, title: managed.title, releaseDate: managed.releaseDate,
            boxOffice: managed.boxOffice, managedId: managed.objectID)
    }

    /// Value to managed: the kit's `RepoMovie.update(from:)`. The default
    /// `asManagedModel(in:)` (the kit's `asRepoManaged(in:)`) inserts a `RepoMovie` and calls it.
    func updating(managed: ManagedModel) {
        managed.id = id
        managed.title = title
        managed.releaseDate = releaseDate
        managed.boxOffice = boxOffice
    }
}
// end sample

extension RepoGuide {
    static func makeContainer() throws -> PersistentContainer {
        try PersistentContainer(name: "Movies", entities: [RepoMovie.self], storeDescriptions: [.inMemory])
    }

    static let released = Date(timeIntervalSince1970: 1_000_000_000)

    /// The stored titles, read by a fresh context.
    static func storedTitles(in container: PersistentContainer) throws -> [String] {
        try container.newBackgroundContext().fetch(FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)]))
            .map(\.title)
    }

    @Suite(.timeLimit(.minutes(10))) struct Samples {
        @Test func bridgingValueTypesAndManagedObjects() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()
            let movie = Movie(id: UUID(), title: "Heat", releaseDate: released, boxOffice: 187)

            let object = try movie.asManagedModel(in: context)
            #expect(object.isInserted)
            #expect(object.id == movie.id && object.title == "Heat" && object.boxOffice == 187)
            try context.save()

            let value = Movie(managed: object)
            #expect(value.managedId == object.objectID)
            #expect(value == Movie(id: movie.id, title: "Heat", releaseDate: released, boxOffice: 187, managedId: object.objectID))
            #expect(try value.readManaged(from: context) === object)
            #expect(Movie.managedFetchRequest().entityName == "RepoMovie")
            #expect(throws: RepositoryError.self) { try movie.readManaged(from: context) }  // no managedId yet
        }

        @Test func creatingAValue() async throws {
            let container = try makeContainer()

            // sample: Creating a value
            let repository = Repository(container)
            let movie = Movie(
                id: UUID(), title: "The Madagascar Penguins in a Christmas Caper", releaseDate: Date(), boxOffice: 100)
            let created = try await repository.create(movie, transactionAuthor: "editor")
            // `created` is read back from the stored object: its managedId is set.
            // end sample
            #expect(created.managedId != nil)
            #expect(created.id == movie.id && created.title == movie.title && created.boxOffice == 100)
            #expect(try storedTitles(in: container) == [movie.title])

            // The same id again breaks the unique constraint: an error, and nothing stored.
            let clash = await #expect(throws: RepositoryError.self) {
                try await repository.create(Movie(id: movie.id, title: "Copy", releaseDate: released))
            }
            #expect(clash?.code == .constraintConflict)
            #expect(try storedTitles(in: container) == [movie.title])
        }

        @Test func readingAndUpdating() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            let created = try await repository.create(Movie(id: UUID(), title: "Heat", releaseDate: released))

            // sample: Reading and updating
            var movie = try await repository.read(created)  // finds the object by its managedId
            movie.title = "Heat (1995)"
            movie = try await repository.update(with: movie, transactionAuthor: "editor")
            // end sample
            #expect(movie.title == "Heat (1995)")
            #expect(movie.managedId == created.managedId)
            #expect(try storedTitles(in: container) == ["Heat (1995)"])

            let unsaved = await #expect(throws: RepositoryError.self) {
                try await repository.read(Movie(id: UUID(), title: "Never stored", releaseDate: released))
            }
            #expect(unsaved?.code == .noObjectID)
        }

        @Test func deleting() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            let movie = try await repository.create(Movie(id: UUID(), title: "Heat", releaseDate: released))
            _ = try await repository.create(Movie(id: UUID(), title: "Ronin", releaseDate: released))

            // sample: Deleting
            try await repository.delete(movie, transactionAuthor: "editor")
            // end sample
            #expect(try storedTitles(in: container) == ["Ronin"])

            let gone = await #expect(throws: RepositoryError.self) { try await repository.read(movie) }
            #expect(gone?.code == .objectDeleted)
            let again = await #expect(throws: RepositoryError.self) { try await repository.delete(movie) }
            #expect(again?.code == .objectDeleted)
        }

        @Test func fetchingValues() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            for title in ["B", "A", "C"] {
                _ = try await repository.create(Movie(id: UUID(), title: title, releaseDate: released))
            }

            // sample: Fetching values
            let request = FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)])
            let movies = try await repository.fetch(request, as: Movie.self)
            // end sample
            #expect(movies.map(\.title) == ["A", "B", "C"])
            #expect(movies.allSatisfy { $0.managedId != nil })
        }

        @Test func subscribingToAFetch() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            _ = try await repository.create(Movie(id: UUID(), title: "A", releaseDate: released))
            let request = FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)])
            var received: [[String]] = []

            // sample: Subscribing to a fetch
            for await result in repository.fetchSubscription(request, of: Movie.self) {
                received.append(try result.get().map(\.title))
                if received.count == 2 { break }  // the kit's cancellable.cancel()
                _ = try await repository.create(Movie(id: UUID(), title: "B", releaseDate: .now))
            }
            // end sample
            #expect(received == [["A"], ["A", "B"]])
        }

        @Test func summingAnAttribute() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            for (title, boxOffice) in [("A", Decimal(100)), ("B", Decimal(200)), ("C", Decimal(string: "50.25")!)] {
                _ = try await repository.create(Movie(id: UUID(), title: title, releaseDate: released, boxOffice: boxOffice))
            }

            // sample: Summing an attribute
            let total: Decimal = try await repository.sum(\RepoMovie.boxOffice)
            let bigOnes = try await repository.sum(\RepoMovie.boxOffice, where: \.boxOffice >= 100)
            let count: Int = try await repository.count(of: RepoMovie.self)
            let largest = try await repository.max(\RepoMovie.boxOffice)  // nil when nothing is stored
            // end sample
            #expect(total == Decimal(string: "350.25")!)
            #expect(bigOnes == 300)
            #expect(count == 3)
            #expect(largest == 200)
        }

        @Test func subscribingToAnAggregate() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            _ = try await repository.create(Movie(id: UUID(), title: "A", releaseDate: released, boxOffice: 100))
            var totals: [Decimal] = []

            // sample: Subscribing to an aggregate
            for await total in repository.sumSubscription(\RepoMovie.boxOffice) {
                totals.append(try total.get())
                if totals.count == 2 { break }
                _ = try await repository.create(Movie(id: UUID(), title: "B", releaseDate: .now, boxOffice: 50))
            }
            // end sample
            #expect(totals == [100, 150])
        }

        @Test func insertingInABatch() async throws {
            let container = try makeContainer()
            let repository = Repository(container)

            // sample: Inserting in a batch
            let movies: [[String: Any]] = [
                ["id": UUID(), "title": "A", "releaseDate": Date()],
                ["id": UUID(), "title": "B", "releaseDate": Date()],
                ["id": UUID(), "title": "C", "releaseDate": Date()],
                ["id": UUID(), "title": "D", "releaseDate": Date()],
                ["id": UUID(), "title": "E", "releaseDate": Date()],
            ]
            var request = BatchInsertRequest(entity: RepoMovie.self, objects: movies)
            request.resultType = .count
            let result = try await repository.insert(request, transactionAuthor: "import")
            // result.count: the number of movies inserted
            // end sample
            #expect(result.kind == .insert)
            #expect(result.count == 5)
            #expect(try storedTitles(in: container) == ["A", "B", "C", "D", "E"])
        }

        @Test func creatingManyValues() async throws {
            let container = try makeContainer()
            let repository = Repository(container)
            let heat = Movie(id: UUID(), title: "Heat", releaseDate: released)
            let movies = [heat, Movie(id: UUID(), title: "Ronin", releaseDate: released), Movie(id: heat.id, title: "Heat again", releaseDate: released)]
            let more = [Movie(id: UUID(), title: "Alien", releaseDate: released), Movie(id: UUID(), title: "Brazil", releaseDate: released)]

            // sample: Creating many values
            // Each item on its own; each failure names its item:
            let (created, failed) = await repository.create(movies, transactionAuthor: "import")
            // One save, or nothing:
            let stored = try await repository.createAtomically(more, transactionAuthor: "import")
            // end sample
            #expect(created.map(\.title) == ["Heat", "Ronin"])
            #expect(failed.map(\.item.title) == ["Heat again"])
            #expect(failed.map(\.error.code) == [.constraintConflict])
            #expect(stored.map(\.title) == ["Alien", "Brazil"])
            #expect(try storedTitles(in: container) == ["Alien", "Brazil", "Heat", "Ronin"])

            // An atomic batch with one bad item stores none of them.
            await #expect(throws: RepositoryError.self) {
                try await repository.createAtomically(
                    [Movie(id: UUID(), title: "Casablanca", releaseDate: released), Movie(id: heat.id, title: "Clash", releaseDate: released)])
            }
            #expect(try storedTitles(in: container) == ["Alien", "Brazil", "Heat", "Ronin"])
        }
    }
}
