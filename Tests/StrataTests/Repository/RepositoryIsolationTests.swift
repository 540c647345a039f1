import Foundation
import StrataTesting
import Testing

@testable import Strata

/// What a transaction keeps apart and together: other containers' transactions, the call that
/// makes a duplicate, a value that cannot be made, a joined block that throws, error codes.
@Suite(.timeLimit(.minutes(10))) struct RepositoryIsolationTests {
    let fixture: RepoFixture
    let other: RepoFixture
    var repository: Repository { fixture.repository }
    static let seedTitles = ["A", "B", "C", "D", "E"]

    init() throws {
        fixture = try RepoFixture()
        other = try RepoFixture()
    }

    @Test func aTransactionOfAnotherContainerDoesNotHideTheOuterOne() async throws {
        let (outer, inner) = (repository, other.repository)
        try await outer.withTransaction { transaction in
            try await inner.withTransaction { _ in
                _ = try await inner.create(RepoFixture.newMovie(1, title: "B-side"))
                _ = try await outer.create(RepoFixture.newMovie(2, title: "A-inside-B"))
            }
            #expect(try other.storedTitles() == (Self.seedTitles + ["B-side"]).sorted())
            #expect(try fixture.storedTitles() == Self.seedTitles)  // still in the transaction
            transaction.cancel()
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
    }

    @Test func continuingAnotherContainersTransactionIsRefused() async throws {
        let (outer, inner) = (repository, other.repository)
        let error = await repositoryError {
            try await outer.withTransaction { transaction in
                try await inner.withTransaction(continuing: transaction) { _ in
                    _ = try await inner.create(RepoFixture.newMovie(1))
                }
            }
        }
        #expect(error?.code == .foreignTransaction)
        #expect(try other.storedTitles() == Self.seedTitles)
    }

    @Test func inATransactionTheCallThatMakesADuplicateIsTheOneThatFails() async throws {
        let repository = repository
        let duplicate = RepoFixture.seedMovies[0]
        let items = [RepoFixture.newMovie(1), RepoFixture.newMovie(2), duplicate, RepoFixture.newMovie(3), RepoFixture.newMovie(4)]
        let (success, failed) = try await repository.withTransaction(transactionAuthor: "batch") { _ in
            await repository.create(items)
        }
        #expect(success.count == 4)
        #expect(failed.map(\.item) == [duplicate])
        #expect(failed.first?.error.code == .constraintConflict)
        #expect(try fixture.storedTitles().count == 9)
        // Two new objects of one call clash with each other too.
        let clash = await repositoryErrorCode {
            try await repository.withTransaction { _ in
                _ = try await repository.createAtomically([RepoFixture.newMovie(5), RepoFixture.newMovie(5, title: "Twin")])
            }
        }
        #expect(clash == .constraintConflict)
    }

    /// A value type whose initializer from a managed object throws.
    struct Unreadable: UnmanagedModel, ManagedIdReferencable {
        struct Refused: Error {}
        var managedId: ObjectID?
        var id: UUID
        init(id: UUID) { self.id = id }
        init(managed: RepoMovie) throws { throw Refused() }
        func updating(managed: RepoMovie) {
            managed.id = id
            managed.title = "Unreadable"
        }
    }

    @Test(arguments: [false, true])
    func aValueThatCannotBeMadeStoresNothing(inTransaction: Bool) async throws {
        let repository = repository
        try await fixture.run(inTransaction: inTransaction) {
            let code = await repositoryErrorCode { _ = try await repository.create(Unreadable(id: RepoFixture.movieID(300))) }
            #expect(code == .unknown)
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
    }

    @Test func aJoinedBlockThatThrowsAbandonsTheTransactionEvenWhenCaught() async throws {
        struct Inner: Error {}
        let repository = repository
        await #expect(throws: Inner.self) {
            try await repository.withTransaction { _ in
                _ = try await repository.create(RepoFixture.newMovie(1, title: "outer"))
                do {
                    try await repository.withTransaction { _ in
                        _ = try await repository.create(RepoFixture.newMovie(2, title: "inner-thrown"))
                        throw Inner()
                    }
                } catch {}  // caught: the transaction is abandoned all the same
            }
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
    }

    @Test func temporaryForeignAndAmbiguousReferencesHaveTheirOwnCodes() async throws {
        let repository = repository
        let temporary = RepoMovie(context: fixture.container.newBackgroundContext()).objectID
        #expect(temporary.isTemporaryID)
        #expect(await repositoryErrorCode { _ = try await repository.read(temporary, of: RepoMovie.Value.self) } == .unknownObjectID)
        let foreign = try #require(try other.storedMovie(titled: "A")?.objectID)
        #expect(await repositoryErrorCode { _ = try await repository.read(foreign, of: RepoMovie.Value.self) } == .unknownObjectID)
        // A deleted object of this store is still "deleted".
        let a = try #require(try fixture.storedMovie(titled: "A")?.objectID)
        try await fixture.deleteOutside(["A"])
        #expect(await repositoryErrorCode { _ = try await repository.read(a, of: RepoMovie.Value.self) } == .objectDeleted)
    }

    @Test func aFailedPersistableDeleteKeepsTheContextsOtherChanges() throws {
        struct ByTitle: PersistableValue {
            var title: String
            static var primaryAttributeName: String { "title" }
            var identity: String { title }
            init(title: String) { self.title = title }
            init(entity: RepoMovie) { title = entity.title }
            func update(_ entity: RepoMovie) { entity.title = title }
        }
        let context = fixture.container.newBackgroundContext()
        let b = try #require(try context.fetch(FetchRequest<RepoMovie>(predicate: \.title == "B")).first)
        b.boxOffice = 999
        let clash = RepoMovie(context: context)
        try clash.update(from: RepoFixture.seedMovies[2])  // C's unique id again
        #expect(throws: StrataError.self) { try context.delete(ByTitle(title: "A")) }
        #expect(context.hasChanges)
        #expect(b.boxOffice == 999)
    }
}
