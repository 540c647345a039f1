import ArgumentParser
import Foundation
import Strata
import StrataPostgres

/// `strata demo`: shows Strata at work on a sample model, in an SQLite or PostgreSQL store.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show Strata at work on a sample model of movies, reviews and people.",
        discussion: """
            Builds the sample model's schema, saves a small graph of movies, reviews and people \
            to a store, reopens it, prints what it holds, and shows a live query following \
            background saves. The store is an SQLite file (by default in the per-user data \
            folder), or a PostgreSQL database when --store is a postgres:// URL.

            Examples:
              strata demo
              strata demo --store Demo.sqlite
              strata demo --store 'postgres://me:secret@127.0.0.1/strata?schema=demo'
            """)

    @Option(
        name: .customLong("store"),
        help: "The SQLite file, or a postgres:// URL, to use (default: an SQLite file in the per-user data folder).")
    var store: String?

    func run() async throws {
        var output = StandardOutput()
        let description: StoreDescription
        let location: String
        do {
            (description, location) = try Self.storeDescription(for: store)
            try await Self.run(store: description, location: location, into: &output)
        } catch let error as StrataError {
            var message = error.description
            if error.code == .incompatibleSchema || error.code == .notAStore || error.code == .corruptStore {
                message += "\nUse another --store, or remove the demo's store to start over."
            }
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The store `--store` names: a PostgreSQL URL, or an SQLite file path.
    static func storeDescription(for store: String?) throws -> (StoreDescription, String) {
        if let store, store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") {
            let configuration = try PostgresConfiguration(url: store)
            return (.postgres(configuration), "A PostgreSQL store at \(configuration)")
        }
        let url = store.map { URL(fileURLWithPath: $0) } ?? PersistentContainer.defaultStoreURL(name: "StrataDemo")
        return (.sqlite(url), "An SQLite store at \(url.path)")
    }

    /// Runs the demo against the SQLite store at `storeURL`, writing what it shows to `output`.
    static func run(storeURL: URL, into output: inout some TextOutputStream) async throws {
        try await run(store: .sqlite(storeURL), location: "An SQLite store at \(storeURL.path)", into: &output)
    }

    /// Runs the demo against a store, writing what it shows to `output`.
    static func run(store: StoreDescription, location: String, into output: inout some TextOutputStream) async throws {
        try showModel(into: &output)
        try showStore(store, location: location, into: &output)
        try await showLiveQuery(store, into: &output)
    }

    /// Follows the demo's movies with a live query while background tasks add and remove one.
    static func showLiveQuery(_ store: StoreDescription, into output: inout some TextOutputStream) async throws {
        print("\nA live query following background saves:", to: &output)
        let container = try PersistentContainer(
            name: "StrataDemo", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [store])
        defer { try? container.close() }
        let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
        var results = container.observe(request).makeAsyncIterator()
        print("  now:                        \(try await results.next()?.map(\.title) ?? [])", to: &output)
        try await container.performBackgroundTask(author: "demo") { context in
            Movie(context: context).title = "Thief"
            try context.save()
        }
        print("  after a background insert:  \(try await results.next()?.map(\.title) ?? [])", to: &output)
        try await container.performBackgroundTask(author: "demo") { context in
            for movie in try context.fetch(Movie.self, where: \.title == "Thief") { context.delete(movie) }
            try context.save()
        }
        print("  after a background delete:  \(try await results.next()?.map(\.title) ?? [])", to: &output)
    }

    /// Saves a graph to the store (the first time), reopens it and prints its contents.
    static func showStore(_ store: StoreDescription, location: String, into output: inout some TextOutputStream) throws {
        print("\n\(location):", to: &output)
        do {
            let container = try PersistentContainer(
                name: "StrataDemo", entities: [Movie.self, Director.self, Critic.self],
                storeDescriptions: [store])
            let context = container.newBackgroundContext()
            if try context.count(for: Movie.self) == 0 {
                let mann = Director(context: context)
                mann.name = "Michael Mann"
                mann.awards = 2
                let frankenheimer = Director(context: context)
                frankenheimer.name = "John Frankenheimer"
                let critic = Critic(context: context)
                critic.name = "Pauline K."
                critic.outlet = "The Weekly"
                for (title, director, year, gross, stars) in [
                    ("Heat", mann, 1995, "187436818", [5, 4]), ("Collateral", mann, 2004, "220939174", [4]),
                    ("Ronin", frankenheimer, 1998, "70692101", [4, 3, 5]),
                ] as [(String, Director, Int, String, [Int16])] {
                    let movie = Movie(context: context)
                    movie.title = title
                    movie.releaseDate =
                        DateComponents(
                            calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC"),
                            year: year, month: 6, day: 1
                        ).date
                    movie.boxOffice = Decimal(string: gross) ?? 0
                    movie.director = director
                    for value in stars {
                        let review = Review(context: context)
                        review.stars = value
                        review.text = "\(value) stars from \(critic.name)"
                        review.movie = movie
                    }
                }
                try context.save()
                print("  saved 3 movies, 6 reviews and 3 people in one transaction", to: &output)
            } else {
                print("  the store already holds the demo's movies from an earlier run", to: &output)
            }
            try container.close()
        }
        let reopened = try PersistentContainer(
            name: "StrataDemo", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [store])
        let context = reopened.newBackgroundContext()
        print("  reopened; fetched from the store:", to: &output)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy"
        formatter.timeZone = TimeZone(identifier: "UTC")
        for movie in try context.fetch(Movie.self).sorted(by: { $0.title < $1.title }) {
            let year = movie.releaseDate.map { formatter.string(from: $0) } ?? "?"
            let stars = movie.reviews.map(\.stars).sorted(by: >).map(String.init).joined(separator: ", ")
            print(
                "  - \(movie.title) (\(year)) by \(movie.director?.name ?? "?"), box office $\(movie.boxOffice), reviews: \(stars)",
                to: &output)
        }
        for person in try context.fetch(entityName: "Person") {
            let name = (try? person.value(forKey: "name") as? String) ?? "?"
            print("  - \(person.entity.name) \(name) \(person.objectID)", to: &output)
        }
        print("  \(try context.count(for: Review.self)) reviews in all", to: &output)
        try showQueries(in: context, into: &output)
        try reopened.close()
    }

    /// Predicate fetches (three front ends) and aggregates computed in SQL.
    static func showQueries(in context: ObjectContext, into output: inout some TextOutputStream) throws {
        print("\nFetching with predicates:", to: &output)
        let byMann = try context.fetch(
            Movie.self, where: \.director?.name == "Michael Mann", sortedBy: [.descending(\.releaseDate)])
        print("  key paths   \\.director?.name == \"Michael Mann\" -> \(byMann.map(\.title))", to: &output)
        let mannReviews = try context.fetch(
            Review.self, where: \.movie?.director?.name == "Michael Mann", sortedBy: [.ascending(\.movie?.title)])
        var reviewed: [String] = []  // sorted by title, so a repeated title is the previous one
        for title in mannReviews.compactMap(\.movie?.title) where reviewed.last != title { reviewed.append(title) }
        print(
            "  two hops    Review \\.movie?.director?.name == \"Michael Mann\" -> \(mannReviews.count) reviews of \(reviewed)",
            to: &output)
        let format = "ANY reviews.stars == 5 AND title BEGINSWITH[c] %@"
        let praised = try context.fetch(FetchRequest<Movie>(format: format, "h"))
        print("  format      \(format) -> \(praised.map(\.title))", to: &output)
        let rich = try context.fetch(
            FetchRequest(predicate: try FetchPredicate(#Predicate<Movie> { $0.boxOffice > 100_000_000 })).sorted(
                by: .ascending(\.title)))
        print("  #Predicate  { $0.boxOffice > 100_000_000 } -> \(rich.map(\.title))", to: &output)
        let folded = try context.fetch(
            Movie.self, where: (\Movie.title).equal(to: "RÖNIN", options: [.caseInsensitive, .diacriticInsensitive]))
        print("  folding     title ==[cd] \"RÖNIN\" -> \(folded.map(\.title))", to: &output)
        do {
            _ = try context.fetch(FetchRequest<Movie>(format: "titel == %@", "Heat"))
        } catch let error as StrataError {
            print("  unknown key -> \(error.code): \(error.message)", to: &output)
        }
        do {
            _ = try FetchPredicate<Movie>(format: "title == 'Heat' AND (")
        } catch let error as StrataError {
            print("  malformed   -> \(error.code) at offset \(error.offset ?? -1): \(error.message)", to: &output)
        }

        print("\nAggregates, computed by the store:", to: &output)
        let total: Decimal = try context.sum(\Movie.boxOffice)
        let average = try context.average(\Review.stars) ?? 0
        print("  total box office $\(total), average review \(String(format: "%.2f", average)) stars", to: &output)
        var request = FetchRequest<Movie>(sortDescriptors: [FetchSortDescriptor(key: "director.name")])
        request.propertiesToFetch = [
            .attribute("director.name", as: "director"), .count(as: "movies"), .sum("boxOffice", as: "gross"),
        ]
        request.propertiesToGroupBy = ["director.name"]
        for row in try context.fetchDictionaries(request) {
            print(
                "  \(row["director"].map { "\($0)" } ?? "?"): \(row["movies"].map { "\($0)" } ?? "0") movie(s), $\(row["gross"].map { "\($0)" } ?? "0")",
                to: &output)
        }
    }

    /// Shows the model layer without a store.
    static func showModel(into output: inout some TextOutputStream) throws {
        let schema = try Schema([Movie.self, Director.self, Critic.self], versionIdentifier: "demo")
        print("Schema built from @Entity classes:\n", to: &output)
        print(schema, to: &output)
        if !schema.warnings.isEmpty {
            print("\nWarnings:", to: &output)
            for warning in schema.warnings { print("  - \(warning)", to: &output) }
        }

        print("\nObjects in a context:", to: &output)
        let context = ObjectContext(schema: schema)
        let director = Director(context: context)
        director.name = "Michael Mann"
        director.awards = 2
        let movie = Movie(context: context)
        movie.title = "Heat"
        movie.boxOffice = Decimal(string: "187436818.00") ?? 0
        movie.genres = ["crime", "thriller"]
        movie.director = director
        let review = Review(context: context)
        review.text = "A masterpiece of the genre."
        review.stars = 5
        review.movie = movie
        print(
            "  \(movie.title) directed by \(movie.director?.name ?? "?"), \(movie.reviews.count) review(s)", to: &output
        )
        print("  inverse kept in step: \(director.name) directed \(director.directed.map(\.title))", to: &output)
        print("  inserted objects: \(context.insertedObjects.count), hasChanges: \(context.hasChanges)", to: &output)

        print("\nDynamic access by key (what tools and Xcode-model users get):", to: &output)
        print("  value(forKey: \"title\") = \(try movie.value(forKey: "title") ?? "nil")", to: &output)
        do {
            try movie.setValue(42, forKey: "title")
        } catch let error as StrataError {
            print("  setValue(42, forKey: \"title\") -> \(error.code): \(error.message)", to: &output)
        }
        do {
            try movie.setValue("x", forKey: "titel")
        } catch let error as StrataError {
            print("  setValue(\"x\", forKey: \"titel\") -> \(error.code): \(error.message)", to: &output)
        }

        print("\nValidation before save:", to: &output)
        let empty = Movie(context: context)
        let broken = Review(context: context)
        broken.stars = 9
        for object in [empty, broken] as [ManagedObject] {
            for failure in object.validationFailures() {
                print("  \(failure.code): \(failure.message)", to: &output)
            }
        }

        print("\nA Sendable value snapshot:", to: &output)
        let snapshot = movie.value
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print("  " + String(decoding: try encoder.encode(snapshot), as: UTF8.self), to: &output)

        print(
            "\nThe same model in its stable serialized form is \(schema.serializedRepresentation().count) bytes;",
            to: &output)
        print("its version hash is \(schema.versionHash).", to: &output)
    }
}

/// Standard output as a `TextOutputStream`.
///
/// It holds the file handle rather than being an empty struct: Swift 6.3.1 passes no real
/// address for an `inout` argument of a zero-sized type, and under ThreadSanitizer
/// (`--sanitize=thread`) a *generic* callee (`inout some TextOutputStream`), which cannot know
/// the type is empty, still instruments the access with that undefined address, so the tool
/// crashed inside `__tsan::ExternalAccess`. (swiftlang/swift#35579 skips the instrumentation
/// only where the type is known to be empty.) A stored property gives the value an address.
struct StandardOutput: TextOutputStream {
    /// Where the text goes.
    let handle = FileHandle.standardOutput

    mutating func write(_ string: String) {
        handle.write(Data(string.utf8))
    }
}
