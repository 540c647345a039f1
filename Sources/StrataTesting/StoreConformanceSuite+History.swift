import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review
private typealias Person = ConformanceModel.Person
private typealias Keyword = ConformanceModel.Keyword

/// The persistent-history checks: what every store that records history must record, and how
/// it must answer.
extension StoreConformanceSuite {
    /// The single change of `objectID` in `transaction`.
    private func change(of objectID: ObjectID, in transaction: HistoryTransaction) -> HistoryChange? {
        transaction.changes?.first { $0.changedObjectID == objectID }
    }

    func savesAreRecordedInHistoryWithAuthorsAndChanges() throws {
        let container = try makeHistoryContainer()
        let context = container.newBackgroundContext()
        context.transactionAuthor = "importer"
        context.name = "import"
        let movie = Movie(context: context)
        movie.title = "Heat"
        let review = Review(context: context)
        review.movie = movie
        let before = Date()
        try context.save()

        movie.title = "Heat (1995)"
        movie.rating = 8.3
        try context.save()
        context.transactionAuthor = "cleaner"
        context.name = nil
        context.delete(review)
        try context.save()

        let transactions = try container.fetchHistory()
        try #require(transactions.count == 3)
        #expect(transactions.map(\.author) == ["importer", "importer", "cleaner"])
        #expect(transactions.map(\.contextName) == ["import", "import", nil])
        #expect(transactions.map(\.token) == transactions.map(\.token).sorted())
        #expect(Set(transactions.map(\.token)).count == 3)
        #expect(transactions.allSatisfy { $0.timestamp >= before.addingTimeInterval(-1) && $0.timestamp <= Date() })
        #expect(transactions.allSatisfy { $0.storeIdentifier == container.stores[0].identifier })
        #expect(try container.currentHistoryToken() == transactions.last?.token)

        let insert = transactions[0]
        #expect(insert.changes?.count == 2)
        #expect(change(of: movie.objectID, in: insert)?.changeType == .insert)
        #expect(change(of: review.objectID, in: insert)?.changeType == .insert)
        #expect(change(of: movie.objectID, in: insert)?.updatedProperties == nil)

        let update = try #require(change(of: movie.objectID, in: transactions[1]))
        #expect(transactions[1].changes?.count == 1)
        #expect(update.changeType == .update)
        #expect(update.updatedProperties == ["title", "rating"])

        // Deleting the review changes the movie's reviews too: only the review is deleted.
        let delete = try #require(change(of: review.objectID, in: transactions[2]))
        #expect(delete.changeType == .delete)
        #expect(delete.tombstone == [:])
        // Change IDs grow across the history.
        let changeIDs = transactions.flatMap { $0.changes ?? [] }.map(\.changeID)
        #expect(changeIDs == changeIDs.sorted() && Set(changeIDs).count == changeIDs.count)
        // The commit the store announced carries the transaction's token.
        #expect(transactions.last?.objectIDNotification().deletedObjectIDs.contains(review.objectID) == true)
    }

    func historyFetchesFilterByTokenDateAuthorAndContext() throws {
        let container = try makeHistoryContainer()
        var tokens: [HistoryToken] = []
        var dates: [Date] = []
        for (author, name) in [("a", "one"), ("b", "two"), (nil, "one"), ("a", nil)] as [(TransactionAuthor?, String?)] {
            let context = container.newBackgroundContext()
            context.transactionAuthor = author
            context.name = name
            Person(context: context).name = "\(author?.name ?? "nobody") in \(name ?? "no context")"
            dates.append(Date())
            try context.save()
            tokens.append(try #require(try container.currentHistoryToken()))
        }
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[1])).map(\.token) == [tokens[2], tokens[3]])
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[3])).isEmpty)
        #expect(try container.fetchHistory(HistoryFetchRequest(authors: ["a"])).map(\.token) == [tokens[0], tokens[3]])
        // Excluding an author keeps transactions without one.
        #expect(
            try container.fetchHistory(HistoryFetchRequest(excludedAuthors: ["a"])).map(\.token) == [tokens[1], tokens[2]])
        #expect(
            try container.fetchHistory(HistoryFetchRequest(contextNames: ["one"])).map(\.token) == [tokens[0], tokens[2]])
        #expect(try container.fetchHistory(HistoryFetchRequest(fetchLimit: 2)).map(\.token) == [tokens[0], tokens[1]])
        let bare = try container.fetchHistory(HistoryFetchRequest(includesChanges: false))
        #expect(bare.count == 4 && bare.allSatisfy { $0.changes == nil })
        let withChanges = try container.fetchHistory(HistoryFetchRequest(after: tokens[0], authors: ["b"]))
        #expect(withChanges.map { $0.changes?.count } == [1])
        // By date: the first transaction committed after the first date was taken.
        let sinceSecond = try container.fetchHistory(HistoryFetchRequest(since: dates[1]))
        #expect(sinceSecond.first.map { $0.token >= tokens[1] } == true)
        #expect(sinceSecond.last?.token == tokens[3])
        #expect(try container.fetchHistory(HistoryFetchRequest(since: Date().addingTimeInterval(60))).isEmpty)

        // Tokens are values: they survive encoding, and a foreign one is refused.
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(tokens[2]))
        #expect(decoded == tokens[2])
        let foreign = HistoryToken(storeIdentifier: "another-store", transactionNumber: 1)
        let error = #expect(throws: StrataError.self) { try container.fetchHistory(HistoryFetchRequest(after: foreign)) }
        #expect(error?.code == .persistentHistoryUnavailable)
    }

    func deletedObjectsLeaveTombstonesInHistory() throws {
        let container = try makeHistoryContainer()
        let context = container.newBackgroundContext()
        let keyword = Keyword(context: context)
        keyword.word = "heist"
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.keywords = [keyword]
        let review = Review(context: context)
        review.movie = movie
        try context.save()
        let keywordID = keyword.objectID
        let movieID = movie.objectID
        let reviewID = review.objectID

        context.delete(keyword)
        context.delete(movie)  // cascades to the review
        try context.save()
        let last = try #require(try container.fetchHistory().last)
        let changes = try #require(last.changes)
        #expect(Set(changes.map(\.changedObjectID)) == [keywordID, movieID, reviewID])
        #expect(changes.allSatisfy { $0.changeType == .delete })
        #expect(change(of: keywordID, in: last)?.tombstone == ["word": .string("heist")])
        #expect(change(of: movieID, in: last)?.tombstone == [:])
    }

    func aFailedSaveRecordsNoHistory() throws {
        let container = try makeHistoryContainer()
        let context = container.newBackgroundContext()
        let id = UUID()
        let first = Movie(context: context)
        first.id = id
        first.title = "Heat"
        try context.save()
        let token = try container.currentHistoryToken()

        let other = container.newBackgroundContext()
        let duplicate = Movie(context: other)
        duplicate.id = id
        duplicate.title = "Heat again"
        #expect(throws: StrataError.self) { try other.save() }
        #expect(try container.currentHistoryToken() == token)
        #expect(try container.fetchHistory().count == 1)

        // Saving nothing records nothing.
        try context.save()
        #expect(try container.fetchHistory().count == 1)
        // The next save gets a new token after the old one.
        other.delete(duplicate)
        first.title = "Heat (1995)"
        try context.save()
        let newest = try #require(try container.currentHistoryToken())
        #expect(token.map { newest > $0 } == true)
    }

    /// A history container after four saves of one person each, with their tokens.
    private func historyOfFourSaves() throws -> (PersistentContainer, ObjectContext, [HistoryToken]) {
        let container = try makeHistoryContainer()
        let context = container.newBackgroundContext()
        for index in 0..<4 {
            Person(context: context).name = "Person \(index)"
            try context.save()
        }
        let tokens = try container.fetchHistory().map(\.token)
        try #require(tokens.count == 4)
        return (container, context, tokens)
    }

    func deletingHistoryKeepsWhatComesAfter() throws {
        let (container, context, tokens) = try historyOfFourSaves()
        #expect(try container.deleteHistory(before: tokens[2]) == 2)
        #expect(try container.fetchHistory().map(\.token) == [tokens[2], tokens[3]])
        #expect(try container.deleteHistory(before: Date().addingTimeInterval(-3600)) == 0)
        #expect(try container.deleteHistory(before: Date().addingTimeInterval(1)) == 2)
        #expect(try container.fetchHistory().isEmpty)
        // Tokens are never reused after deletion; the data stays.
        Person(context: context).name = "After"
        try context.save()
        let next = try #require(try container.currentHistoryToken())
        #expect(next > tokens[3])
        #expect(try context.count(for: Person.self) == 5)
    }

    /// A reader whose token points before pruned history learns that it missed changes
    /// (Core Data's `NSPersistentHistoryTokenExpiredError`), never a silent skip; a token at or
    /// after the pruning point reads on.
    func readingFromAPrunedTokenReportsItExpired() throws {
        let (container, context, tokens) = try historyOfFourSaves()
        #expect(try container.deleteHistory(before: tokens[2]) == 2)  // 1 and 2 are gone
        let expired = #expect(throws: StrataError.self) { try container.fetchHistory(HistoryFetchRequest(after: tokens[0])) }
        #expect(expired?.code == .historyTokenExpired)
        // The token of the last pruned transaction misses nothing: 3 and 4 follow it.
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[1])).map(\.token) == [tokens[2], tokens[3]])
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[3])).isEmpty)

        // Everything pruned: a token before the last transaction missed it, the newest did not.
        _ = try container.deleteHistory(before: Date().addingTimeInterval(1))
        #expect(try container.fetchHistory().isEmpty)
        let afterAll = #expect(throws: StrataError.self) { try container.fetchHistory(HistoryFetchRequest(after: tokens[2])) }
        #expect(afterAll?.code == .historyTokenExpired)
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[3])).isEmpty)
        // New transactions after the newest token read on.
        Person(context: context).name = "After"
        try context.save()
        #expect(try container.fetchHistory(HistoryFetchRequest(after: tokens[3])).count == 1)
    }

    func mergingATransactionRefreshesAndForgetsObjects() throws {
        let container = try makeHistoryContainer()
        let writer = container.newBackgroundContext()
        writer.transactionAuthor = "writer"
        let kept = Person(context: writer)
        kept.name = "Ann"
        let gone = Person(context: writer)
        gone.name = "Bob"
        try writer.save()

        let reader = container.newBackgroundContext()
        let people = try reader.fetch(Person.self, where: nil, sortedBy: [.ascending(\.name)])
        #expect(people.map(\.name) == ["Ann", "Bob"])
        let token = try container.currentHistoryToken()

        kept.name = "Anne"
        writer.delete(gone)
        try writer.save()
        let transactions = try container.fetchHistory(HistoryFetchRequest(after: token, authors: ["writer"]))
        try #require(transactions.count == 1)
        let summary = transactions[0].objectIDNotification()
        #expect(summary.updatedObjectIDs == [kept.objectID])
        #expect(summary.deletedObjectIDs == [gone.objectID])
        #expect(summary.author == "writer")

        reader.mergeChanges(from: transactions[0])
        #expect(people[0].name == "Anne")
        #expect(reader.registeredObject(for: gone.objectID) == nil)
        #expect(try reader.fetch(Person.self).map(\.name) == ["Anne"])
    }

    func storesWithoutHistoryRecordNone() throws {
        let container = try makeContainer()
        #expect(container.historyTrackingStores.isEmpty)
        #expect(container.stores.allSatisfy { !$0.isPersistentHistoryTrackingEnabled })
        let context = container.newBackgroundContext()
        Person(context: context).name = "Ann"
        try context.save()
        for attempt in [
            { _ = try container.fetchHistory() }, { _ = try container.currentHistoryToken() },
            { _ = try container.deleteHistory(before: Date()) },
        ] as [() throws -> Void] {
            let error = #expect(throws: StrataError.self) { try attempt() }
            #expect(error?.code == .persistentHistoryUnavailable)
        }
        let store = try #require(container.stores.first)
        #expect(throws: StrataError.self) { try store.fetchHistory(HistoryFetchRequest()) }
        #expect(throws: StrataError.self) { try store.lastMergedHistoryTokens() }
    }
}
