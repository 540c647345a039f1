import Foundation
import StrataTesting
import Testing

@testable import Strata

// MARK: - Entities

/// The repository kit's `Movie`: a domain key (`id`, unique), a title, a release date and a box
/// office.
@Entity final class RepoMovie: ManagedObject {
    @Attribute(.unique) var id: UUID = UUID()
    var title: String = ""
    var releaseDate: Date = Date(timeIntervalSinceReferenceDate: 0)
    var boxOffice: Decimal = 0
}

/// A second, unrelated entity: for object IDs of another entity (`typeMismatch`) and for saves
/// that must not wake movie subscriptions.
@Entity final class RepoCritic: ManagedObject {
    var name: String = ""
}

extension RepoMovie.Value: IdentifiedUnmanagedModel {
    var unmanagedId: UUID { id }
    static var unmanagedIdKeyPath: KeyPath<RepoMovie, UUID> { \.id }
}

// MARK: - Hand-written value types (as the kit writes them)

/// A movie that finds its object by object ID only (the kit's `ManagedIdReferencable` model).
struct RepoMovieRecord: UnmanagedModel, ManagedIdReferencable, Hashable {
    var managedId: ObjectID?
    var id: UUID
    var title: String
    var releaseDate: Date
    var boxOffice: Decimal

    init(managedId: ObjectID? = nil, id: UUID, title: String, releaseDate: Date, boxOffice: Decimal) {
        self.managedId = managedId
        self.id = id
        self.title = title
        self.releaseDate = releaseDate
        self.boxOffice = boxOffice
    }

    init(managed: RepoMovie) {
        managedId = managed.objectID
        id = managed.id
        title = managed.title
        releaseDate = managed.releaseDate
        boxOffice = managed.boxOffice
    }

    func updating(managed: RepoMovie) {
        managed.id = id
        managed.title = title
        managed.releaseDate = releaseDate
        managed.boxOffice = boxOffice
    }

    /// The record without its object ID.
    var withoutID: RepoMovieRecord {
        var copy = self
        copy.managedId = nil
        return copy
    }
}

/// A movie that finds its object by the URI of its object ID (the kit's
/// `ManagedIdUrlReferencable` model).
struct RepoMovieLink: UnmanagedModel, ManagedIdUrlReferencable, Hashable {
    var managedIdUrl: URL?
    var id: UUID
    var title: String
    var releaseDate: Date
    var boxOffice: Decimal

    init(managedIdUrl: URL? = nil, id: UUID, title: String, releaseDate: Date, boxOffice: Decimal) {
        self.managedIdUrl = managedIdUrl
        self.id = id
        self.title = title
        self.releaseDate = releaseDate
        self.boxOffice = boxOffice
    }

    init(managed: RepoMovie) {
        managedIdUrl = managed.objectID.uriRepresentation
        id = managed.id
        title = managed.title
        releaseDate = managed.releaseDate
        boxOffice = managed.boxOffice
    }

    func updating(managed: RepoMovie) {
        managed.id = id
        managed.title = title
        managed.releaseDate = releaseDate
        managed.boxOffice = boxOffice
    }

    var withoutURL: RepoMovieLink {
        var copy = self
        copy.managedIdUrl = nil
        return copy
    }
}

/// A fetch-only value that is deliberately not `Equatable`: a subscription cannot drop a
/// recomputed result equal to the previous one, so every recomputation is visible.
struct RepoMovieTitle: FetchableUnmanagedModel {
    let title: String
    init(managed: RepoMovie) { title = managed.title }
}

// MARK: - Fixture

enum RepoAuthors {
    static let seed = "seed"
}

/// A container with a history-tracking SQLite store, seeded with the kit's five movies: titles
/// "A"…"E", box office 10…50, deterministic IDs; A and B share one release date, C, D and E
/// another.
struct RepoFixture: Sendable {
    let directory: TemporaryDirectory
    let container: PersistentContainer
    let repository: Repository

    static let earlyDate = Date(timeIntervalSinceReferenceDate: 86_400 * 1_000)
    static let lateDate = Date(timeIntervalSinceReferenceDate: 86_400 * 2_000)

    /// The deterministic ID of seeded movie `index` (0…4), or of any further test movie.
    static func movieID(_ index: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", index + 1))!
    }

    /// The five seeded movies' values, without object IDs.
    static let seedMovies: [RepoMovie.Value] = ["A", "B", "C", "D", "E"].enumerated().map { index, title in
        RepoMovie.Value(
            id: movieID(index), title: title, releaseDate: index < 2 ? earlyDate : lateDate,
            boxOffice: Decimal((index + 1) * 10))
    }

    /// A new movie value (not stored) with an ID no seeded movie has.
    static func newMovie(_ index: Int, title: String? = nil, boxOffice: Decimal = 60) -> RepoMovie.Value {
        RepoMovie.Value(id: movieID(100 + index), title: title ?? "New \(index)", releaseDate: lateDate, boxOffice: boxOffice)
    }

    init(seeded: Bool = true) throws {
        directory = try TemporaryDirectory()
        container = try PersistentContainer(
            name: "RepoMovies", entities: [RepoMovie.self, RepoCritic.self],
            storeDescriptions: [.sqlite(directory.file("RepoMovies.sqlite"), persistentHistoryTracking: true)])
        repository = Repository(container)
        if seeded {
            let context = container.newBackgroundContext()
            context.transactionAuthor = TransactionAuthor(RepoAuthors.seed)
            for value in Self.seedMovies {
                let movie = RepoMovie(context: context)
                try movie.update(from: value)
            }
            try context.save()
        }
    }

    // MARK: Observing the store (always through a fresh context)

    /// Every stored movie, as values, sorted by title.
    func storedMovies() throws -> [RepoMovie.Value] {
        let context = container.newBackgroundContext()
        return try context.fetch(FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)])).map(\.value)
    }

    /// The stored movies' titles, sorted.
    func storedTitles() throws -> [String] { try storedMovies().map(\.title) }

    /// The stored movie with the domain key `id`, if any.
    func storedMovie(id: UUID) throws -> RepoMovie.Value? {
        try storedMovies().first { $0.id == id }
    }

    /// The stored movie titled `title` (the first, if several).
    func storedMovie(titled title: String) throws -> RepoMovie.Value? {
        try storedMovies().first { $0.title == title }
    }

    /// The authors of every history transaction, oldest first (`nil` for none).
    func historyAuthors() throws -> [String?] {
        try container.fetchHistory(HistoryFetchRequest(includesChanges: false)).map(\.author)
    }

    /// The history transactions recorded by `author`.
    func history(by author: String) throws -> [HistoryTransaction] {
        try container.fetchHistory(HistoryFetchRequest(authors: [author]))
    }

    /// The seeded movie titled `title`, read back from the store (with its object ID).
    func seeded(_ title: String) throws -> RepoMovie.Value {
        try #require(try storedMovie(titled: title))
    }

    /// Deletes the movies titled `titles` outside the repository, in a save of its own.
    func deleteOutside(_ titles: Set<String>) async throws {
        try await container.performBackgroundTask(author: "outside") { context in
            for movie in try context.fetch(FetchRequest<RepoMovie>()) where titles.contains(movie.title) {
                context.delete(movie)
            }
            try context.save()
        }
    }

    /// Sets the box office of the movie titled `title` outside the repository.
    func setBoxOfficeOutside(of title: String, to boxOffice: Decimal) async throws {
        try await container.performBackgroundTask(author: "outside") { context in
            for movie in try context.fetch(FetchRequest<RepoMovie>()) where movie.title == title {
                movie.boxOffice = boxOffice
            }
            try context.save()
        }
    }

    /// Stores a critic (an unrelated entity) outside the repository.
    @discardableResult
    func insertCriticOutside(_ name: String = "Pauline") async throws -> ObjectID {
        try await container.performBackgroundTask(author: "outside") { context in
            let critic = RepoCritic(context: context)
            critic.name = name
            try context.save()
            return critic.objectID
        }
    }

    // MARK: Leak checks

    /// The commit observers registered with the container's SQLite stores.
    var commitObserverCount: Int {
        container.stores.compactMap { ($0 as? SQLiteStore)?.commitObservers.count }.reduce(0, +)
    }

    /// Waits (up to five minutes, a hang detector) until the commit observer count is `expected`; returns the last
    /// count seen.
    func waitForCommitObserverCount(_ expected: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(300)
        while commitObserverCount != expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return commitObserverCount
    }

    // MARK: Running inside or outside a transaction

    /// Runs `body` directly, or inside `withTransaction` (with `author` as the transaction's
    /// author) when `inTransaction`.
    func run<T: Sendable>(
        inTransaction: Bool, author: String? = nil, _ body: () async throws -> T
    ) async throws -> T {
        guard inTransaction else { return try await body() }
        return try await repository.withTransaction(transactionAuthor: author.map { TransactionAuthor($0) }) { _ in
            try await body()
        }
    }
}

/// The code of the `RepositoryError` that `body` throws; records an issue (and returns `nil`)
/// when it throws nothing, or another error.
func repositoryErrorCode(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> RepositoryError.Code? {
    await repositoryError(sourceLocation: sourceLocation, body)?.code
}

/// The `RepositoryError` that `body` throws; records an issue (and returns `nil`) when it throws
/// nothing, or another error.
func repositoryError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> RepositoryError? {
    do {
        try await body()
        Issue.record("expected a RepositoryError; nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as RepositoryError {
        return error
    } catch {
        Issue.record("expected a RepositoryError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A decimal read from an aggregate's `AttributeValue`.
func repoDecimal(_ value: AttributeValue) -> Decimal? {
    switch value {
    case .decimal(let number): number
    case .integer(let number): Decimal(number)
    case .double(let number): Decimal(number)
    default: nil
    }
}
