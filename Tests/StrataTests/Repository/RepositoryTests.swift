import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The repository kit's CRUD, batch, aggregate, fetch and `custom` scenarios, each write run
/// both on its own and inside `withTransaction` (`inTransaction`). Every outcome is checked in
/// the store through a fresh context, and in persistent history.
@Suite(.timeLimit(.minutes(10))) struct RepositoryTests {
    let fixture: RepoFixture
    var repository: Repository { fixture.repository }

    init() throws {
        fixture = try RepoFixture()
    }

    static let seedTitles = ["A", "B", "C", "D", "E"]

    // MARK: - Aggregates

    @Test(arguments: [false, true])
    func aggregatesOverTheFiveMovies(inTransaction: Bool) async throws {
        let repository = repository
        let (count, sum, average, minimum, maximum) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.count(of: RepoMovie.self), try await repository.sum(\RepoMovie.boxOffice),
                try await repository.average(\RepoMovie.boxOffice), try await repository.min(\RepoMovie.boxOffice),
                try await repository.max(\RepoMovie.boxOffice)
            )
        }
        #expect(count == 5)
        #expect(sum == 150)
        #expect(average == 30)
        #expect(minimum == 10)
        #expect(maximum == 50)
    }

    @Test(arguments: [false, true])
    func aggregatesAfterDeletingE(inTransaction: Bool) async throws {
        let repository = repository
        try await repository.delete(try fixture.seeded("E"), transactionAuthor: "deleter")
        #expect(try fixture.storedTitles() == ["A", "B", "C", "D"])
        let (count, sum, average, minimum, maximum) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.count(of: RepoMovie.self), try await repository.sum(\RepoMovie.boxOffice),
                try await repository.average(\RepoMovie.boxOffice), try await repository.min(\RepoMovie.boxOffice),
                try await repository.max(\RepoMovie.boxOffice)
            )
        }
        #expect(count == 4)
        #expect(sum == 100)
        #expect(average == 25)
        #expect(minimum == 10)
        #expect(maximum == 40)
    }

    @Test(arguments: [false, true])
    func aggregatesWithAPredicate(inTransaction: Bool) async throws {
        let repository = repository
        let (count, sum, average, minimum) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.count(of: RepoMovie.self, where: \.title != "A"),
                try await repository.sum(\RepoMovie.boxOffice, where: \.title != "A"),
                try await repository.average(\RepoMovie.boxOffice, where: \.title != "A"),
                try await repository.min(\RepoMovie.boxOffice, where: \.title != "A")
            )
        }
        #expect(count == 4)
        #expect(sum == 140)
        #expect(average == 35)
        #expect(minimum == 20)
    }

    @Test func aggregatesOfNoObjects() async throws {
        #expect(try await repository.count(of: RepoMovie.self, where: \.title == "Z") == 0)
        #expect(try await repository.sum(\RepoMovie.boxOffice, where: \.title == "Z") == 0)
        #expect(try await repository.average(\RepoMovie.boxOffice, where: \.title == "Z") == nil)
        #expect(try await repository.max(\RepoMovie.boxOffice, where: \.title == "Z") == nil)
    }

    @Test(arguments: [false, true])
    func aggregateWithGroupBy(inTransaction: Bool) async throws {
        let repository = repository
        let (sums, counts) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.aggregate(function: .sum, of: \RepoMovie.boxOffice, groupBy: ["releaseDate"]),
                try await repository.aggregate(
                    function: .count, of: \RepoMovie.boxOffice, where: \.title != "A", groupBy: ["releaseDate"])
            )
        }
        // Groups come ordered by their group-by values: A and B (early), then C, D and E (late).
        try #require(sums.count == 2)
        #expect(sums.map { $0.groupValues["releaseDate"] } == [.date(RepoFixture.earlyDate), .date(RepoFixture.lateDate)])
        #expect(sums.map { repoDecimal($0.value) } == [30, 120])
        try #require(counts.count == 2)
        #expect(counts.map { $0.groupValues["releaseDate"] } == [.date(RepoFixture.earlyDate), .date(RepoFixture.lateDate)])
        #expect(counts.map { repoDecimal($0.value) } == [1, 3])

        // Without grouping: one group, with no group values.
        let total = try await repository.aggregate(function: .max, of: \RepoMovie.boxOffice)
        #expect(total.count == 1)
        #expect(total.first?.groupValues.isEmpty == true)
        #expect(total.first.flatMap { repoDecimal($0.value) } == 50)
    }

    // MARK: - Create

    @Test(arguments: [false, true])
    func createStoresTheValueAndRecordsTheAuthor(inTransaction: Bool) async throws {
        let repository = repository
        let movie = RepoFixture.newMovie(1, title: "F", boxOffice: 60)
        let created = try await fixture.run(inTransaction: inTransaction, author: "creator") {
            try await repository.create(movie, transactionAuthor: "creator")
        }
        let objectID = try #require(created.objectID)
        #expect(!objectID.isTemporaryID)
        #expect(objectID.entityName == "RepoMovie")
        var withoutID = created
        withoutID.objectID = nil
        #expect(withoutID == movie)

        let stored = try #require(try fixture.storedMovie(id: movie.id))
        #expect(stored == created)
        #expect(try fixture.storedTitles() == Self.seedTitles + ["F"])
        #expect(try fixture.history(by: "creator").count == 1)
    }

    @Test(arguments: [false, true])
    func createAHandWrittenValue(inTransaction: Bool) async throws {
        let repository = repository
        let record = RepoMovieRecord(id: RepoFixture.movieID(200), title: "R", releaseDate: RepoFixture.lateDate, boxOffice: 7)
        let link = RepoMovieLink(id: RepoFixture.movieID(201), title: "L", releaseDate: RepoFixture.earlyDate, boxOffice: 8)
        let (createdRecord, createdLink) = try await fixture.run(inTransaction: inTransaction, author: "creator") {
            (
                try await repository.create(record, transactionAuthor: "creator"),
                try await repository.create(link, transactionAuthor: "creator")
            )
        }
        #expect(createdRecord.managedId.map { !$0.isTemporaryID } == true)
        #expect(createdRecord.withoutID == record)
        let url = try #require(createdLink.managedIdUrl)
        #expect(url.host != "temporary")
        #expect(createdLink.withoutURL == link)

        #expect(try fixture.storedMovie(id: record.id)?.title == "R")
        #expect(try fixture.storedMovie(id: link.id)?.boxOffice == 8)
        #expect(try fixture.storedMovie(id: record.id)?.objectID == createdRecord.managedId)
        #expect(try fixture.storedMovie(id: link.id)?.objectID?.uriRepresentation == url)
    }

    @Test(arguments: [false, true])
    func createWithADuplicateUniqueIDFails(inTransaction: Bool) async throws {
        let repository = repository
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup", boxOffice: 99)
        let code = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "duplicator") {
                try await repository.create(duplicate, transactionAuthor: "duplicator")
            }
        }
        #expect(code == .constraintConflict)
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.storedMovie(id: duplicate.id)?.title == "C")
        #expect(try fixture.history(by: "duplicator").isEmpty)
    }

    // MARK: - Read

    @Test(arguments: [false, true])
    func readByItemKeyObjectIDAndURL(inTransaction: Bool) async throws {
        let repository = repository
        let c = try fixture.seeded("C")
        let objectID = try #require(c.objectID)
        let record = RepoMovieRecord(managedId: objectID, id: UUID(), title: "stale", releaseDate: .distantPast, boxOffice: 0)
        let link = RepoMovieLink(
            managedIdUrl: objectID.uriRepresentation, id: UUID(), title: "stale", releaseDate: .distantPast, boxOffice: 0)
        var staleItem = c
        staleItem.title = "stale"
        var keyOnly = c
        keyOnly.objectID = nil
        keyOnly.title = "stale"

        let reads = try await fixture.run(inTransaction: inTransaction) {
            (
                byItem: try await repository.read(staleItem),
                byKeyOnlyItem: try await repository.read(keyOnly),
                byKey: try await repository.read(c.id, of: RepoMovie.Value.self),
                byObjectID: try await repository.read(objectID, of: RepoMovie.Value.self),
                byURL: try await repository.read(objectID.uriRepresentation, of: RepoMovie.Value.self),
                record: try await repository.read(record),
                link: try await repository.read(link),
                linkByURL: try await repository.read(objectID.uriRepresentation, of: RepoMovieLink.self)
            )
        }
        // Reads return what is stored, not what the item says.
        #expect(reads.byItem == c)
        #expect(reads.byKeyOnlyItem == c)
        #expect(reads.byKey == c)
        #expect(reads.byObjectID == c)
        #expect(reads.byURL == c)
        #expect(reads.record == RepoMovieRecord(managedId: objectID, id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30))
        #expect(reads.link.title == "C")
        #expect(reads.link.id == c.id)
        #expect(reads.link.managedIdUrl == objectID.uriRepresentation)
        #expect(reads.linkByURL == reads.link)
    }

    @Test(arguments: [false, true])
    func readADeletedObjectFails(inTransaction: Bool) async throws {
        let repository = repository
        let c = try fixture.seeded("C")
        let objectID = try #require(c.objectID)
        try await fixture.deleteOutside(["C"])

        let codes = [
            await repositoryErrorCode { _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(c) } },
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(objectID, of: RepoMovie.Value.self) }
            },
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction) {
                    try await repository.read(objectID.uriRepresentation, of: RepoMovie.Value.self)
                }
            },
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction) {
                    try await repository.read(
                        RepoMovieLink(managedIdUrl: objectID.uriRepresentation, id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30))
                }
            },
        ]
        #expect(codes == [.objectDeleted, .objectDeleted, .objectDeleted, .objectDeleted])
    }

    @Test(arguments: [false, true])
    func readAnItemWithoutObjectIDOrURLFails(inTransaction: Bool) async throws {
        let repository = repository
        let c = try fixture.seeded("C")
        let record = RepoMovieRecord(id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30)
        let link = RepoMovieLink(id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30)

        let noID = await repositoryError {
            _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(record) }
        }
        #expect(noID?.code == .noObjectID)
        #expect(noID?.typeName == "RepoMovieRecord")
        #expect(noID?.message.contains("RepoMovieRecord") == true)

        let noURL = await repositoryError {
            _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(link) }
        }
        #expect(noURL?.code == .noObjectIDURL)
        #expect(noURL?.typeName == "RepoMovieLink")
    }

    @Test(arguments: [false, true])
    func readAnUnknownDomainKeyFails(inTransaction: Bool) async throws {
        let repository = repository
        let unknown = RepoFixture.movieID(999)
        let error = await repositoryError {
            _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(unknown, of: RepoMovie.Value.self) }
        }
        #expect(error?.code == .noMatch)
        #expect(error?.key == unknown.uuidString)
        #expect(error?.message.contains(unknown.uuidString) == true)
        #expect(error?.typeName.map { !$0.isEmpty } == true)
        if let error, let typeName = error.typeName {
            #expect(error.message.contains(typeName))
        }

        // An item without an object ID falls back on its domain key.
        let keyOnly = RepoMovie.Value(id: unknown, title: "Nope")
        let itemCode = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(keyOnly) }
        }
        #expect(itemCode == .noMatch)
    }

    /// The documentation (RepositoryError) promises messages like "No match found when reading
    /// Movie.Value -- id: …": the value type's qualified name.
    @Test func noMatchNamesTheValueTypeQualified() async throws {
        let unknown = RepoFixture.movieID(999)
        let error = await repositoryError { _ = try await repository.read(unknown, of: RepoMovie.Value.self) }
        #expect(error?.typeName == "RepoMovie.Value")
        #expect(error?.message.contains("RepoMovie.Value") == true)
    }

    @Test(arguments: [false, true])
    func readAURLOfAnotherStoreOrMalformedFails(inTransaction: Bool) async throws {
        let repository = repository
        let other = try RepoFixture()
        let foreign = try #require(try other.seeded("C").objectID).uriRepresentation
        let storeIdentifier = try #require(try fixture.seeded("C").objectID?.storeIdentifier)
        let malformed = [
            foreign,
            try #require(URL(string: "https://example.com/RepoMovie/p1")),
            try #require(URL(string: "strata://temporary/RepoMovie/t\(UUID().uuidString)")),
            try #require(URL(string: "strata://\(storeIdentifier)/NoSuchEntity/p1")),
        ]
        for url in malformed {
            let error = await repositoryError {
                _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(url, of: RepoMovie.Value.self) }
            }
            #expect(error?.code == .unknownObjectIDURL, "\(url)")
            #expect(error?.url == url)
            let linkCode = await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction) {
                    try await repository.read(RepoMovieLink(managedIdUrl: url, id: UUID(), title: "", releaseDate: .now, boxOffice: 0))
                }
            }
            #expect(linkCode == .unknownObjectIDURL, "\(url)")
        }
    }

    @Test(arguments: [false, true])
    func readAnObjectIDOfAnotherEntityFails(inTransaction: Bool) async throws {
        let repository = repository
        let critic = try await fixture.insertCriticOutside()
        let byID = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction) { try await repository.read(critic, of: RepoMovie.Value.self) }
        }
        #expect(byID == .typeMismatch)
        let byURL = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction) {
                try await repository.read(critic.uriRepresentation, of: RepoMovie.Value.self)
            }
        }
        #expect(byURL == .typeMismatch)
        let byRecord = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction) {
                try await repository.read(RepoMovieRecord(managedId: critic, id: UUID(), title: "", releaseDate: .now, boxOffice: 0))
            }
        }
        #expect(byRecord == .typeMismatch)
    }

    // MARK: - Update

    @Test(arguments: [false, true])
    func updateByItemObjectIDAndURL(inTransaction: Bool) async throws {
        let repository = repository
        var a = try fixture.seeded("A")
        var b = try fixture.seeded("B")
        var c = try fixture.seeded("C")
        let bID = try #require(b.objectID)
        let cURL = try #require(c.objectID).uriRepresentation
        a.title = "A2"
        a.boxOffice = 11
        b.title = "B2"
        var bWithoutID = b
        bWithoutID.objectID = nil
        c.boxOffice = 33
        let (updatedA, updatedB, updatedC) = try await fixture.run(inTransaction: inTransaction, author: "updater") {
            (
                try await repository.update(with: a, transactionAuthor: "updater"),
                try await repository.update(bID, with: bWithoutID, transactionAuthor: "updater"),
                try await repository.update(cURL, with: c, transactionAuthor: "updater")
            )
        }
        #expect(updatedA == a)
        #expect(updatedB == b)  // with its object ID, though the value given had none
        #expect(updatedC == c)
        #expect(try fixture.storedMovies() == [a, b, c, try fixture.seeded("D"), try fixture.seeded("E")].sorted { $0.title < $1.title })
        #expect(try fixture.history(by: "updater").count == (inTransaction ? 1 : 3))
    }

    @Test(arguments: [false, true])
    func updateHandWrittenValuesAndByDomainKey(inTransaction: Bool) async throws {
        let repository = repository
        let a = try fixture.seeded("A")
        let b = try fixture.seeded("B")
        let c = try fixture.seeded("C")
        let record = RepoMovieRecord(managedId: a.objectID, id: a.id, title: "A-record", releaseDate: a.releaseDate, boxOffice: 1)
        let link = RepoMovieLink(
            managedIdUrl: b.objectID?.uriRepresentation, id: b.id, title: "B-link", releaseDate: b.releaseDate, boxOffice: 2)
        var byKey = c
        byKey.objectID = nil
        byKey.title = "C-key"
        let (updatedRecord, updatedLink, updatedByKey) = try await fixture.run(inTransaction: inTransaction, author: "updater") {
            (
                try await repository.update(with: record, transactionAuthor: "updater"),
                try await repository.update(with: link, transactionAuthor: "updater"),
                try await repository.update(with: byKey, transactionAuthor: "updater")
            )
        }
        #expect(updatedRecord == record)
        #expect(updatedLink == link)
        #expect(updatedByKey.objectID == c.objectID)
        #expect(updatedByKey.title == "C-key")
        #expect(try fixture.storedTitles() == ["A-record", "B-link", "C-key", "D", "E"])
        #expect(try fixture.storedMovie(id: a.id)?.boxOffice == 1)
        #expect(!(try fixture.history(by: "updater").isEmpty))
    }

    @Test(arguments: [false, true])
    func updateFailures(inTransaction: Bool) async throws {
        let repository = repository
        var c = try fixture.seeded("C")
        let cID = try #require(c.objectID)
        try await fixture.deleteOutside(["C"])
        c.title = "C2"

        let deleted = [
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                    try await repository.update(with: c, transactionAuthor: "updater")
                }
            },
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                    try await repository.update(cID, with: c, transactionAuthor: "updater")
                }
            },
            await repositoryErrorCode {
                _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                    try await repository.update(cID.uriRepresentation, with: c, transactionAuthor: "updater")
                }
            },
        ]
        #expect(deleted == [.objectDeleted, .objectDeleted, .objectDeleted])

        let a = try fixture.seeded("A")
        let noID = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                try await repository.update(
                    with: RepoMovieRecord(id: a.id, title: "A2", releaseDate: a.releaseDate, boxOffice: 1), transactionAuthor: "updater")
            }
        }
        #expect(noID == .noObjectID)
        let noURL = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                try await repository.update(
                    with: RepoMovieLink(id: a.id, title: "A2", releaseDate: a.releaseDate, boxOffice: 1), transactionAuthor: "updater")
            }
        }
        #expect(noURL == .noObjectIDURL)
        let noMatch = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                try await repository.update(with: RepoFixture.newMovie(1, title: "A2"), transactionAuthor: "updater")
            }
        }
        #expect(noMatch == .noMatch)

        #expect(try fixture.storedTitles() == ["A", "B", "D", "E"])
        #expect(try fixture.history(by: "updater").isEmpty)
    }

    /// A failed update stores nothing, even when the value was partly written into the object.
    @Test(arguments: [false, true])
    func anUpdateThatClashesStoresNothing(inTransaction: Bool) async throws {
        let repository = repository
        var a = try fixture.seeded("A")
        a.title = "A2"
        a.id = RepoFixture.movieID(1)  // B's domain key
        let code = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "updater") {
                try await repository.update(with: a, transactionAuthor: "updater")
            }
        }
        #expect(code == .constraintConflict)
        #expect(try fixture.storedMovies() == [try fixture.seeded("A"), try fixture.seeded("B"), try fixture.seeded("C"), try fixture.seeded("D"), try fixture.seeded("E")])
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.history(by: "updater").isEmpty)
    }

    // MARK: - Delete

    @Test(arguments: [false, true])
    func deleteByItemObjectIDAndURL(inTransaction: Bool) async throws {
        let repository = repository
        let a = try fixture.seeded("A")
        let bID = try #require(try fixture.seeded("B").objectID)
        let cURL = try #require(try fixture.seeded("C").objectID).uriRepresentation
        let d = try fixture.seeded("D")
        let dRecord = RepoMovieRecord(managedId: d.objectID, id: d.id, title: "D", releaseDate: d.releaseDate, boxOffice: 40)
        try await fixture.run(inTransaction: inTransaction, author: "deleter") {
            try await repository.delete(a, transactionAuthor: "deleter")
            try await repository.delete(bID, transactionAuthor: "deleter")
            try await repository.delete(cURL, transactionAuthor: "deleter")
            try await repository.delete(dRecord, transactionAuthor: "deleter")
        }
        #expect(try fixture.storedTitles() == ["E"])
        #expect(try fixture.history(by: "deleter").count == (inTransaction ? 1 : 4))
    }

    @Test(arguments: [false, true])
    func deleteFailures(inTransaction: Bool) async throws {
        let repository = repository
        let c = try fixture.seeded("C")
        let cID = try #require(c.objectID)
        try await fixture.deleteOutside(["C"])
        let a = try fixture.seeded("A")

        func code(_ body: @escaping @Sendable () async throws -> Void) async -> RepositoryError.Code? {
            await repositoryErrorCode {
                try await fixture.run(inTransaction: inTransaction, author: "deleter") { try await body() }
            }
        }
        #expect(await code { try await repository.delete(c, transactionAuthor: "deleter") } == .objectDeleted)
        #expect(await code { try await repository.delete(cID, transactionAuthor: "deleter") } == .objectDeleted)
        #expect(await code { try await repository.delete(cID.uriRepresentation, transactionAuthor: "deleter") } == .objectDeleted)
        #expect(
            await code {
                try await repository.delete(
                    RepoMovieRecord(id: a.id, title: "A", releaseDate: a.releaseDate, boxOffice: 10), transactionAuthor: "deleter")
            } == .noObjectID)
        #expect(
            await code {
                try await repository.delete(
                    RepoMovieLink(id: a.id, title: "A", releaseDate: a.releaseDate, boxOffice: 10), transactionAuthor: "deleter")
            } == .noObjectIDURL)
        #expect(await code { try await repository.delete(RepoFixture.newMovie(1), transactionAuthor: "deleter") } == .noMatch)
        #expect(
            await code {
                try await repository.delete(try #require(URL(string: "https://example.com/x")), transactionAuthor: "deleter")
            } == .unknownObjectIDURL)

        #expect(try fixture.storedTitles() == ["A", "B", "D", "E"])
        #expect(try fixture.history(by: "deleter").isEmpty)
    }

    // MARK: - Non-atomic batches

    @Test func createBatchReportsTheDuplicate() async throws {
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup", boxOffice: 99)
        let items = [RepoFixture.newMovie(1), RepoFixture.newMovie(2), duplicate, RepoFixture.newMovie(3), RepoFixture.newMovie(4)]
        let (success, failed) = await repository.create(items, transactionAuthor: "batcher")
        #expect(success.count == 4)
        #expect(success.map(\.title) == ["New 1", "New 2", "New 3", "New 4"])
        #expect(success.allSatisfy { $0.objectID != nil })
        try #require(failed.count == 1)
        #expect(failed[0].item == duplicate)
        #expect(failed[0].error.code == .constraintConflict)
        #expect(failed[0].localizedDescription == failed[0].error.message)
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2", "New 3", "New 4"])
        #expect(try fixture.storedMovie(id: duplicate.id)?.title == "C")
        #expect(try fixture.history(by: "batcher").count == 4)
    }

    @Test(arguments: [false, true])
    func readBatchesReportTheDeletedObject(inTransaction: Bool) async throws {
        let repository = repository
        let movies = try fixture.storedMovies()
        let c = movies[2]
        try await fixture.deleteOutside(["C"])
        let ids = movies.compactMap(\.objectID)
        let urls = ids.map(\.uriRepresentation)
        let keys = movies.map(\.id)
        let unknownKey = RepoFixture.movieID(999)

        let (byItem, byID, byURL, byKey) = try await fixture.run(inTransaction: inTransaction) {
            (
                await repository.read(movies),
                await repository.read(ids, as: RepoMovie.Value.self),
                await repository.read(urls, as: RepoMovie.Value.self),
                await repository.read(keys + [unknownKey], as: RepoMovie.Value.self)
            )
        }
        let survivors = movies.filter { $0.title != "C" }
        #expect(byItem.success == survivors)
        #expect(byItem.failed.map(\.item) == [c])
        #expect(byItem.failed.map(\.error.code) == [.objectDeleted])
        #expect(byID.success == survivors)
        #expect(byID.failed.map(\.item) == [c.objectID])
        #expect(byID.failed.map(\.error.code) == [.objectDeleted])
        #expect(byURL.success == survivors)
        #expect(byURL.failed.map(\.item) == [c.objectID?.uriRepresentation])
        #expect(byURL.failed.map(\.error.code) == [.objectDeleted])
        #expect(byKey.success == survivors)
        #expect(byKey.failed.map(\.item) == [c.id, unknownKey])
        #expect(byKey.failed.map(\.error.code) == [.noMatch, .noMatch])
    }

    @Test(arguments: [false, true])
    func updateBatchReportsTheDeletedObject(inTransaction: Bool) async throws {
        let repository = repository
        var movies = try fixture.storedMovies()
        try await fixture.deleteOutside(["C"])
        for index in movies.indices { movies[index].boxOffice += 1 }
        let (success, failed) = try await fixture.run(inTransaction: inTransaction, author: "batcher") {
            await repository.update(movies, transactionAuthor: "batcher")
        }
        #expect(success.map(\.title) == ["A", "B", "D", "E"])
        #expect(failed.map(\.item) == [movies[2]])
        #expect(failed.map(\.error.code) == [.objectDeleted])
        #expect(try fixture.storedMovies().map(\.boxOffice) == [11, 21, 41, 51])
        #expect(try fixture.history(by: "batcher").count == (inTransaction ? 1 : 4))
    }

    @Test(arguments: [false, true])
    func deleteBatchesReportTheDeletedObject(inTransaction: Bool) async throws {
        let repository = repository
        let movies = try fixture.storedMovies()
        try await fixture.deleteOutside(["C"])
        let (success, failed) = try await fixture.run(inTransaction: inTransaction, author: "batcher") {
            await repository.delete(movies, transactionAuthor: "batcher")
        }
        #expect(success.map(\.title) == ["A", "B", "D", "E"])
        #expect(failed.map(\.item) == [movies[2]])
        #expect(failed.map(\.error.code) == [.objectDeleted])
        #expect(try fixture.storedTitles().isEmpty)
        #expect(try fixture.history(by: "batcher").count == (inTransaction ? 1 : 4))
    }

    @Test func deleteBatchesByObjectIDAndURL() async throws {
        let movies = try fixture.storedMovies()
        try await fixture.deleteOutside(["C"])
        let ids = movies[0..<3].compactMap(\.objectID)  // A, B, C (deleted)
        let urls = movies[2...].compactMap(\.objectID?.uriRepresentation)  // C (deleted), D, E
        let byID = await repository.delete(ids, transactionAuthor: "batcher")
        #expect(byID.success == Array(ids[0..<2]))
        #expect(byID.failed.map(\.item) == [ids[2]])
        #expect(byID.failed.map(\.error.code) == [.objectDeleted])
        #expect(try fixture.storedTitles() == ["D", "E"])
        let byURL = await repository.delete(urls, transactionAuthor: "batcher")
        #expect(byURL.success == Array(urls[1...]))
        #expect(byURL.failed.map(\.item) == [urls[0]])
        #expect(byURL.failed.map(\.error.code) == [.objectDeleted])
        #expect(try fixture.storedTitles().isEmpty)
    }

    // MARK: - Atomic batches

    @Test(arguments: [false, true])
    func createAtomicallyStoresAll(inTransaction: Bool) async throws {
        let repository = repository
        let items = (1...3).map { RepoFixture.newMovie($0) }
        let created = try await fixture.run(inTransaction: inTransaction, author: "atomic") {
            try await repository.createAtomically(items, transactionAuthor: "atomic")
        }
        #expect(created.map(\.title) == ["New 1", "New 2", "New 3"])
        #expect(created.allSatisfy { $0.objectID.map { !$0.isTemporaryID } == true })
        #expect(try fixture.storedTitles() == Self.seedTitles + ["New 1", "New 2", "New 3"])
        #expect(try fixture.history(by: "atomic").count == 1)
    }

    @Test(arguments: [false, true])
    func createAtomicallyWithOneFailureStoresNothing(inTransaction: Bool) async throws {
        let repository = repository
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup", boxOffice: 99)
        let items = [RepoFixture.newMovie(1), duplicate, RepoFixture.newMovie(2)]
        let code = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "atomic") {
                try await repository.createAtomically(items, transactionAuthor: "atomic")
            }
        }
        #expect(code == .constraintConflict)
        #expect(try await repository.count(of: RepoMovie.self) == 5)
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.history(by: "atomic").isEmpty)
    }

    @Test(arguments: [false, true])
    func updateAtomically(inTransaction: Bool) async throws {
        let repository = repository
        var movies = try fixture.storedMovies()
        for index in movies.indices { movies[index].title += "2" }
        let updated = try await fixture.run(inTransaction: inTransaction, author: "atomic") {
            try await repository.updateAtomically(movies, transactionAuthor: "atomic")
        }
        #expect(updated == movies)
        #expect(try fixture.storedMovies() == movies)
        #expect(try fixture.history(by: "atomic").count == 1)
    }

    @Test(arguments: [false, true])
    func atomicBatchesWithOneFailureWriteNothing(inTransaction: Bool) async throws {
        let repository = repository
        let before = try fixture.storedMovies()
        let c = before[2]
        try await fixture.deleteOutside(["C"])
        let survivors = before.filter { $0.title != "C" }
        let edited = before.map { movie in
            var movie = movie
            movie.title += "2"
            return movie
        }

        func code(_ body: @escaping @Sendable () async throws -> Void) async -> RepositoryError.Code? {
            await repositoryErrorCode {
                try await fixture.run(inTransaction: inTransaction, author: "atomic") { try await body() }
            }
        }
        #expect(await code { _ = try await repository.updateAtomically(edited, transactionAuthor: "atomic") } == .objectDeleted)
        #expect(await code { _ = try await repository.readAtomically(before) } == .objectDeleted)
        #expect(await code { _ = try await repository.readAtomically(before.map(\.id), as: RepoMovie.Value.self) } == .noMatch)
        #expect(
            await code { _ = try await repository.readAtomically(before.compactMap(\.objectID), as: RepoMovie.Value.self) }
                == .objectDeleted)
        #expect(
            await code {
                _ = try await repository.readAtomically(before.compactMap(\.objectID?.uriRepresentation), as: RepoMovie.Value.self)
            } == .objectDeleted)
        #expect(await code { try await repository.deleteAtomically(before, transactionAuthor: "atomic") } == .objectDeleted)
        #expect(
            await code { try await repository.deleteAtomically(before.compactMap(\.objectID), transactionAuthor: "atomic") }
                == .objectDeleted)
        #expect(
            await code {
                try await repository.deleteAtomically(before.compactMap(\.objectID?.uriRepresentation), transactionAuthor: "atomic")
            } == .objectDeleted)

        #expect(try fixture.storedMovies() == survivors)
        #expect(try fixture.storedMovie(id: c.id) == nil)
        #expect(try fixture.history(by: "atomic").isEmpty)

        // Without the deleted one, the same batches succeed.
        let reads = try await repository.readAtomically(survivors)
        #expect(reads == survivors)
        let readsByKey = try await repository.readAtomically(survivors.map(\.id), as: RepoMovie.Value.self)
        #expect(readsByKey == survivors)
        try await repository.deleteAtomically(survivors, transactionAuthor: "atomic")
        #expect(try fixture.storedTitles().isEmpty)
        #expect(try fixture.history(by: "atomic").count == 1)
    }

    // MARK: - Batch requests

    @Test(arguments: [false, true])
    func batchRequestsRecordTheAuthor(inTransaction: Bool) async throws {
        let repository = repository
        let newID = RepoFixture.movieID(300)
        let (inserted, updated, deleted) = try await fixture.run(inTransaction: inTransaction, author: "batchRequester") {
            let insert = BatchInsertRequest(
                entity: RepoMovie.self,
                objects: [["id": newID, "title": "F", "boxOffice": Decimal(60), "releaseDate": RepoFixture.lateDate]])
            let inserted = try await repository.insert(insert, transactionAuthor: "batchRequester")
            let updated = try await repository.update(
                BatchUpdateRequest(entity: RepoMovie.self, where: \.title == "A", propertiesToUpdate: ["boxOffice": .value(.decimal(11))]),
                transactionAuthor: "batchRequester")
            let deleted = try await repository.delete(
                BatchDeleteRequest(fetchRequest: FetchRequest<RepoMovie>(predicate: \.title == "B")), transactionAuthor: "batchRequester")
            return (inserted, updated, deleted)
        }
        _ = (inserted, updated, deleted)
        #expect(try fixture.storedTitles() == ["A", "C", "D", "E", "F"])
        #expect(try fixture.storedMovie(id: newID)?.boxOffice == 60)
        #expect(try fixture.storedMovie(titled: "A")?.boxOffice == 11)
        #expect(try fixture.history(by: "batchRequester").count == 3)
    }

    /// In a transaction the batch request records the transaction's author, not its own.
    @Test func batchRequestsInATransactionRecordTheTransactionAuthor() async throws {
        let repository = repository
        try await repository.withTransaction(transactionAuthor: "outer") { _ in
            _ = try await repository.delete(
                BatchDeleteRequest(fetchRequest: FetchRequest<RepoMovie>(predicate: \.title == "B")), transactionAuthor: "WRONG_AUTHOR")
        }
        #expect(try fixture.storedTitles() == ["A", "C", "D", "E"])
        #expect(try fixture.history(by: "outer").count == 1)
        #expect(try fixture.history(by: "WRONG_AUTHOR").isEmpty)
    }

    @Test(arguments: [false, true])
    func aBadlyTypedBatchInsertInsertsNothing(inTransaction: Bool) async throws {
        let repository = repository
        let error = await repositoryError {
            _ = try await fixture.run(inTransaction: inTransaction, author: "batchRequester") {
                let insert = BatchInsertRequest(
                    entity: RepoMovie.self,
                    objects: [
                        ["id": RepoFixture.movieID(300), "title": "F"],
                        ["id": RepoFixture.movieID(301), "title": 42],
                    ])
                return try await repository.insert(insert, transactionAuthor: "batchRequester")
            }
        }
        #expect(error != nil)
        #expect(error?.code != .unknown)
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.history(by: "batchRequester").isEmpty)
    }

    // MARK: - Fetch

    @Test(arguments: [false, true])
    func fetchSorted(inTransaction: Bool) async throws {
        let repository = repository
        let request = FetchRequest<RepoMovie>(predicate: \.title != "C", sortDescriptors: [.descending(\.boxOffice)])
        let (values, records) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.fetch(request, as: RepoMovie.Value.self),
                try await repository.fetch(request, as: RepoMovieRecord.self)
            )
        }
        #expect(values.map(\.title) == ["E", "D", "B", "A"])
        #expect(values.map(\.boxOffice) == [50, 40, 20, 10])
        #expect(values.allSatisfy { $0.objectID != nil })
        #expect(records.map(\.title) == ["E", "D", "B", "A"])
        #expect(records.map(\.managedId) == values.map(\.objectID))
        #expect(values == (try fixture.storedMovies().filter { $0.title != "C" }.reversed()))
    }

    @Test(arguments: [false, true])
    func fetchWithAnOperation(inTransaction: Bool) async throws {
        let repository = repository
        let (titles, total) = try await fixture.run(inTransaction: inTransaction) {
            (
                try await repository.fetch(request: FetchRequest<RepoMovie>(predicate: \.boxOffice > 20)) { movies in
                    movies.map(\.title).sorted().joined(separator: ",")
                },
                try await repository.fetch(request: FetchRequest<RepoMovie>()) { movies in
                    movies.reduce(Decimal(0)) { $0 + $1.boxOffice }
                }
            )
        }
        #expect(titles == "C,D,E")
        #expect(total == 150)
    }

    @Test func fetchWithAnUnknownKeyFails() async throws {
        var request = FetchRequest<RepoMovie>()
        request.sortDescriptors = [FetchSortDescriptor(key: "nonexistent")]
        let code = await repositoryErrorCode { _ = try await repository.fetch(request, as: RepoMovie.Value.self) }
        #expect(code != nil)
        #expect(code != .unknown)
    }

    // MARK: - Custom

    @Test(arguments: [false, true])
    func customSucceeds(inTransaction: Bool) async throws {
        let repository = repository
        let movie = RepoFixture.newMovie(1, title: "F")
        let count = try await fixture.run(inTransaction: inTransaction, author: "custom") {
            try await repository.custom { parent, scratchPad in
                #expect(scratchPad.parent === parent)
                let object = RepoMovie(context: scratchPad)
                try object.update(from: movie)
                try scratchPad.save()
                // Inside a transaction the transaction saves the parent.
                if !inTransaction { try parent.save() }
                return try parent.count(for: FetchRequest<RepoMovie>())
            }
        }
        #expect(count == 6)
        #expect(try fixture.storedTitles() == Self.seedTitles + ["F"])
        if inTransaction {
            #expect(try fixture.history(by: "custom").count == 1)
        }
    }

    @Test(arguments: [false, true])
    func customFailureStoresNothing(inTransaction: Bool) async throws {
        let repository = repository
        let duplicate = RepoMovie.Value(id: RepoFixture.movieID(2), title: "Dup")
        let fresh = RepoFixture.newMovie(1, title: "F")
        let code = await repositoryErrorCode {
            _ = try await fixture.run(inTransaction: inTransaction, author: "custom") {
                try await repository.custom { parent, scratchPad in
                    try RepoMovie(context: scratchPad).update(from: fresh)
                    try RepoMovie(context: scratchPad).update(from: duplicate)
                    try scratchPad.save()
                    try parent.save()
                }
            }
        }
        #expect(code == .constraintConflict)
        #expect(try fixture.storedTitles() == Self.seedTitles)
        #expect(try fixture.history(by: "custom").isEmpty)
    }

    @Test func customWrapsAnErrorOfItsOwn() async throws {
        struct Oops: Error {}
        let code = await repositoryErrorCode { _ = try await repository.custom { _, _ in throw Oops() } }
        #expect(code == .unknown)
    }
}
