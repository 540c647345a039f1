import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The repository's live subscriptions: fetches, reads and aggregates, as `Result` streams and
/// as throwing streams; and that every way of ending one removes its commit observer.
///
/// Values are awaited with `next()`; the only sleeps are in bounded polls of the commit
/// observer count, and in one negative check (a save that must not wake a subscription), where
/// waiting longer can only make a failure more likely, never a pass.
@Suite(.timeLimit(.minutes(10))) struct RepositorySubscriptionTests {
    let fixture: RepoFixture
    var repository: Repository { fixture.repository }

    init() throws {
        fixture = try RepoFixture()
    }

    static let seedTitles = ["A", "B", "C", "D", "E"]
    static var byTitle: FetchRequest<RepoMovie> { FetchRequest<RepoMovie>(sortDescriptors: [.ascending(\.title)]) }

    // MARK: - Fetch subscriptions

    @Test func fetchSubscriptionEmitsInitialThenAfterADelete() async throws {
        let baseline = fixture.commitObserverCount
        do {
            var results = repository.fetchSubscription(Self.byTitle, of: RepoMovie.Value.self).makeAsyncIterator()
            let initial = try #require(await results.next()).get()
            #expect(initial.map(\.title) == Self.seedTitles)
            #expect(initial == (try fixture.storedMovies()))

            try await fixture.deleteOutside(["E"])
            let afterDelete = try #require(await results.next()).get()
            #expect(afterDelete.map(\.title) == ["A", "B", "C", "D"])

            // A write through the repository wakes it too.
            _ = try await repository.create(RepoFixture.newMovie(1, title: "F"))
            let afterCreate = try #require(await results.next()).get()
            #expect(afterCreate.map(\.title) == ["A", "B", "C", "D", "F"])
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    @Test func fetchThrowingSubscriptionEmitsInitialThenAfterADelete() async throws {
        let baseline = fixture.commitObserverCount
        do {
            var results = repository.fetchThrowingSubscription(Self.byTitle, of: RepoMovie.Value.self).makeAsyncIterator()
            #expect(try await results.next()?.map(\.title) == Self.seedTitles)
            try await fixture.deleteOutside(["E"])
            #expect(try await results.next()?.map(\.title) == ["A", "B", "C", "D"])
            try await repository.delete(try fixture.seeded("A"))
            #expect(try await results.next()?.map(\.title) == ["B", "C", "D"])
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    @Test func aSaveInsideATransactionWakesSubscriptionsOnceWhenItIsStored() async throws {
        let repository = repository
        var results = repository.fetchThrowingSubscription(Self.byTitle, of: RepoMovie.Value.self).makeAsyncIterator()
        #expect(try await results.next()?.count == 5)
        try await repository.withTransaction(transactionAuthor: "outer") { _ in
            _ = try await repository.create(RepoFixture.newMovie(1, title: "F"))
            _ = try await repository.create(RepoFixture.newMovie(2, title: "G"))
        }
        #expect(try await results.next()?.map(\.title) == Self.seedTitles + ["F", "G"])
    }

    /// A save of another entity does not re-run the request. `RepoMovieTitle` is not
    /// `Equatable`, so a re-run could not be hidden as "the same result": it would be yielded.
    @Test(arguments: [false, true])
    func aSaveOfAnUnrelatedEntityYieldsNothing(throwing: Bool) async throws {
        let (forwarded, sink) = AsyncStream<[String]>.makeStream()
        let repository = repository
        // The consumer waits on the subscription at all times, and forwards everything.
        let consumer = Task {
            if throwing {
                for try await titles in repository.fetchThrowingSubscription(Self.byTitle, of: RepoMovieTitle.self) {
                    sink.yield(titles.map(\.title))
                }
            } else {
                for await result in repository.fetchSubscription(Self.byTitle, of: RepoMovieTitle.self) {
                    sink.yield(try result.get().map(\.title))
                }
            }
            sink.finish()
        }
        defer { consumer.cancel() }
        var titles = forwarded.makeAsyncIterator()
        #expect(await titles.next() == Self.seedTitles)

        try await fixture.insertCriticOutside()
        try await fixture.insertCriticOutside("Roger")
        try await Task.sleep(for: .milliseconds(200))  // room for a wrong value to arrive
        try await fixture.deleteOutside(["E"])
        #expect(await titles.next() == ["A", "B", "C", "D"])
    }

    @Test func fetchSubscriptionWithAChangeTrackingRequest() async throws {
        var results = repository.fetchSubscription(
            request: Self.byTitle, changeTrackingRequest: FetchRequest<RepoCritic>(), of: RepoMovieTitle.self
        ).makeAsyncIterator()
        #expect(try #require(await results.next()).get().map(\.title) == Self.seedTitles)

        // A critic's save re-runs the movie request (the result is not Equatable, so it is yielded).
        try await fixture.insertCriticOutside()
        #expect(try #require(await results.next()).get().map(\.title) == Self.seedTitles)

        // A movie's delete is not tracked; the next critic save picks it up.
        try await fixture.deleteOutside(["E"])
        try await fixture.insertCriticOutside("Roger")
        #expect(try #require(await results.next()).get().map(\.title) == ["A", "B", "C", "D"])
    }

    @Test func fetchThrowingSubscriptionWithAChangeTrackingRequest() async throws {
        var results = repository.fetchThrowingSubscription(
            request: Self.byTitle, changeTrackingRequest: FetchRequest<RepoCritic>(), of: RepoMovie.Value.self
        ).makeAsyncIterator()
        #expect(try await results.next()?.map(\.title) == Self.seedTitles)
        try await fixture.deleteOutside(["E"])
        try await fixture.insertCriticOutside()
        #expect(try await results.next()?.map(\.title) == ["A", "B", "C", "D"])
    }

    @Test func aFailingFetchIsYieldedAndTheResultSubscriptionGoesOn() async throws {
        var request = FetchRequest<RepoMovie>()
        request.sortDescriptors = [FetchSortDescriptor(key: "nonexistent")]
        var results = repository.fetchSubscription(request, of: RepoMovie.Value.self).makeAsyncIterator()
        let first = try #require(await results.next())
        guard case .failure(let error) = first else {
            Issue.record("expected a failure, got \(first)")
            return
        }
        #expect(error.code != .unknown)

        var throwing = repository.fetchThrowingSubscription(request, of: RepoMovie.Value.self).makeAsyncIterator()
        let thrown = await #expect(throws: RepositoryError.self) { _ = try await throwing.next() }
        await expectEnded(&throwing, after: try #require(thrown).code)
    }

    /// Checks that a throwing stream that has thrown a `code` error yields nothing more and
    /// ends. The Swift 6.3 runtime's `AsyncThrowingStream` throws its terminal error a second
    /// time when it finished while `next()` was waiting; one repeat of the same error is
    /// allowed, anything else (a value, another error, no end) is not.
    func expectEnded<Iterator: AsyncIteratorProtocol>(
        _ iterator: inout Iterator, after code: RepositoryError.Code, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        for _ in 0..<2 {
            do {
                guard let value = try await iterator.next() else { return }
                Issue.record("expected the stream to end, got \(value)", sourceLocation: sourceLocation)
                return
            } catch let error as RepositoryError where error.code == code {
                continue  // the runtime's repeat
            } catch {
                Issue.record("expected the stream to end, got \(error)", sourceLocation: sourceLocation)
                return
            }
        }
        Issue.record("the stream did not end", sourceLocation: sourceLocation)
    }

    // MARK: - Read subscriptions

    enum Lookup: String, CaseIterable, Sendable {
        case item, key, objectID, url, linkItem, linkURL
    }

    /// Follows movie C: its value, its changed value after an update, then one failure when it
    /// is deleted, and the end.
    func followC<Model: Sendable>(
        _ stream: AsyncStream<Result<Model, RepositoryError>>, deletedCode: RepositoryError.Code,
        _ boxOffice: (Model) -> Decimal
    ) async throws {
        var values = stream.makeAsyncIterator()
        #expect(boxOffice(try #require(await values.next()).get()) == 30)
        try await fixture.setBoxOfficeOutside(of: "C", to: 99)
        #expect(boxOffice(try #require(await values.next()).get()) == 99)
        _ = try await repository.update(with: { var c = try fixture.seeded("C"); c.boxOffice = 100; return c }())
        #expect(boxOffice(try #require(await values.next()).get()) == 100)
        try await fixture.deleteOutside(["C"])
        let last = try #require(await values.next())
        guard case .failure(let error) = last else {
            Issue.record("expected a failure after the delete, got \(last)")
            return
        }
        #expect(error.code == deletedCode)
        let end = await values.next()
        #expect(end == nil)
    }

    func followCThrowing<Model: Sendable>(
        _ stream: AsyncThrowingStream<Model, any Error>, deletedCode: RepositoryError.Code, _ boxOffice: (Model) -> Decimal
    ) async throws {
        var values = stream.makeAsyncIterator()
        #expect(try await values.next().map(boxOffice) == 30)
        try await fixture.setBoxOfficeOutside(of: "C", to: 99)
        #expect(try await values.next().map(boxOffice) == 99)
        try await fixture.deleteOutside(["C"])
        do {
            let value = try await values.next()
            Issue.record("expected the stream to throw after the delete, got \(String(describing: value))")
        } catch let error as RepositoryError {
            #expect(error.code == deletedCode)
        }
        await expectEnded(&values, after: deletedCode)
    }

    @Test(arguments: Lookup.allCases)
    func readSubscriptionFollowsTheObjectUntilItIsDeleted(lookup: Lookup) async throws {
        let baseline = fixture.commitObserverCount
        let c = try fixture.seeded("C")
        let objectID = try #require(c.objectID)
        let link = RepoMovieLink(managedIdUrl: objectID.uriRepresentation, id: c.id, title: "", releaseDate: .now, boxOffice: 0)
        switch lookup {
        case .item:
            try await followC(repository.readSubscription(c), deletedCode: .objectDeleted) { $0.boxOffice }
        case .key:
            try await followC(repository.readSubscription(c.id, of: RepoMovie.Value.self), deletedCode: .noMatch) { $0.boxOffice }
        case .objectID:
            try await followC(repository.readSubscription(objectID, of: RepoMovie.Value.self), deletedCode: .objectDeleted) {
                $0.boxOffice
            }
        case .url:
            try await followC(
                repository.readSubscription(objectID.uriRepresentation, of: RepoMovie.Value.self), deletedCode: .objectDeleted
            ) { $0.boxOffice }
        case .linkItem:
            try await followC(repository.readSubscription(link), deletedCode: .objectDeleted) { $0.boxOffice }
        case .linkURL:
            try await followC(
                repository.readSubscription(objectID.uriRepresentation, of: RepoMovieLink.self), deletedCode: .objectDeleted
            ) { $0.boxOffice }
        }
        // The stream ended by itself: its observer is gone.
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    @Test(arguments: Lookup.allCases)
    func readThrowingSubscriptionFollowsTheObjectUntilItIsDeleted(lookup: Lookup) async throws {
        let baseline = fixture.commitObserverCount
        let c = try fixture.seeded("C")
        let objectID = try #require(c.objectID)
        let link = RepoMovieLink(managedIdUrl: objectID.uriRepresentation, id: c.id, title: "", releaseDate: .now, boxOffice: 0)
        switch lookup {
        case .item:
            try await followCThrowing(repository.readThrowingSubscription(c), deletedCode: .objectDeleted) { $0.boxOffice }
        case .key:
            try await followCThrowing(repository.readThrowingSubscription(c.id, of: RepoMovie.Value.self), deletedCode: .noMatch) {
                $0.boxOffice
            }
        case .objectID:
            try await followCThrowing(
                repository.readThrowingSubscription(objectID, of: RepoMovie.Value.self), deletedCode: .objectDeleted
            ) { $0.boxOffice }
        case .url:
            try await followCThrowing(
                repository.readThrowingSubscription(objectID.uriRepresentation, of: RepoMovie.Value.self),
                deletedCode: .objectDeleted
            ) { $0.boxOffice }
        case .linkItem:
            try await followCThrowing(repository.readThrowingSubscription(link), deletedCode: .objectDeleted) { $0.boxOffice }
        case .linkURL:
            try await followCThrowing(
                repository.readThrowingSubscription(objectID.uriRepresentation, of: RepoMovieLink.self),
                deletedCode: .objectDeleted
            ) { $0.boxOffice }
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    /// A save that leaves the object as it was (another movie changes) yields nothing: the
    /// next value is the one after C's own change.
    ///
    /// A consumer waits on the subscription at all times and forwards every value, so that a
    /// repeated value could not be hidden by the subscription's one-element buffer.
    @Test(arguments: [false, true])
    func aReadSubscriptionSkipsSavesThatLeaveTheValueAsItWas(throwing: Bool) async throws {
        let c = try fixture.seeded("C")
        let repository = repository
        let (forwarded, sink) = AsyncStream<Decimal>.makeStream()
        let consumer = Task {
            if throwing {
                for try await value in repository.readThrowingSubscription(c) { sink.yield(value.boxOffice) }
            } else {
                for await result in repository.readSubscription(c) { sink.yield(try result.get().boxOffice) }
            }
            sink.finish()
        }
        defer { consumer.cancel() }
        var values = forwarded.makeAsyncIterator()
        #expect(await values.next() == 30)
        try await fixture.setBoxOfficeOutside(of: "A", to: 1)  // same entity, C unchanged
        try await fixture.insertCriticOutside()
        try await Task.sleep(for: .milliseconds(200))  // room for a wrong value to arrive
        try await fixture.setBoxOfficeOutside(of: "C", to: 31)
        #expect(await values.next() == 31)
    }

    enum StartFailure: String, CaseIterable, Sendable {
        case unknownKey, deletedObjectID, deletedItem, itemWithoutObjectID, linkWithoutURL, foreignURL, otherEntity
    }

    /// The stream for a lookup that fails at once, and the failure's code.
    func failingRead(_ failure: StartFailure) async throws -> (
        results: AsyncStream<Result<String, RepositoryError>>, throwing: AsyncThrowingStream<String, any Error>,
        code: RepositoryError.Code
    ) {
        let c = try fixture.seeded("C")
        let objectID = try #require(c.objectID)
        func erase<Model: Sendable>(
            _ results: AsyncStream<Result<Model, RepositoryError>>, _ throwing: AsyncThrowingStream<Model, any Error>,
            _ code: RepositoryError.Code
        ) -> (AsyncStream<Result<String, RepositoryError>>, AsyncThrowingStream<String, any Error>, RepositoryError.Code) {
            (
                AsyncStream { continuation in
                    let task = Task {
                        for await result in results { continuation.yield(result.map { "\($0)" }) }
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                },
                AsyncThrowingStream { continuation in
                    let task = Task {
                        do {
                            for try await value in throwing { continuation.yield("\(value)") }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                    continuation.onTermination = { _ in task.cancel() }
                },
                code
            )
        }
        switch failure {
        case .unknownKey:
            let key = RepoFixture.movieID(999)
            return erase(
                repository.readSubscription(key, of: RepoMovie.Value.self),
                repository.readThrowingSubscription(key, of: RepoMovie.Value.self), .noMatch)
        case .deletedObjectID:
            try await fixture.deleteOutside(["C"])
            return erase(
                repository.readSubscription(objectID, of: RepoMovie.Value.self),
                repository.readThrowingSubscription(objectID, of: RepoMovie.Value.self), .objectDeleted)
        case .deletedItem:
            try await fixture.deleteOutside(["C"])
            return erase(repository.readSubscription(c), repository.readThrowingSubscription(c), .objectDeleted)
        case .itemWithoutObjectID:
            let record = RepoMovieRecord(id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30)
            return erase(repository.readSubscription(record), repository.readThrowingSubscription(record), .noObjectID)
        case .linkWithoutURL:
            let link = RepoMovieLink(id: c.id, title: "C", releaseDate: c.releaseDate, boxOffice: 30)
            return erase(repository.readSubscription(link), repository.readThrowingSubscription(link), .noObjectIDURL)
        case .foreignURL:
            let url = try #require(URL(string: "strata://\(UUID().uuidString)/RepoMovie/p1"))
            return erase(
                repository.readSubscription(url, of: RepoMovie.Value.self),
                repository.readThrowingSubscription(url, of: RepoMovie.Value.self), .unknownObjectIDURL)
        case .otherEntity:
            let critic = try await fixture.insertCriticOutside()
            return erase(
                repository.readSubscription(critic, of: RepoMovie.Value.self),
                repository.readThrowingSubscription(critic, of: RepoMovie.Value.self), .typeMismatch)
        }
    }

    @Test(arguments: StartFailure.allCases)
    func aLookupFailureAtTheStartYieldsOneFailureAndEnds(failure: StartFailure) async throws {
        let baseline = fixture.commitObserverCount
        do {
            let (results, throwing, code) = try await failingRead(failure)
            var values = results.makeAsyncIterator()
            let first = try #require(await values.next())
            switch first {
            case .success(let value): Issue.record("expected a failure, got \(value)")
            case .failure(let error): #expect(error.code == code)
            }
            let end = await values.next()
            #expect(end == nil)

            var throwingValues = throwing.makeAsyncIterator()
            do {
                let value = try await throwingValues.next()
                Issue.record("expected a throw, got \(String(describing: value))")
            } catch let error as RepositoryError {
                #expect(error.code == code)
            }
            await expectEnded(&throwingValues, after: code)
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    // MARK: - Aggregate subscriptions

    @Test func aggregateSubscriptionsEmitInitialThenAfterADelete() async throws {
        let baseline = fixture.commitObserverCount
        do {
            var counts = repository.countSubscription(of: RepoMovie.self).makeAsyncIterator()
            var filteredCounts = repository.countSubscription(of: RepoMovie.self, where: \.title != "A").makeAsyncIterator()
            var sums = repository.sumSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            var averages = repository.averageSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            var minima = repository.minSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            var maxima = repository.maxSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            #expect(fixture.commitObserverCount == baseline + 6)

            #expect(try await counts.next()?.get() == 5)
            #expect(try await filteredCounts.next()?.get() == 4)
            #expect(try await sums.next()?.get() == 150)
            #expect(try await averages.next()?.get() == 30)
            #expect(try await minima.next()?.get() == 10)
            #expect(try await maxima.next()?.get() == 50)

            try await fixture.deleteOutside(["E"])
            #expect(try await counts.next()?.get() == 4)
            #expect(try await filteredCounts.next()?.get() == 3)
            #expect(try await sums.next()?.get() == 100)
            #expect(try await averages.next()?.get() == 25)
            #expect(try await maxima.next()?.get() == 40)

            // The minimum did not change with E: its next value is the one after A goes.
            try await repository.delete(try fixture.seeded("A"))
            #expect(try await minima.next()?.get() == 20)
            #expect(try await counts.next()?.get() == 3)
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    /// As fetch subscriptions do, aggregate ones take the request whose entity's saves re-run
    /// them (the repository kit's `changeTrackingRequest:`).
    @Test func aggregateSubscriptionsWithAChangeTrackingRequest() async throws {
        let critics = FetchRequest<RepoCritic>()
        var counts = repository.countSubscription(of: RepoMovie.self, changeTrackingRequest: critics).makeAsyncIterator()
        var sums = repository.sumThrowingSubscription(\RepoMovie.boxOffice, changeTrackingRequest: critics).makeAsyncIterator()
        var maxima = repository.maxSubscription(\RepoMovie.boxOffice, changeTrackingRequest: critics).makeAsyncIterator()
        #expect(try await counts.next()?.get() == 5)
        #expect(try await sums.next() == 150)
        #expect(try await maxima.next()?.get() == 50)
        // A movie's delete is not tracked; the next critic save picks it up.
        try await fixture.deleteOutside(["E"])
        try await fixture.insertCriticOutside()
        #expect(try await counts.next()?.get() == 4)
        #expect(try await sums.next() == 100)
        #expect(try await maxima.next()?.get() == 40)
    }

    @Test func aggregateThrowingSubscriptionsEmitInitialThenAfterADelete() async throws {
        let baseline = fixture.commitObserverCount
        do {
            var counts = repository.countThrowingSubscription(of: RepoMovie.self).makeAsyncIterator()
            var sums = repository.sumThrowingSubscription(\RepoMovie.boxOffice, where: \.title != "A").makeAsyncIterator()
            var averages = repository.averageThrowingSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            var minima = repository.minThrowingSubscription(\RepoMovie.boxOffice).makeAsyncIterator()
            var maxima = repository.maxThrowingSubscription(\RepoMovie.boxOffice).makeAsyncIterator()

            #expect(try await counts.next() == 5)
            #expect(try await sums.next() == 140)
            #expect(try await averages.next() == 30)
            #expect(try await minima.next() == 10)
            #expect(try await maxima.next() == 50)

            try await fixture.deleteOutside(["E"])
            #expect(try await counts.next() == 4)
            #expect(try await sums.next() == 90)
            #expect(try await averages.next() == 25)
            #expect(try await maxima.next() == 40)

            try await fixture.deleteOutside(["A", "B", "C", "D"])
            #expect(try await counts.next() == 0)
            #expect(try await sums.next() == 0)
            #expect(try await averages.next() == .some(nil))
            #expect(try await minima.next() == .some(nil))
            #expect(try await maxima.next() == .some(nil))
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    @Test func aggregateSubscriptionsIgnoreUnrelatedSaves() async throws {
        var counts = repository.countThrowingSubscription(of: RepoMovie.self).makeAsyncIterator()
        #expect(try await counts.next() == 5)
        try await fixture.insertCriticOutside()
        try await fixture.deleteOutside(["E"])
        #expect(try await counts.next() == 4)
    }

    // MARK: - No leaked registrations

    enum Kind: String, CaseIterable, Sendable {
        case fetch, fetchThrowing, fetchTracking, read, readThrowing, readByKey, count, sumThrowing
    }

    /// Iterates a new subscription of `kind` until its first element, checks that it is
    /// registered, and leaves the loop (the stream is a temporary: leaving drops it).
    func firstElementThenBreak(_ kind: Kind, baseline: Int) async throws {
        let repository = repository
        let c = try fixture.seeded("C")
        var seen = 0
        func check() {
            seen += 1
            #expect(fixture.commitObserverCount == baseline + 1)
        }
        switch kind {
        case .fetch:
            for await _ in repository.fetchSubscription(Self.byTitle, of: RepoMovie.Value.self) {
                check()
                break
            }
        case .fetchThrowing:
            for try await _ in repository.fetchThrowingSubscription(Self.byTitle, of: RepoMovie.Value.self) {
                check()
                break
            }
        case .fetchTracking:
            for await _ in repository.fetchSubscription(
                request: Self.byTitle, changeTrackingRequest: FetchRequest<RepoCritic>(), of: RepoMovie.Value.self)
            {
                check()
                break
            }
        case .read:
            for await _ in repository.readSubscription(c) {
                check()
                break
            }
        case .readThrowing:
            for try await _ in repository.readThrowingSubscription(c) {
                check()
                break
            }
        case .readByKey:
            for await _ in repository.readSubscription(c.id, of: RepoMovie.Value.self) {
                check()
                break
            }
        case .count:
            for await _ in repository.countSubscription(of: RepoMovie.self) {
                check()
                break
            }
        case .sumThrowing:
            for try await _ in repository.sumThrowingSubscription(\RepoMovie.boxOffice) {
                check()
                break
            }
        }
        #expect(seen == 1)
    }

    @Test(arguments: Kind.allCases)
    func breakingOutOfTheLoopRemovesTheRegistration(kind: Kind) async throws {
        let baseline = fixture.commitObserverCount
        try await firstElementThenBreak(kind, baseline: baseline)
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
        // Saves after the end reach no one, and do not fail.
        try await fixture.deleteOutside(["E"])
        #expect(fixture.commitObserverCount == baseline)
    }

    @Test(arguments: Kind.allCases)
    func cancellingTheConsumingTaskRemovesTheRegistration(kind: Kind) async throws {
        let baseline = fixture.commitObserverCount
        let repository = repository
        let c = try fixture.seeded("C")
        let (firstArrived, arrived) = AsyncStream<Void>.makeStream()
        let consumer = Task {
            func consume<S: AsyncSequence>(_ sequence: S) async throws {
                for try await _ in sequence { arrived.yield() }
            }
            switch kind {
            case .fetch: try await consume(repository.fetchSubscription(Self.byTitle, of: RepoMovie.Value.self))
            case .fetchThrowing: try await consume(repository.fetchThrowingSubscription(Self.byTitle, of: RepoMovie.Value.self))
            case .fetchTracking:
                try await consume(
                    repository.fetchSubscription(
                        request: Self.byTitle, changeTrackingRequest: FetchRequest<RepoCritic>(), of: RepoMovie.Value.self))
            case .read: try await consume(repository.readSubscription(c))
            case .readThrowing: try await consume(repository.readThrowingSubscription(c))
            case .readByKey: try await consume(repository.readSubscription(c.id, of: RepoMovie.Value.self))
            case .count: try await consume(repository.countSubscription(of: RepoMovie.self))
            case .sumThrowing: try await consume(repository.sumThrowingSubscription(\RepoMovie.boxOffice))
            }
        }
        var arrivals = firstArrived.makeAsyncIterator()
        _ = await arrivals.next()
        #expect(fixture.commitObserverCount == baseline + 1)
        consumer.cancel()
        _ = try? await consumer.value
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    /// A stream made and dropped without being iterated leaves nothing registered.
    @Test func aStreamReleasedUnusedRemovesTheRegistration() async throws {
        let baseline = fixture.commitObserverCount
        do {
            let stream = repository.fetchSubscription(Self.byTitle, of: RepoMovie.Value.self)
            let throwing = repository.readThrowingSubscription(try fixture.seeded("C"))
            #expect(fixture.commitObserverCount == baseline + 2)
            _ = (stream, throwing)
        }
        #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
    }

    /// Many subscriptions come and go; none stays registered.
    @Test func manySubscriptionsComeAndGo() async throws {
        let baseline = fixture.commitObserverCount
        for round in 0..<20 {
            try await firstElementThenBreak(Kind.allCases[round % Kind.allCases.count], baseline: baseline)
            #expect(try await fixture.waitForCommitObserverCount(baseline) == baseline)
        }
    }
}
