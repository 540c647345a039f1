import ArgumentParser
import Foundation
import Strata
import StrataPostgres

/// `strata save-loop`: saves batches of movies to a store, one save per batch, until it is
/// stopped. A hidden command that the crash-safety tests kill at random moments.
///
/// Each batch inserts ten movies titled `batch <n> item <i>` (`i` from 1 to 10) and one review
/// per movie, and saves them with a single ``ObjectContext/save()``, so a store must only ever
/// hold whole batches. Batch numbers continue from the highest one already in the store, so
/// repeated runs on one store keep counting. After each save the command writes the batch
/// number on its own line to standard output, unbuffered, so a parent process knows which
/// batches were committed.
///
/// ```
/// strata save-loop --store /tmp/SaveLoop.sqlite --batches 3
/// 1
/// 2
/// 3
/// ```
struct SaveLoopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save-loop",
        abstract: "Save batches of ten movies with a review each, one save per batch, until stopped.",
        shouldDisplay: false)

    /// The number of movies, and of reviews, in each batch.
    static let batchSize = 10

    @Option(name: .customLong("store"), help: "The store to save to: an SQLite file's path or a postgres:// URL.")
    var storePath: String

    // `.unconditional` takes the next argument as the value even when it starts with a dash,
    // so that `--batches -5` is refused as a negative count (by `validate()`) rather than read as
    // an option `-5` and reported as a missing value.
    @Option(parsing: .unconditional, help: "How many batches to save before stopping (0 or more).")
    var batches = Int.max

    @Option(help: "The transaction author recorded with each save.")
    var author: String?

    @Flag(
        help: """
            Write each batch with batch requests instead of saves: insert \(batchRequestSize) movies, \
            update them all, delete the second half.
            """)
    var batchRequests = false

    @Flag(help: "Open the store with persistent history tracking.")
    var history = false

    /// Refuses a negative batch count.
    func validate() throws {
        guard batches >= 0 else {
            throw ValidationError("--batches must be 0 or more; got \(batches).")
        }
    }

    func run() throws {
        var output = StandardOutput()
        do {
            let store = try Self.storeDescription(for: storePath, history: history)
            if batchRequests {
                try Self.runBatchRequests(store: store, batches: batches, author: author, into: &output)
            } else {
                try Self.run(store: store, batches: batches, author: author, into: &output)
            }
        } catch let error as StrataError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The store `--store` names: a PostgreSQL store for a `postgres://` URL, else an SQLite
    /// file at that path.
    static func storeDescription(for store: String, history: Bool) throws -> StoreDescription {
        if store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") {
            return .postgres(try PostgresConfiguration(url: store), persistentHistoryTracking: history)
        }
        return .sqlite(URL(fileURLWithPath: store), persistentHistoryTracking: history)
    }

    /// Saves `batches` batches to `store`, writing each batch number to `output` once its save
    /// has returned.
    static func run(
        store: StoreDescription, batches: Int, author: String? = nil, into output: inout some TextOutputStream
    ) throws {
        var (container, context, batch) = try openLoop(store: store, author: author)
        for _ in 0..<max(batches, 0) {
            batch += 1
            for item in 1...batchSize {
                let movie = Movie(context: context)
                movie.title = "batch \(batch) item \(item)"
                let review = Review(context: context)
                review.text = "review of batch \(batch) item \(item)"
                review.movie = movie
            }
            try context.save()
            // Keeps memory flat however long the loop runs.
            context.reset()
            // One write per line; `StandardOutput` writes straight to the file descriptor, so
            // the line is out as soon as this returns.
            output.write("\(batch)\n")
        }
        try container.close()
    }

    /// The movies one batch request inserts.
    static let batchRequestSize = 2000

    /// Writes each batch with three batch requests, each one transaction: inserts
    /// ``batchRequestSize`` movies `batch <n> item <i>` (release date `i` seconds after the
    /// reference date, box office 0), sets the box office of all of them to 1, then deletes the
    /// items above half. A finished batch holds items 1 through half with box office 1; the
    /// batch a kill interrupts is in one of the states between requests, never part-way
    /// through one.
    static func runBatchRequests(
        store: StoreDescription, batches: Int, author: String? = nil, into output: inout some TextOutputStream
    ) throws {
        var (container, context, batch) = try openLoop(store: store, author: author)
        for _ in 0..<max(batches, 0) {
            batch += 1
            var item = 0
            let current = batch
            try context.execute(
                BatchInsertRequest(entityName: "Movie") { (row: inout [String: Any]) in
                    guard item < batchRequestSize else { return true }
                    item += 1
                    row["title"] = "batch \(current) item \(item)"
                    row["releaseDate"] = Date(timeIntervalSinceReferenceDate: Double(item))
                    return false
                })
            let ofBatch = try FetchRequest<Movie>(format: "title BEGINSWITH %@", "batch \(batch) item ")
            var update = BatchUpdateRequest(entityName: "Movie", propertiesToUpdate: ["boxOffice": 1])
            update.predicate = ofBatch.predicate?.tree
            try context.execute(update)
            let secondHalf = try FetchRequest<Movie>(
                format: "title BEGINSWITH %@ AND releaseDate > %@", "batch \(batch) item ",
                Date(timeIntervalSinceReferenceDate: Double(batchRequestSize / 2)))
            try context.execute(BatchDeleteRequest(fetchRequest: secondHalf))
            output.write("\(batch)\n")
        }
        try container.close()
    }

    /// The loop's container and context, and the highest batch number already in the store.
    static func openLoop(store: StoreDescription, author: String?) throws -> (
        PersistentContainer, ObjectContext, Int
    ) {
        let container = try makeContainer(store: store)
        let context = container.newBackgroundContext()
        context.transactionAuthor = author.map { TransactionAuthor($0) }
        let batch = try context.fetch(Movie.self).compactMap { batchNumber(ofTitle: $0.title) }.max() ?? 0
        context.reset()
        return (container, context, batch)
    }

    /// A container for the model the loop saves, with one SQLite store at `storeURL`.
    static func makeContainer(storeURL: URL, history: Bool = false) throws -> PersistentContainer {
        try makeContainer(store: .sqlite(storeURL, persistentHistoryTracking: history))
    }

    /// A container for the model the loop saves, with one store.
    static func makeContainer(store: StoreDescription) throws -> PersistentContainer {
        try PersistentContainer(name: "SaveLoop", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [store])
    }

    /// The batch number in a title the loop made (`batch <n> item <i>`), or `nil`.
    static func batchNumber(ofTitle title: String) -> Int? {
        let words = title.split(separator: " ")
        guard words.count == 4, words[0] == "batch", words[2] == "item" else { return nil }
        return Int(words[1])
    }
}
