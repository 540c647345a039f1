import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The SQL compiler and the in-memory evaluator must return the same objects in the same
/// order for random data and random predicates, sort descriptors, limits and offsets.
@Suite struct PredicateDifferentialTests {
    static let titles = [
        "Heat", "heat", "HEAT", "Clara Köhler", "clara kohler", "École", "ecole", "a9", "a10", "A1", " ", "The Thing",
        "the thing", "Straße", "STRASSE", "x*y", "50% off", "naïve", "Ω omega", "🎬 film", "Heat 2", "Ronin",
    ]
    static let fragments = [
        "he", "HE", "at", "clara", "köh", "koh", "a", "", "Th", "ss", "ß", "%", "*", "🎬", "e", "É", "omega",
    ]
    static let likePatterns = ["h*", "*at", "?eat", "*a*", "a?", "a??", "*", "", "x\\*y", "cl*r", "*ö*", "*o*"]
    static let regexes = ["h.*", "[A-Z].*", "a[0-9]+", ".*\\d.*", "(heat|ronin)", "É.*", ".*ö.*", "[a-z ]*"]
    static let names = ["Ann", "bob", "Émile", "zoë", "Zed", "ann", "Bo"]

    struct Fixture {
        let container: PersistentContainer
        let people: [ObjectID]
        let movies: [ObjectID]
    }

    static func makeFixture(seed: UInt64, in directory: TemporaryDirectory) throws -> Fixture {
        var random = SplitMix64(seed: seed)
        let container = try StoreKind.sqliteFile.makeContainer([Movie.self, Review.self, Person.self], in: directory)
        let context = container.newBackgroundContext()
        var people: [Person] = []
        for name in names {
            let person = Person(context: context)
            person.name = name
            people.append(person)
        }
        for index in 0..<60 {
            let movie = Movie(context: context)
            movie.title = titles[index % titles.count] + (index >= titles.count ? " \(index / titles.count)" : "")
            movie.year = Int16(Int.random(in: 1990...2005, using: &random))
            movie.rating = Double(Int.random(in: 0...20, using: &random)) / 2
            movie.boxOffice = Decimal(Int.random(in: 0...400, using: &random)) / 8
            if Bool.random(using: &random) {
                movie.releaseDate = Date(
                    timeIntervalSinceReferenceDate: Double(Int.random(in: 0...5, using: &random)) * 86_400)
            }
            if Int.random(in: 0..<4, using: &random) > 0 { movie.director = people.randomElement(using: &random) }
            movie.cast = Array(people.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)))
            movie.tags = Array(
                ["drama", "Noir", "noir", "ß", "1995"].shuffled(using: &random).prefix(
                    Int.random(in: 0...3, using: &random)))
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let review = Review(context: context)
                review.stars = Int32(Int.random(in: 0...5, using: &random))
                review.text = fragments.randomElement(using: &random) ?? ""
                review.movie = movie
            }
        }
        try context.save()
        return Fixture(
            container: container, people: people.map(\.objectID), movies: try context.fetch(Movie.self).map(\.objectID))
    }

    // MARK: Random predicates

    struct PredicateGenerator {
        var random: SplitMix64
        let fixture: Fixture

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

        mutating func options() -> ComparisonOptions {
            pick([[], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
        }

        mutating func ordering() -> ComparisonOperator {
            pick([.equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo])
        }

        mutating func stringLeaf(_ key: String) -> QueryPredicate {
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                return .comparison(.keyPath(key), ordering(), .value(.string(pick(titles + names))), options: options())
            case 1: return .comparison(.keyPath(key), .contains, .value(.string(pick(fragments))), options: options())
            case 2: return .comparison(.keyPath(key), .beginsWith, .value(.string(pick(fragments))), options: options())
            case 3: return .comparison(.keyPath(key), .endsWith, .value(.string(pick(fragments))), options: options())
            case 4: return .comparison(.keyPath(key), .like, .value(.string(pick(likePatterns))), options: options())
            case 5: return .comparison(.keyPath(key), .matches, .value(.string(pick(regexes))), options: options())
            case 6:
                return .comparison(
                    .keyPath(key), .in,
                    .list(
                        (0..<Int.random(in: 0...3, using: &random)).map { _ in .value(.string(pick(titles + names))) }),
                    options: options())
            default: return .comparison(.keyPath(key), pick([.equalTo, .notEqualTo]), .value(.null))
            }
        }

        mutating func leaf() -> QueryPredicate {
            switch Int.random(in: 0..<23, using: &random) {
            case 0, 1: return stringLeaf("title")
            case 2:
                return .comparison(
                    .keyPath("year"), ordering(), .value(.integer(Int64(Int.random(in: 1989...2006, using: &random)))))
            case 3:
                let low = Int64(Int.random(in: 1989...2006, using: &random))
                return .comparison(
                    .keyPath("year"), .between,
                    .list([.value(.integer(low)), .value(.integer(low + Int64(Int.random(in: 0...5, using: &random))))])
                )
            case 4:
                return .comparison(
                    .keyPath("rating"), ordering(), .value(.double(Double(Int.random(in: 0...20, using: &random)) / 2)))
            case 5:
                return .comparison(
                    .keyPath("rating"), ordering(), .value(.integer(Int64(Int.random(in: 0...10, using: &random)))))
            case 6:
                return .comparison(
                    .keyPath("year"), ordering(),
                    .value(.double(Double(Int.random(in: 3980...4010, using: &random)) / 2)))
            case 7:
                return .comparison(
                    .keyPath("boxOffice"), ordering(),
                    .value(.decimal(Decimal(Int.random(in: 0...400, using: &random)) / 8)))
            case 8:
                if chance(30) {
                    return .comparison(.keyPath("releaseDate"), pick([.equalTo, .notEqualTo]), .value(.null))
                }
                return .comparison(
                    .keyPath("releaseDate"), ordering(),
                    .value(
                        .date(
                            Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...5, using: &random)) * 86_400)
                        )))
            case 9:
                if chance(30) {
                    return .comparison(.keyPath("director"), pick([.equalTo, .notEqualTo]), .value(.null))
                }
                return .comparison(
                    .keyPath("director"), pick([.equalTo, .notEqualTo]), .objectID(pick(fixture.people)))
            case 10: return stringLeaf("director.name")
            case 11:
                return .comparison(
                    .keyPath("reviews.stars"), ordering(),
                    .value(.integer(Int64(Int.random(in: 0...5, using: &random)))),
                    modifier: pick([.direct, .any, .all]))
            case 12:
                return .not(
                    .comparison(
                        .keyPath("reviews.stars"), ordering(),
                        .value(.integer(Int64(Int.random(in: 0...5, using: &random)))), modifier: .any))
            case 13:
                return .comparison(
                    .keyPath("reviews.@count"), ordering(),
                    .value(.integer(Int64(Int.random(in: 0...4, using: &random)))))
            case 14:
                let path = pick([
                    "reviews.@sum.stars", "reviews.@avg.stars", "reviews.@min.stars", "reviews.@max.stars",
                ])
                return .comparison(
                    .keyPath(path), ordering(), .value(.integer(Int64(Int.random(in: 0...12, using: &random)))))
            case 15:
                let inner = QueryPredicate.comparison(
                    .keyPathOn(.variable("r"), "stars"), ordering(),
                    .value(.integer(Int64(Int.random(in: 0...5, using: &random)))))
                return .comparison(
                    .keyPathOn(.subquery(collection: .keyPath("reviews"), variable: "r", predicate: inner), "@count"),
                    ordering(),
                    .value(.integer(Int64(Int.random(in: 0...3, using: &random)))))
            case 16: return .comparison(.keyPath("cast"), .contains, .objectID(pick(fixture.people)))
            case 17:
                return .comparison(
                    .keyPath("cast.name"), pick([.beginsWith, .equalTo, .contains]),
                    .value(.string(pick(names + fragments))), options: options(),
                    modifier: pick([.any, .all]))
            case 18:
                let ids = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                    QueryExpression.objectID(pick(fixture.movies))
                }
                return .comparison(.evaluatedObject, .in, .list(ids))
            case 19: return stringLeaf("reviews.text")
            case 21:
                return .comparison(
                    .keyPath("tags"), .contains, .value(.string(pick(["drama", "noir", "NOIR", "ss", "1995", "x"]))),
                    options: options())
            case 20:
                return .comparison(
                    .keyPath("director.directed.@count"), ordering(),
                    .value(.integer(Int64(Int.random(in: 0...12, using: &random)))))
            default: return .constant(chance(50))
            }
        }

        mutating func predicate(depth: Int = 0) -> QueryPredicate {
            if depth >= 3 || chance(45) { return leaf() }
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .and((0..<Int.random(in: 1...3, using: &random)).map { _ in predicate(depth: depth + 1) })
            case 1: return .or((0..<Int.random(in: 1...3, using: &random)).map { _ in predicate(depth: depth + 1) })
            default: return .not(predicate(depth: depth + 1))
            }
        }

        mutating func sorts() -> [QuerySortDescriptor] {
            let keys = ["title", "year", "rating", "boxOffice", "releaseDate", "director.name"]
            return (0..<Int.random(in: 0...2, using: &random)).map { _ in
                QuerySortDescriptor(key: pick(keys), ascending: chance(50), comparison: pick(SortComparison.allCases))
            }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func sqlAndMemoryAgree(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.makeFixture(seed: seed, in: directory)
        var generator = PredicateGenerator(random: SplitMix64(seed: seed &* 7919), fixture: fixture)
        let context = fixture.container.newBackgroundContext()
        let everything = try context.fetch(Movie.self)
        var nonEmpty = 0
        for caseNumber in 0..<600 {
            let predicate = generator.predicate()
            let sorts = generator.sorts()
            var request = FetchRequest<Movie>(
                predicate: FetchPredicate(predicate),
                sortDescriptors: sorts.map {
                    FetchSortDescriptor(key: $0.key, ascending: $0.ascending, comparison: $0.comparison)
                })
            if generator.chance(30) { request.fetchLimit = Int.random(in: 1...10, using: &generator.random) }
            if generator.chance(20) { request.fetchOffset = Int.random(in: 0...10, using: &generator.random) }
            let fromSQL = try context.fetch(request).map(\.objectID)

            let resolved = try PredicateResolver.resolve(predicate, for: Movie.entity, in: fixture.container.schema)
            let evaluator = PredicateEvaluator(predicate: resolved)
            var inMemory: [ManagedObject] = everything.filter { evaluator.evaluate($0) }
            context.sortInMemory(
                &inMemory,
                by: try PredicateResolver.resolveSorts(sorts, for: Movie.entity, in: fixture.container.schema))
            var expected = Array(inMemory.dropFirst(request.fetchOffset))
            if request.fetchLimit > 0 { expected = Array(expected.prefix(request.fetchLimit)) }
            if !fromSQL.isEmpty { nonEmpty += 1 }
            #expect(
                fromSQL == expected.map(\.objectID),
                "seed \(seed) case \(caseNumber): \(predicate) sorted by \(sorts.map { "\($0.key) \($0.ascending) \($0.comparison)" })"
            )
            if fromSQL != expected.map(\.objectID) { return }
        }
        // The generator must produce predicates that select something, or the test proves little.
        #expect(nonEmpty > 200)
    }

    /// The one sort key that in-memory sorting and fetched results controllers use must order
    /// rows exactly as SQL's `ORDER BY` with its collations does: strictly increasing along every
    /// SQL result, for random sort keys, directions and string comparisons.
    @Test(arguments: [UInt64(5), 6])
    func sortKeysAgreeWithSQLOrder(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.makeFixture(seed: seed, in: directory)
        var generator = PredicateGenerator(random: SplitMix64(seed: seed &* 131), fixture: fixture)
        let context = fixture.container.newBackgroundContext()
        var checkedPairs = 0
        for _ in 0..<300 {
            var sorts = generator.sorts()
            if sorts.isEmpty { sorts = [QuerySortDescriptor(key: "title", comparison: .caseInsensitive)] }
            let request = FetchRequest<Movie>(
                sortDescriptors: sorts.map {
                    FetchSortDescriptor(key: $0.key, ascending: $0.ascending, comparison: $0.comparison)
                })
            let fromSQL = try context.fetch(request)
            let resolved = try PredicateResolver.resolveSorts(sorts, for: Movie.entity, in: fixture.container.schema)
            let keys = fromSQL.map { SortKey(of: $0, by: resolved) { _ in .max } }
            for (index, (a, b)) in zip(keys, keys.dropFirst()).enumerated() {
                checkedPairs += 1
                #expect(
                    SortKey.compare(a, b, by: resolved) < 0,
                    "seed \(seed): \(fromSQL[index].title) before \(fromSQL[index + 1].title) sorted by \(sorts.map { "\($0.key) \($0.ascending) \($0.comparison)" })"
                )
            }
        }
        #expect(checkedPairs > 10_000)
    }

    /// Controllers place inserted and edited objects by the shared sort key, one change at a
    /// time; once saved, a fresh fetch from the store must give the controller's order.
    @Test(arguments: [UInt64(7), 8])
    func controllersKeepTheStoreOrder(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.makeFixture(seed: seed, in: directory)
        var generator = PredicateGenerator(random: SplitMix64(seed: seed &* 977), fixture: fixture)
        var random = SplitMix64(seed: seed)
        let context = fixture.container.newBackgroundContext()
        var controllers: [FetchedResultsController<Movie>] = []
        for _ in 0..<25 {
            let sorts = generator.sorts().filter { !$0.key.contains(".") }
            let controller = FetchedResultsController(
                FetchRequest<Movie>(
                    sortDescriptors: sorts.map {
                        FetchSortDescriptor(key: $0.key, ascending: $0.ascending, comparison: $0.comparison)
                    }), context: context)
            try controller.performFetch()
            controllers.append(controller)
        }
        let movies = try context.fetch(Movie.self)
        for round in 0..<3 {
            // Titles stay unique: (title, releaseDate) is a uniqueness constraint of Movie.
            for (number, movie) in movies.enumerated() where Int.random(in: 0..<4, using: &random) == 0 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: movie.title = (Self.titles.randomElement(using: &random) ?? "") + " \(round).\(number)"
                case 1: movie.year = Int16(Int.random(in: 1990...2005, using: &random))
                case 2: movie.rating = Double(Int.random(in: 0...20, using: &random)) / 2
                default: movie.releaseDate = nil
                }
            }
            for index in 0..<5 {
                let movie = Movie(context: context)
                movie.title = (Self.titles.randomElement(using: &random) ?? "") + " new \(round).\(index)"
                movie.year = Int16(Int.random(in: 1990...2005, using: &random))
            }
            context.processPendingChanges()
            for controller in controllers {
                #expect(
                    controller.fetchedObjects.map(\.objectID) == (try context.fetch(controller.fetchRequest)).map(\.objectID),
                    "seed \(seed) round \(round) unsaved: \(controller.fetchRequest.sortDescriptors.map(\.descriptor))")
            }
            try context.save()
            let fresh = fixture.container.newBackgroundContext()
            for controller in controllers {
                #expect(
                    controller.fetchedObjects.map(\.objectID) == (try fresh.fetch(controller.fetchRequest)).map(\.objectID),
                    "seed \(seed) round \(round) saved: \(controller.fetchRequest.sortDescriptors.map(\.descriptor))")
            }
        }
    }

    /// A fetch that includes unsaved changes (evaluated in memory) must return what the same
    /// fetch returns from the store once the changes are saved.
    @Test(arguments: [UInt64(11), 12])
    func pendingChangesMatchTheSavedResult(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let fixture = try Self.makeFixture(seed: seed, in: directory)
        var random = SplitMix64(seed: seed &* 31)
        let context = fixture.container.newBackgroundContext()
        let movies = try context.fetch(Movie.self)
        let people = try context.fetch(Person.self)
        for (index, movie) in movies.enumerated() {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: movie.year = Int16(Int.random(in: 1990...2005, using: &random))
            case 1: movie.title = "Edited \(index)"
            case 2: movie.director = Bool.random(using: &random) ? people.randomElement(using: &random) : nil
            case 3: context.delete(movie)
            case 4:
                let review = Review(context: context)
                review.stars = Int32(Int.random(in: 0...5, using: &random))
                review.movie = movie
            default: break
            }
        }
        people.first?.name = "Renamed"
        for index in 0..<10 {
            let movie = Movie(context: context)
            movie.title = index.isMultiple(of: 2) ? "New \(index)" : "heat \(index)"
            movie.year = Int16(Int.random(in: 1990...2005, using: &random))
            movie.director = people.randomElement(using: &random)
        }
        var generator = PredicateGenerator(random: SplitMix64(seed: seed &* 7), fixture: fixture)
        var requests: [FetchRequest<Movie>] = []
        var pending: [[Movie]] = []
        for _ in 0..<150 {
            var request = FetchRequest<Movie>(
                predicate: FetchPredicate(generator.predicate()),
                sortDescriptors: generator.sorts().map {
                    FetchSortDescriptor(key: $0.key, ascending: $0.ascending, comparison: $0.comparison)
                })
            if generator.chance(30) { request.fetchLimit = Int.random(in: 1...10, using: &generator.random) }
            if generator.chance(20) { request.fetchOffset = Int.random(in: 0...10, using: &generator.random) }
            requests.append(request)
            pending.append(try context.fetch(request))
        }
        try context.save()
        let fresh = fixture.container.newBackgroundContext()
        for (request, before) in zip(requests, pending) {
            let after = try fresh.fetch(request).map(\.objectID)
            #expect(
                before.map(\.objectID) == after,
                "seed \(seed): \(request.predicate.map { "\($0.tree)" } ?? "all") sorted by \(request.sortDescriptors.map(\.descriptor)) limit \(request.fetchLimit) offset \(request.fetchOffset)"
            )
        }
    }
}
