import Foundation
import StrataTesting
import Testing

@testable import Strata

/// `Repository.withTransaction`: one save with the transaction's author, or nothing at all.
@Suite(.timeLimit(.minutes(10))) struct RepositoryTransactionTests {
    let fixture: RepoFixture
    var repository: Repository { fixture.repository }

    init() throws {
        fixture = try RepoFixture()
    }

    struct Abandon: Error {}

    static let seedTitles = ["A", "B", "C", "D", "E"]

    var historyCount: Int {
        get throws { try fixture.historyAuthors().count }
    }

    @Test func threeCreatesAreSavedOnceWithTheTransactionAuthor() async throws {
        let repository = repository
        let historyBefore = try historyCount
        let created = try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            #expect(Transaction.current === transaction)
            var created: [RepoMovie.Value] = []
            for index in 1...3 {
                created.append(try await repository.create(RepoFixture.newMovie(index), transactionAuthor: "WRONG_AUTHOR"))
            }
            return created
        }
        #expect(Transaction.current == nil)
        #expect(created.map(\.title) == ["New 1", "New 2", "New 3"])
        #expect(created.allSatisfy { $0.objectID.map { !$0.isTemporaryID } == true })
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2", "New 3"])
        // The IDs handed out inside the transaction are the stored objects' IDs.
        for value in created {
            #expect(try fixture.storedMovie(id: value.id)?.objectID == value.objectID)
        }
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "WRONG_AUTHOR").isEmpty)
        #expect(try historyCount == historyBefore + 1)
        let changes = try #require(try fixture.history(by: "outer").first?.changes)
        #expect(changes.count == 3)
    }

    @Test func mixedWritesInOneTransaction() async throws {
        let repository = repository
        var a = try fixture.seeded("A")
        let b = try fixture.seeded("B")
        try await repository.withTransaction(transactionAuthor: "outer") { _ in
            _ = try await repository.create(RepoFixture.newMovie(1, title: "F"), transactionAuthor: "WRONG_AUTHOR")
            a.title = "A2"
            _ = try await repository.update(with: a, transactionAuthor: "WRONG_AUTHOR")
            try await repository.delete(b, transactionAuthor: "WRONG_AUTHOR")
            // Not stored yet.
            #expect(try fixture.storedTitles() == Self.seedTitles)
        }
        #expect(try fixture.storedTitles() == ["A2", "C", "D", "E", "F"])
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "WRONG_AUTHOR").isEmpty)
    }

    @Test func aBlockThatThrowsStoresNothing() async throws {
        let repository = repository
        let historyBefore = try historyCount
        await #expect(throws: Abandon.self) {
            try await repository.withTransaction(transactionAuthor: "outer") { _ in
                _ = try await repository.create(RepoFixture.newMovie(1))
                _ = try await repository.create(RepoFixture.newMovie(2))
                try await repository.delete(try fixture.seeded("A"))
                throw Abandon()
            }
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try historyCount == historyBefore)
        #expect(try fixture.history(by: "outer").isEmpty)
    }

    @Test func aDuplicateInsideTheTransactionFailsTheWholeTransaction() async throws {
        let repository = repository
        let historyBefore = try historyCount
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup")
        let code = await repositoryErrorCode {
            try await repository.withTransaction(transactionAuthor: "outer") { _ in
                _ = try await repository.create(RepoFixture.newMovie(1))
                _ = try await repository.create(duplicate)
                _ = try await repository.create(RepoFixture.newMovie(2))
            }
        }
        #expect(code == .constraintConflict)
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.storedMovie(id: duplicate.id)?.title == "C")
        #expect(try historyCount == historyBefore)
    }

    @Test func cancelStoresNothingAndReturnsTheResult() async throws {
        let repository = repository
        let historyBefore = try historyCount
        let result = try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await repository.create(RepoFixture.newMovie(1))
            try await repository.delete(try fixture.seeded("A"))
            #expect(!transaction.isCancelled)
            transaction.cancel()
            #expect(transaction.isCancelled)
            return "the result"
        }
        #expect(result == "the result")
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try historyCount == historyBefore)
    }

    /// After `cancel()` the transaction's reads no longer see its writes, and later writes are
    /// not stored either.
    @Test func writesAfterCancelAreNotStoredEither() async throws {
        let repository = repository
        let movie = RepoFixture.newMovie(1)
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await repository.create(movie)
            transaction.cancel()
            let code = await repositoryErrorCode { _ = try await repository.read(movie.id, of: RepoMovie.Value.self) }
            #expect(code == .noMatch)
            _ = try await repository.create(RepoFixture.newMovie(2))
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.history(by: "outer").isEmpty)
    }

    @Test func readsInsideTheTransactionSeeItsUnsavedWrites() async throws {
        let repository = repository
        let movie = RepoFixture.newMovie(1, title: "F", boxOffice: 60)
        try await repository.withTransaction(transactionAuthor: "outer") { _ in
            let created = try await repository.create(movie)
            let objectID = try #require(created.objectID)
            #expect(try await repository.read(created) == created)
            #expect(try await repository.read(movie.id, of: RepoMovie.Value.self) == created)
            #expect(try await repository.read(objectID, of: RepoMovie.Value.self) == created)
            #expect(try await repository.read(objectID.uriRepresentation, of: RepoMovie.Value.self) == created)
            let titles = try await repository.fetch(
                FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)]), as: RepoMovie.Value.self
            ).map(\.title)
            #expect(titles == Self.seedTitles + ["F"])

            // An update and a delete inside are seen too.
            var updated = created
            updated.title = "F2"
            _ = try await repository.update(with: updated)
            #expect(try await repository.read(movie.id, of: RepoMovie.Value.self).title == "F2")
            try await repository.delete(try fixture.seeded("A"))
            let afterDelete = try await repository.fetch(FetchRequest<RepoMovie>(), as: RepoMovie.Value.self).map(\.title)
            #expect(Set(afterDelete) == ["B", "C", "D", "E", "F2"])

            // …but nothing is stored yet.
            #expect(try fixture.storedMovie(id: movie.id) == nil)
            #expect(try fixture.storedTitles() == Self.seedTitles)
        }
        #expect(try fixture.storedTitles() == ["B", "C", "D", "E", "F2"])
    }

    @Test func childTasksJoinTheTransaction() async throws {
        let repository = repository
        try await repository.withTransaction(transactionAuthor: "outer") { _ in
            let child = Task { try await repository.create(RepoFixture.newMovie(1), transactionAuthor: "WRONG_AUTHOR") }
            async let structured = repository.create(RepoFixture.newMovie(2), transactionAuthor: "WRONG_AUTHOR")
            _ = try await child.value
            _ = try await structured
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await repository.create(RepoFixture.newMovie(3)) }
                try await group.waitForAll()
            }
            #expect(try fixture.storedTitles() == Self.seedTitles)
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2", "New 3"])
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "WRONG_AUTHOR").isEmpty)
    }

    @Test func childTaskWritesAreRolledBackWithTheTransaction() async throws {
        let repository = repository
        let historyBefore = try historyCount
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            let child = Task { try await repository.create(RepoFixture.newMovie(1)) }
            async let structured = repository.create(RepoFixture.newMovie(2))
            _ = try await child.value
            _ = try await structured
            transaction.cancel()
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try historyCount == historyBefore)
    }

    @Test func aDetachedTaskJoinsWithContinuing() async throws {
        let repository = repository
        let fixture = fixture
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await repository.create(RepoFixture.newMovie(1))
            try await Task.detached {
                #expect(Transaction.current == nil)
                try await repository.withTransaction(continuing: transaction, transactionAuthor: "WRONG_AUTHOR") { joined in
                    #expect(joined === transaction)
                    _ = try await repository.create(RepoFixture.newMovie(2), transactionAuthor: "WRONG_AUTHOR")
                }
            }.value
            // It joined: nothing is stored before the transaction ends.
            #expect(try fixture.storedMovie(id: RepoFixture.movieID(102)) == nil)
            #expect(try await repository.read(RepoFixture.movieID(102), of: RepoMovie.Value.self).title == "New 2")
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2"])
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "WRONG_AUTHOR").isEmpty)
    }

    /// Without `continuing:`, a detached task is outside the transaction: its write is stored
    /// at once, and survives the transaction's cancel.
    @Test func aDetachedTaskWithoutContinuingDoesNotJoin() async throws {
        let repository = repository
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await Task.detached {
                try await repository.create(RepoFixture.newMovie(1), transactionAuthor: "detached")
            }.value
            transaction.cancel()
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1"])
        #expect(try fixture.history(by: "detached").count == 1)
    }

    @Test func aNestedTransactionJoinsTheOuterOne() async throws {
        let repository = repository
        let historyBefore = try historyCount
        try await repository.withTransaction(transactionAuthor: "outer") { outer in
            _ = try await repository.create(RepoFixture.newMovie(1))
            try await repository.withTransaction(transactionAuthor: "inner") { inner in
                #expect(inner === outer)
                _ = try await repository.create(RepoFixture.newMovie(2))
            }
            // The inner block's end saved nothing.
            #expect(try fixture.storedTitles() == Self.seedTitles)
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2"])
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "inner").isEmpty)
        #expect(try historyCount == historyBefore + 1)
    }

    @Test func aNestedTransactionThatThrowsAbandonsTheOuterOne() async throws {
        let repository = repository
        await #expect(throws: Abandon.self) {
            try await repository.withTransaction(transactionAuthor: "outer") { _ in
                _ = try await repository.create(RepoFixture.newMovie(1))
                try await repository.withTransaction(transactionAuthor: "inner") { _ in
                    _ = try await repository.create(RepoFixture.newMovie(2))
                    throw Abandon()
                }
            }
        }
        #expect(try fixture.storedTitles() == Self.seedTitles)
    }

    @Test func twoConcurrentTransactionsOneFailsTheOtherSucceeds() async throws {
        let repository = repository
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup")
        async let failing: Void = repository.withTransaction(transactionAuthor: "failing") { _ in
            _ = try await repository.create(RepoFixture.newMovie(1, title: "Failing 1"))
            _ = try await repository.create(duplicate)
        }
        async let succeeding: Void = repository.withTransaction(transactionAuthor: "succeeding") { _ in
            _ = try await repository.create(RepoFixture.newMovie(2, title: "Succeeding 1"))
            _ = try await repository.create(RepoFixture.newMovie(3, title: "Succeeding 2"))
        }
        let failure: Result<Void, any Error>
        do {
            try await failing
            failure = .success(())
        } catch {
            failure = .failure(error)
        }
        try await succeeding
        switch failure {
        case .success: Issue.record("the transaction with a duplicate should fail")
        case .failure(let error): #expect((error as? RepositoryError)?.code == .constraintConflict)
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["Succeeding 1", "Succeeding 2"])
        #expect(try fixture.history(by: "succeeding").count == 1)
        #expect(try fixture.history(by: "failing").isEmpty)
    }

    @Test func manyConcurrentTransactionsEachSaveOnce() async throws {
        let repository = repository
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await repository.withTransaction(transactionAuthor: "tx\(index)") { _ in
                        _ = try await repository.create(RepoFixture.newMovie(index * 2, title: "T\(index)a"))
                        _ = try await repository.create(RepoFixture.newMovie(index * 2 + 1, title: "T\(index)b"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try fixture.storedMovies().count == 5 + 16)
        for index in 0..<8 {
            #expect(try fixture.history(by: "tx\(index)").count == 1)
            #expect(try fixture.history(by: "tx\(index)").first?.changes?.count == 2)
        }
    }

    @Test func aTransactionThatEndedCannotBeRejoined() async throws {
        let repository = repository
        let leaked = try await repository.withTransaction(transactionAuthor: "outer") { transaction in transaction }
        let code = await repositoryErrorCode {
            try await repository.withTransaction(continuing: leaked) { _ in
                _ = try await repository.create(RepoFixture.newMovie(1))
            }
        }
        #expect(code == .transactionEnded)
        #expect(try fixture.storedTitles() == Self.seedTitles)
    }

    /// Aggregates run in SQL over what is stored, also inside a transaction: they do not see
    /// the transaction's unsaved writes (documented on `Repository`'s aggregate calls).
    @Test func aggregatesInsideATransactionReadWhatIsStored() async throws {
        let repository = repository
        let (count, sum) = try await repository.withTransaction(transactionAuthor: "outer") { _ in
            _ = try await repository.create(RepoFixture.newMovie(1, boxOffice: 60))
            return (try await repository.count(of: RepoMovie.self), try await repository.sum(\RepoMovie.boxOffice))
        }
        #expect(count == 5)
        #expect(sum == 150)
        #expect(try await repository.count(of: RepoMovie.self) == 6)
        #expect(try await repository.sum(\RepoMovie.boxOffice) == 210)
    }

    /// A transaction with nothing to write records no history.
    @Test func anEmptyTransactionSavesNothing() async throws {
        let repository = repository
        let historyBefore = try historyCount
        let count = try await repository.withTransaction(transactionAuthor: "outer") { _ in
            try await repository.fetch(FetchRequest<RepoMovie>(), as: RepoMovie.Value.self).count
        }
        #expect(count == 5)
        #expect(try historyCount == historyBefore)
    }

    /// `custom` inside a transaction works on the transaction's context: what it writes is
    /// stored (or abandoned) with the transaction.
    @Test func customJoinsTheTransaction() async throws {
        let repository = repository
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await repository.custom { _, scratchPad in
                try RepoMovie(context: scratchPad).update(from: RepoFixture.newMovie(1))
                try scratchPad.save()
            }
            #expect(try await repository.read(RepoFixture.movieID(101), of: RepoMovie.Value.self).title == "New 1")
            #expect(try fixture.storedTitles() == Self.seedTitles)
        }
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1"])
        #expect(try fixture.history(by: "outer").count == 1)
    }

    /// `custom`'s documented pattern saves the scratch pad, then the parent. Inside a
    /// transaction the parent is the transaction's context: saving it must not store the
    /// transaction's writes before the transaction ends (or after it is cancelled).
    @Test func customSavingTheParentInsideACancelledTransactionStoresNothing() async throws {
        let repository = repository
        try await repository.withTransaction(transactionAuthor: "outer") { transaction in
            _ = try await repository.create(RepoFixture.newMovie(1))
            _ = try await repository.custom { parent, scratchPad in
                try RepoMovie(context: scratchPad).update(from: RepoFixture.newMovie(2))
                try scratchPad.save()
                try parent.save()
            }
            transaction.cancel()
        }
        let stored = try fixture.storedTitles()
        #expect(stored == Self.seedTitles)
    }
}
