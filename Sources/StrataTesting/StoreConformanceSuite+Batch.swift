import Foundation
import Strata
import Testing

private typealias Movie = ConformanceModel.Movie
private typealias Review = ConformanceModel.Review
private typealias Person = ConformanceModel.Person
private typealias Studio = ConformanceModel.Studio
private typealias Car = ConformanceModel.Car

/// The batch-request checks: inserts, updates and deletes that bypass the object graph, each
/// all or nothing.
extension StoreConformanceSuite {
    private func titles(_ container: PersistentContainer) throws -> [String] {
        try container.newBackgroundContext().fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)]).map(\.title)
    }

    func batchInsertsWriteRowsInOneTransaction() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        var request = BatchInsertRequest(
            entity: Movie.self,
            objects: [
                ["title": "Heat", "year": 1995, "rating": 8.3, "boxOffice": Decimal(string: "187436818.25")!],
                ["title": "Ronin", "year": Int16(1998), "tags": ["heist", "paris"], "releaseDate": Date(timeIntervalSince1970: 0)],
                ["title": "Thief"],
            ])
        request.resultType = .objectIDs
        let result = try context.execute(request)
        #expect(result.kind == .insert)
        #expect(result.count == 3)
        let ids = try #require(result.objectIDs)
        #expect(ids.count == 3 && ids.allSatisfy { !$0.isTemporaryID && $0.entityName == "Movie" })
        #expect(result.insertedObjectIDs == ids)

        let movies = try container.newBackgroundContext().fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)])
        #expect(movies.map(\.title) == ["Heat", "Ronin", "Thief"])
        #expect(movies.map(\.year) == [1995, 1998, 1999])  // 1999: Thief's default
        #expect(movies[0].boxOffice == Decimal(string: "187436818.25")!)
        #expect(movies[1].tags == ["heist", "paris"])
        #expect(movies[1].releaseDate == Date(timeIntervalSince1970: 0))
        #expect(Set(movies.map(\.objectID)) == Set(ids))
        // Rows inserted in a batch are ordinary objects: they can be edited and saved.
        movies[2].rating = 7
        try movies[2].context?.save()
        // Keys are never reused: a later save gets a key above the batch's.
        let later = Movie(context: context)
        later.title = "Later"
        try context.save()
        #expect(ids.allSatisfy { ($0.primaryKey ?? 0) < (later.objectID.primaryKey ?? 0) })
        // An empty request writes nothing.
        #expect(try context.execute(BatchInsertRequest(entity: Movie.self, objects: [])).count == 0)
    }

    func aBadRowFailsTheWholeBatchInsert() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        Movie(context: context).title = "Kept"
        try context.save()
        let cases: [([[String: Any]], StrataError.Code, String)] = [
            ([["title": "A"], ["title": "B", "year": "nineteen"]], .typeMismatch, "Row 1"),
            ([["title": "A"], ["title": "B"], ["titel": "C"]], .unknownKey, "Row 2"),
            ([["title": "A", "year": 70_000]], .valueOutOfRange, "Row 0"),
            ([["title": "A"], ["title": "B", "cache": 3]], .unknownKey, "transient"),
        ]
        for (rows, code, mention) in cases {
            let error = #expect(throws: StrataError.self) {
                try context.execute(BatchInsertRequest(entity: Movie.self, objects: rows))
            }
            #expect(error?.code == code, "\(rows)")
            #expect(error?.message.contains(mention) == true || code == .unknownKey, "\(error?.message ?? "")")
        }
        // A non-optional attribute without a value.
        let missing = #expect(throws: StrataError.self) {
            try context.execute(BatchInsertRequest(entity: Person.self, objects: [["name": "Ann"], ["name": NSNull()]]))
        }
        #expect(missing?.code == .missingValue && missing?.propertyName == "name")
        #expect(try titles(container) == ["Kept"])
        #expect(try container.newBackgroundContext().count(for: Person.self) == 0)
        // A handler that throws half-way leaves nothing either.
        struct Stop: Error {}
        var produced = 0
        #expect(throws: Stop.self) {
            try context.execute(
                BatchInsertRequest(entityName: "Movie") { (row: inout [String: Any]) in
                    produced += 1
                    if produced == 500 { throw Stop() }
                    row["title"] = "Row \(produced)"
                    return false
                })
        }
        #expect(try titles(container) == ["Kept"])
    }

    func batchInsertsResolveUniquenessByMergePolicy() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let id = UUID()
        let stored = Movie(context: context)
        stored.id = id
        stored.title = "Heat"
        stored.rating = 5
        try context.save()
        let storedID = stored.objectID
        let rows: [[String: Any]] = [["id": id, "title": "Heat (1995)", "rating": 9.0], ["title": "Ronin"]]

        context.mergePolicy = .error
        let error = #expect(throws: StrataError.self) { try context.execute(BatchInsertRequest(entity: Movie.self, objects: rows)) }
        #expect(error?.code == .constraintConflict)
        #expect(try titles(container) == ["Heat"])

        context.mergePolicy = .mergeByPropertyStoreTrump
        var keep = BatchInsertRequest(entity: Movie.self, objects: rows)
        keep.resultType = .objectIDs
        let kept = try context.execute(keep)
        #expect(kept.count == 1)
        #expect(kept.insertedObjectIDs?.count == 1 && kept.updatedObjectIDs == [])
        #expect(try titles(container) == ["Heat", "Ronin"])

        context.mergePolicy = .mergeByPropertyObjectTrump
        var upsert = BatchInsertRequest(entity: Movie.self, objects: [rows[0]])
        upsert.resultType = .objectIDs
        let replaced = try context.execute(upsert)
        #expect(replaced.count == 1)
        #expect(replaced.updatedObjectIDs == [storedID])
        #expect(replaced.insertedObjectIDs == [])
        let fresh = container.newBackgroundContext()
        let heat = try #require(try fresh.existingObject(with: storedID) as? Movie)
        #expect(heat.title == "Heat (1995)" && heat.rating == 9)
        // Two rows of one request with the same unique value: one new object, the last row's.
        let twice = UUID()
        var duplicates = BatchInsertRequest(
            entity: Movie.self, objects: [["id": twice, "title": "First"], ["id": twice, "title": "Second"]])
        duplicates.resultType = .objectIDs
        let once = try context.execute(duplicates)
        #expect(once.count == 1 && once.insertedObjectIDs?.count == 1 && once.updatedObjectIDs == [])
        #expect(try fresh.fetch(Movie.self, where: \.id == twice).map(\.title) == ["Second"])
        // The stored object's version moved: a context holding the old state sees a conflict.
        stored.rating = 1
        context.mergePolicy = .error
        let stale = #expect(throws: StrataError.self) { try context.save() }
        #expect(stale?.code == .optimisticLockingFailure)
    }

    func batchInsertsTakeHandlersAndValueSnapshots() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        var next = 0
        let fromDictionaries = try context.execute(
            BatchInsertRequest(entityName: "Movie") { (row: inout [String: Any]) in
                guard next < 1000 else { return true }
                next += 1
                row["title"] = "Movie \(next)"
                row["rating"] = Double(next % 10)
                return false
            })
        #expect(fromDictionaries.count == 1000)
        var names = ["Ann", "Bob"].makeIterator()
        let fromObjects = try context.execute(
            BatchInsertRequest(entity: Person.self) { person in
                guard let name = names.next() else { return true }
                person.name = name
                return false
            })
        #expect(fromObjects.count == 2)
        var snapshot = Movie(context: container.newBackgroundContext()).value
        snapshot.title = "From a value"
        snapshot.year = 2001
        let fromValues = try context.execute(BatchInsertRequest(entity: Movie.self, values: [snapshot]))
        #expect(fromValues.count == 1)
        #expect(try context.count(for: Movie.self) == 1001)
        #expect(try context.fetch(Movie.self, where: \.title == "From a value").first?.year == 2001)
        #expect(try context.fetch(Person.self, where: nil, sortedBy: [.ascending(\.name)]).map(\.name) == ["Ann", "Bob"])
        #expect(try context.count(for: FetchRequest<Movie>(predicate: \.rating == 3)) == 100)
        // Subentities are inserted by their own entity; abstract entities are refused.
        #expect(try context.execute(BatchInsertRequest(entity: Car.self, objects: [["maker": "Fiat", "seats": 4]])).count == 1)
        let abstract = #expect(throws: StrataError.self) {
            try context.execute(BatchInsertRequest(entityName: "Vehicle", objects: [["maker": "Any"]]))
        }
        #expect(abstract?.code == .abstractEntity)
    }

    /// U+0000 in a string is refused by every store before anything is written, with a typed
    /// error naming the attribute (PostgreSQL's text cannot hold it; SQLite's could, and the
    /// stores agree): by a save, a batch insert and a batch update.
    func stringsHoldingTheNullCharacterAreRefusedEverywhere() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let heat = Movie(context: context)
        heat.title = "He\u{0}at"
        let saveError = #expect(throws: StrataError.self) { try context.save() }
        #expect(saveError?.code == .validationFailed)
        #expect(saveError?.details.map(\.code) == [.unrepresentableValue])
        #expect(saveError?.details.first?.propertyName == "title")
        heat.title = "Heat"
        try context.save()

        let insertError = #expect(throws: StrataError.self) {
            try context.execute(BatchInsertRequest(entity: Movie.self, objects: [["title": "Ronin"], ["title": "Th\u{0}ief"]]))
        }
        #expect(insertError?.code == .unrepresentableValue)
        #expect(insertError?.propertyName == "title")
        let updateError = #expect(throws: StrataError.self) {
            try context.execute(BatchUpdateRequest(entityName: "Movie", propertiesToUpdate: ["title": "\u{0}"]))
        }
        #expect(updateError?.code == .unrepresentableValue)
        #expect(updateError?.propertyName == "title")
        #expect(try titles(container) == ["Heat"])
    }

    func batchUpdatesSetValuesAndRaiseVersions() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        for (title, year, rating) in [("Heat", 1995, 8.0), ("Ronin", 1998, 7.0), ("Metropolis", 1927, 9.0)] {
            let movie = Movie(context: context)
            movie.title = title
            movie.year = Int16(year)
            movie.rating = rating
        }
        try context.save()
        let heldRonin = try #require(try context.fetch(Movie.self, where: \.title == "Ronin").first)

        var request = BatchUpdateRequest(entity: Movie.self, where: \.year >= 1990)
        request.propertiesToUpdate = ["rating": .key("rating") + 1, "tags": .value(.codable(Data("[\"modern\"]".utf8)))]
        request.resultType = .objectIDs
        let result = try context.execute(request)
        #expect(result.kind == .update && result.count == 2)
        #expect(Set(result.objectIDs ?? []) == Set(try context.fetch(Movie.self, where: \.year >= 1990).map(\.objectID)))
        let fresh = container.newBackgroundContext()
        let movies = try fresh.fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)])
        #expect(movies.map(\.rating) == [9, 9, 8])  // Heat 8+1, Metropolis untouched, Ronin 7+1
        #expect(movies.map(\.tags) == [["modern"], [], ["modern"]])

        // Constants of another numeric type are converted; arithmetic chains.
        var scaled = BatchUpdateRequest(entityName: "Movie", propertiesToUpdate: ["rating": (.key("rating") - 1) * 2, "year": 2000])
        scaled.predicate = try FetchRequest<Movie>(format: "title == %@", "Heat").predicate?.tree
        #expect(try context.execute(scaled).count == 1)
        let heat = try #require(try container.newBackgroundContext().fetch(Movie.self, where: \.title == "Heat").first)
        #expect(heat.rating == 16 && heat.year == 2000)

        // The context that held Ronin before the update sees a conflict when it saves an edit.
        heldRonin.title = "Ronin (1998)"
        let error = #expect(throws: StrataError.self) { try context.save() }
        #expect(error?.code == .optimisticLockingFailure)
        // Merging the result refreshes it.
        context.rollback()
        ObjectContext.mergeChanges(fromRemoteContextSave: result.objectIDNotification(), into: [context])
        #expect(heldRonin.rating == 8)
    }

    func badBatchUpdatesAreTypedErrorsAndWriteNothing() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movie = Movie(context: context)
        movie.title = "Heat"
        let other = Movie(context: context)
        other.title = "Ronin"
        try context.save()
        let cases: [([String: BatchUpdateExpression], StrataError.Code)] = [
            (["titel": "x"], .unknownKey),
            (["director": nil], .unknownKey),
            (["cache": 1], .unknownKey),
            (["rating": "high"], .typeMismatch),
            (["title": nil], .missingValue),
            (["title": .key("title") + 1], .typeMismatch),
            (["rating": .key("title") * 2], .typeMismatch),
            (["rating": .key("nothing") + 1], .unknownKey),
            (["boxOffice": .key("boxOffice") + 1], .typeMismatch),
            ([:], .unknownKey),
            // Copies and arithmetic that could not be stored exactly are refused before writing…
            (["year": .key("rating")], .typeMismatch),
            (["year": .key("year") + 1.5], .typeMismatch),
            // …and results that do not fit are refused as SQLite computes them.
            (["year": .key("year") * 1000], .valueOutOfRange),
            (["year": .key("year") / 0], .missingValue),
            // Both rows would get the same ID: a uniqueness conflict.
            (["id": .value(.uuid(UUID()))], .constraintConflict),
        ]
        for (values, code) in cases {
            let error = #expect(throws: StrataError.self) {
                try context.execute(BatchUpdateRequest(entity: Movie.self, propertiesToUpdate: values))
            }
            #expect(error?.code == code, "\(values)")
        }
        #expect(try titles(container) == ["Heat", "Ronin"])
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.year) == [1999, 1999])
        // A wider type takes a copy.
        #expect(try context.execute(BatchUpdateRequest(entity: Movie.self, propertiesToUpdate: ["rating": .key("year")])).count == 2)
        #expect(try container.newBackgroundContext().fetch(Movie.self).map(\.rating) == [1999, 1999])
        let unknown = #expect(throws: StrataError.self) {
            try context.execute(BatchUpdateRequest(entityName: "Film", propertiesToUpdate: ["title": "x"]))
        }
        #expect(unknown?.code == .unknownEntity)
    }

    func batchDeletesApplyDeleteRules() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let director = Person(context: context)
        director.name = "Michael Mann"
        var reviews: [Review] = []
        for title in ["Heat", "Thief", "Collateral"] {
            let movie = Movie(context: context)
            movie.title = title
            movie.director = director
            let review = Review(context: context)
            review.movie = movie
            reviews.append(review)
        }
        try context.save()

        // Movie.reviews cascades: the reviews of the deleted movies go too.
        var request = BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.title != "Collateral"))
        request.resultType = .objectIDs
        let result = try context.execute(request)
        #expect(result.kind == .delete && result.count == 2)
        #expect(result.objectIDs?.count == 2)
        #expect(Set(result.deletedObjectIDs ?? []).isSuperset(of: Set(reviews[0...1].map(\.objectID))))
        #expect(result.deletedObjectIDs?.count == 4)
        let fresh = container.newBackgroundContext()
        #expect(try fresh.count(for: Review.self) == 1)
        #expect(try titles(container) == ["Collateral"])
        // Person.directed (the inverse of Movie.director) lost them.
        #expect(try fresh.fetch(Person.self).first?.directed.map(\.title) == ["Collateral"])

        // Deleting the director nullifies Movie.director (Person.directed's rule) and raises the
        // movie's version.
        let collateral = try #require(try context.fetch(Movie.self, where: \.title == "Collateral").first)
        var byPerson = BatchDeleteRequest(fetchRequest: FetchRequest<Person>())
        byPerson.resultType = .objectIDs
        let nullified = try context.execute(byPerson)
        #expect(nullified.updatedObjectIDs == [collateral.objectID])
        #expect(try container.newBackgroundContext().fetch(Movie.self).first?.director == nil)
        collateral.rating = 3
        let stale = #expect(throws: StrataError.self) { try context.save() }
        #expect(stale?.code == .optimisticLockingFailure)
        // Deleting nothing is fine.
        #expect(try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.title == "None"))).count == 0)
    }

    func aDenyRuleRefusesTheWholeBatchDelete() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let empty = Studio(context: context)
        empty.name = "Empty"
        let busy = Studio(context: context)
        busy.name = "Busy"
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.studio = busy
        try context.save()
        let error = #expect(throws: StrataError.self) {
            try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<Studio>()))
        }
        #expect(error?.code == .deleteDenied)
        #expect(try container.newBackgroundContext().count(for: Studio.self) == 2)
        // Without the related movie the same request goes through.
        #expect(try context.execute(BatchDeleteRequest(objectIDs: [empty.objectID])).count == 1)
        #expect(try container.newBackgroundContext().count(for: Studio.self) == 1)
    }

    func batchDeletesByObjectIDsMergeIntoContexts() throws {
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let movies = (0..<5).map { index -> Movie in
            let movie = Movie(context: context)
            movie.title = "Movie \(index)"
            return movie
        }
        try context.save()
        let reader = container.newBackgroundContext()
        let held = try reader.fetch(Movie.self, where: nil, sortedBy: [.ascending(\.title)])
        #expect(held.count == 5)

        var request = BatchDeleteRequest(objectIDs: [movies[1].objectID, movies[3].objectID, movies[3].objectID])
        request.resultType = .objectIDs
        let result = try context.execute(request)
        #expect(result.count == 2)
        #expect(Set(result.objectIDs ?? []) == [movies[1].objectID, movies[3].objectID])
        // Deleting them again finds nothing.
        #expect(try context.execute(BatchDeleteRequest(objectIDs: [movies[1].objectID])).count == 0)

        ObjectContext.mergeChanges(fromRemoteContextSave: result.objectIDNotification(), into: [reader])
        #expect(reader.registeredObject(for: movies[1].objectID) == nil)
        #expect(held[1].isDeleted || held[1].context == nil)
        #expect(try reader.fetch(Movie.self).count == 3)
    }

    func batchRequestsWriteHistoryAndPostCommits() throws {
        let container = try makeHistoryContainer()
        let commits = LockedCommits()
        let observation = container.addCommitObserver { commits.append($0) }
        defer { observation.cancel() }
        let context = container.newBackgroundContext()
        context.transactionAuthor = "batch"
        context.name = "loader"
        var insert = BatchInsertRequest(entity: Movie.self, objects: (0..<10).map { ["title": "Movie \($0)"] })
        insert.resultType = .objectIDs
        let inserted = try context.execute(insert)
        try context.execute(BatchUpdateRequest(entity: Movie.self, where: \.title == "Movie 1", propertiesToUpdate: ["rating": 5]))
        try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.title == "Movie 2")))

        let history = try container.fetchHistory()
        #expect(history.map(\.author) == ["batch", "batch", "batch"])
        #expect(history.map(\.contextName) == ["loader", "loader", "loader"])
        #expect(history[0].changes?.count == 10 && history[0].changes?.allSatisfy { $0.changeType == .insert } == true)
        #expect(history[0].token == inserted.historyToken)
        #expect(history[1].changes?.map(\.changeType) == [.update])
        #expect(history[1].changes?.first?.updatedProperties == ["rating"])
        #expect(history[2].changes?.map(\.changeType) == [.delete])

        let posted = commits.values
        #expect(posted.count == 3)
        #expect(posted.first?.insertedObjectIDs.count == 10)
        #expect(posted.map(\.author) == ["batch", "batch", "batch"])
        #expect(posted.map(\.historyToken) == history.map(\.token))
        // A failed request records and posts nothing.
        #expect(throws: StrataError.self) {
            try context.execute(BatchInsertRequest(entity: Movie.self, objects: [["title": 3]]))
        }
        #expect(try container.fetchHistory().count == 3)
        #expect(commits.values.count == 3)
    }
}

/// Commits collected from an observer.
private final class LockedCommits: Sendable {
    private let commits = LockedBox<[StoreCommit]>([])

    func append(_ commit: StoreCommit) { commits.withLock { $0.append(commit) } }

    var values: [StoreCommit] { commits.withLock { $0 } }
}
