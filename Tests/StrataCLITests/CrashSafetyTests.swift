import Foundation
import GRDB
import Testing

@testable import Strata
@testable import StrataCLI

/// Kills `strata save-loop` with SIGKILL in the middle of its saves, again and again on one
/// store, and checks after each kill that the store is intact and holds only whole saves.
@Suite(.serialized) struct CrashSafetyTests {
    /// Kills per test; set `STRATA_CRASH_ROUNDS` to hunt for rare failures with many more.
    static let rounds =
        ProcessInfo.processInfo.environment["STRATA_CRASH_ROUNDS"].flatMap { Int($0) }.map { max($0, 1) } ?? 15
    /// How long a child may take to report its first save before the test gives up on it.
    static let startTimeout = Duration.seconds(300)

    /// The `strata` executable next to the tests, and a new, empty folder for one test's stores
    /// (the test removes it).
    static func executableAndFolder() throws -> (executable: URL, folder: URL) {
        let executable = try #require(
            StrataExecutable.locate(),
            """
            Cannot find the `strata` executable next to the test product; looked in \
            \(StrataExecutable.candidateFolders().map(\.path).joined(separator: ", ")). \
            Build it into the same build folder as the tests: `swift build --build-tests` \
            (with the same --scratch-path) builds every product, `strata` included.
            """)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (executable, folder)
    }

    @Test func killedSaveLoopsLeaveOnlyWholeSaves() async throws {
        let (executable, folder) = try Self.executableAndFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("SaveLoop.sqlite")

        var highestBatch = 0
        for round in 1...Self.rounds {
            let child = try SaveLoopChild(
                executable: executable, store: store, errorLog: folder.appendingPathComponent("stderr-\(round).txt"))
            defer { child.killIfRunning() }
            guard try await child.waitForFirstSave(timeout: Self.startTimeout) else {
                Issue.record(
                    "Round \(round): `\(executable.path) save-loop` reported no save within \(Self.startTimeout): \(try await child.endReport())"
                )
                return
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...40)))
            child.sendSIGKILL()
            try await child.waitForExit()
            guard child.wasKilled else {
                Issue.record(
                    "Round \(round): save-loop ended by itself (\(child.process.terminationReason), status \(child.process.terminationStatus)) before it was killed. stderr: \(child.errorOutput())"
                )
                return
            }

            let inspection = Self.inspect(
                store, highestBatchSoFar: highestBatch, reportedBatch: child.reportedBatches().max() ?? 0)
            for problem in inspection.problems { Issue.record("Round \(round) of \(Self.rounds): \(problem)") }
            // The damage stays in the store; later rounds would only report it again.
            guard inspection.problems.isEmpty else { return }
            highestBatch = inspection.highestBatch
        }
        #expect(highestBatch >= Self.rounds, "every round saves at least one batch")
    }

    /// Kills `strata save-loop --batch-requests` (with history) in the middle of its batch
    /// inserts, updates and deletes: each request must be whole or absent, and its history with
    /// it.
    @Test func killedBatchRequestsLeaveOnlyWholeRequests() async throws {
        let (executable, folder) = try Self.executableAndFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("BatchLoop.sqlite")
        var highestFinished = 0
        // Batches a kill left between two requests, as they were left: the next run starts a
        // new batch above them, so they must stay exactly so.
        var leftBetweenRequests: [Int: BatchRequestState] = [:]
        for round in 1...Self.rounds {
            let child = try SaveLoopChild(
                executable: executable, store: store, errorLog: folder.appendingPathComponent("stderr-\(round).txt"),
                arguments: ["--batch-requests", "--history"])
            defer { child.killIfRunning() }
            guard try await child.waitForFirstSave(timeout: Self.startTimeout) else {
                Issue.record("Round \(round): no batch within \(Self.startTimeout): \(try await child.endReport())")
                return
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...40)))
            child.sendSIGKILL()
            try await child.waitForExit()
            guard child.wasKilled else {
                Issue.record("Round \(round): save-loop ended by itself before it was killed. stderr: \(child.errorOutput())")
                return
            }
            let check = try Self.integrityCheck(of: store)
            if check != ["ok"] { Issue.record("Round \(round): integrity_check reports \(check)") }
            let states = try Self.batchRequestStates(in: store)
            let reported = child.reportedBatches().max() ?? 0
            let finished = states.filter { $0.value == .finished }.keys.sorted()
            for (batch, state) in states.sorted(by: { $0.key < $1.key }) {
                switch state {
                case .finished: break
                case .broken(let why): Issue.record("Round \(round): batch \(batch) is broken: \(why)")
                case .inserted, .updated:
                    // Only the batch this kill interrupted, or one an earlier kill left so.
                    if batch == states.keys.max() {
                        leftBetweenRequests[batch] = leftBetweenRequests[batch] ?? state
                    }
                    if leftBetweenRequests[batch] != state {
                        Issue.record("Round \(round): batch \(batch) is \(state), earlier \(leftBetweenRequests[batch].map(\.description) ?? "finished or absent")")
                    }
                }
            }
            if (finished.max() ?? 0) < reported {
                Issue.record("Round \(round): save-loop reported batch \(reported) done, the store has \(finished)")
            }
            highestFinished = max(highestFinished, finished.max() ?? 0)
            // History has one transaction per request that happened, and none for the others.
            let container = try SaveLoopCommand.makeContainer(storeURL: store, history: true)
            let transactions = try container.fetchHistory(HistoryFetchRequest(includesChanges: false)).count
            let expected = states.values.reduce(0) { total, state in
                switch state {
                case .finished: total + 3
                case .updated: total + 2
                case .inserted: total + 1
                case .broken: total
                }
            }
            try container.close()
            if transactions != expected {
                Issue.record("Round \(round): history has \(transactions) transactions for \(expected) requests")
            }
            guard states.values.allSatisfy({ if case .broken = $0 { false } else { true } }) else { return }
        }
        #expect(highestFinished >= 1)
    }

    /// What a batch of `save-loop --batch-requests` looks like in the store.
    enum BatchRequestState: Equatable, CustomStringConvertible {
        /// All items inserted, none updated.
        case inserted
        /// All items inserted and updated.
        case updated
        /// The first half left, updated.
        case finished
        /// Anything else: part of a request was written.
        case broken(String)

        var description: String {
            switch self {
            case .inserted: "inserted"
            case .updated: "updated"
            case .finished: "finished"
            case .broken(let why): "broken (\(why))"
            }
        }
    }

    /// The state of every batch `save-loop --batch-requests` wrote.
    static func batchRequestStates(in store: URL) throws -> [Int: BatchRequestState] {
        let container = try SaveLoopCommand.makeContainer(storeURL: store)
        defer { try? container.close() }
        let values = try container.newBackgroundContext().fetch(Movie.self).map { ($0.title, $0.boxOffice) }
        var items: [Int: [(item: Int, boxOffice: Decimal)]] = [:]
        for (title, boxOffice) in values {
            let words = title.split(separator: " ")
            guard let batch = SaveLoopCommand.batchNumber(ofTitle: title), let item = Int(words[3]) else { continue }
            items[batch, default: []].append((item, boxOffice))
        }
        let size = SaveLoopCommand.batchRequestSize
        return items.mapValues { rows in
            let numbers = rows.map(\.item).sorted()
            let offices = Set(rows.map(\.boxOffice))
            if numbers == Array(1...size) {
                if offices == [0] { return .inserted }
                if offices == [1] { return .updated }
                return .broken("box offices \(offices.sorted())")
            }
            if numbers == Array(1...size / 2) {
                return offices == [1] ? .finished : .broken("half deleted before its update: \(offices.sorted())")
            }
            return .broken("\(numbers.count) items")
        }
    }

    /// Rounds of the creation test; `STRATA_CRASH_ROUNDS` raises it too.
    static let creationRounds =
        ProcessInfo.processInfo.environment["STRATA_CRASH_ROUNDS"].flatMap { Int($0) }.map { max($0, 1) } ?? 24

    /// Kills `save-loop` 0–150 ms (more on a busy machine) after it starts on a new path — while
    /// it creates the store, opens it for the first time or saves its first batches — then kills
    /// a second one on the same store the same way, while it opens (and recovers) what the first
    /// left. Each time the store must be missing or open with whole batches only.
    @Test func killsWhileCreatingAndFirstOpeningLeaveAStoreThatOpens() async throws {
        let (executable, folder) = try Self.executableAndFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var created = 0
        // Kills come 0–150 ms after the start; on a machine too busy for a child to get as far
        // as creating its store that soon, the window doubles after each round that found no
        // store (up to ten seconds), so the kills land in creation and first opening whatever
        // the machine's speed.
        var window = 150
        for round in 1...Self.creationRounds {
            let store = folder.appendingPathComponent("Store-\(round).sqlite")
            var highestBatch = 0
            let createdBefore = created
            for (attempt, what) in ["creating", "reopening"].enumerated() {
                let child = try SaveLoopChild(
                    executable: executable, store: store,
                    errorLog: folder.appendingPathComponent("stderr-\(round)-\(attempt).txt"))
                defer { child.killIfRunning() }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...window)))
                child.sendSIGKILL()
                try await child.waitForExit()
                guard child.wasKilled else {
                    Issue.record(
                        "Round \(round), \(what): save-loop ended by itself (status \(child.process.terminationStatus)) before it was killed. stderr: \(child.errorOutput())"
                    )
                    return
                }
                guard FileManager.default.fileExists(atPath: store.path) else {
                    if highestBatch > 0 || created > createdBefore {
                        Issue.record("Round \(round): the store vanished (\(Self.fileSizes(of: store)))")
                    }
                    if created == 0 { window = min(window * 2, 10_000) }
                    continue  // killed before the store was moved into place
                }
                created += attempt == 0 ? 1 : 0
                let reported = child.reportedBatches().max() ?? 0
                do {
                    let contents = try Self.batchContents(in: store)
                    for problem in contents.problems { Issue.record("Round \(round), \(what): \(problem)") }
                    let highest = contents.batches.max() ?? 0
                    if contents.batches != Array(stride(from: 1, through: highest, by: 1)) {
                        Issue.record("Round \(round), \(what): batches have gaps: \(contents.batches)")
                    }
                    if highest < max(reported, highestBatch) {
                        Issue.record("Round \(round), \(what): the store holds \(highest) batches, \(max(reported, highestBatch)) were saved")
                    }
                    highestBatch = highest
                    let check = try Self.integrityCheck(of: store)
                    if check != ["ok"] { Issue.record("Round \(round), \(what): integrity_check reports \(check)") }
                } catch {
                    Issue.record("Round \(round), \(what): the store does not open (\(Self.fileSizes(of: store))): \(error)")
                    return
                }
            }
        }
        // A run where every kill came before the store existed tests nothing.
        #expect(created > 0, "no round got as far as creating the store")
    }

    /// What is wrong with the store after a kill, and the highest batch it holds.
    ///
    /// The store must pass `PRAGMA integrity_check`, reopen, and hold whole batches only,
    /// numbered from 1 without gaps, at least as many as before the kill and at least up to the
    /// last batch the child reported saved.
    static func inspect(_ store: URL, highestBatchSoFar: Int, reportedBatch: Int) -> (
        problems: [String], highestBatch: Int
    ) {
        var messages: [String] = []
        do {
            let rows = try integrityCheck(of: store)
            if rows != ["ok"] { messages.append("PRAGMA integrity_check reports \(rows)") }
        } catch {
            messages.append("PRAGMA integrity_check failed (\(fileSizes(of: store))): \(error)")
        }
        let batches: [Int]
        do {
            let contents = try batchContents(in: store)
            messages += contents.problems
            batches = contents.batches
        } catch {
            messages.append("the store could not be reopened after the kill (\(fileSizes(of: store))): \(error)")
            return (messages, highestBatchSoFar)
        }
        let highest = batches.max() ?? 0
        if batches != Array(stride(from: 1, through: highest, by: 1)) {
            messages.append("batches should run from 1 to \(highest) without gaps, found \(batches)")
        }
        if highest < highestBatchSoFar {
            messages.append("the store went back from \(highestBatchSoFar) to \(highest) batches")
        }
        if highest < reportedBatch {
            messages.append(
                "save-loop reported batch \(reportedBatch) saved, but the store holds only \(highest) batches")
        }
        return (messages, highest)
    }

    /// The rows of `PRAGMA integrity_check`, read without writing to the store.
    static func integrityCheck(of store: URL) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: store.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// The sizes of the store's database, WAL and shared-memory files, for failure messages.
    static func fileSizes(of store: URL) -> String {
        ["", "-wal", "-shm"].map { suffix in
            let size = (try? FileManager.default.attributesOfItem(atPath: store.path + suffix)[.size] as? Int).flatMap {
                $0
            }
            return "\(store.lastPathComponent)\(suffix): " + (size.map { "\($0) bytes" } ?? "none")
        }.joined(separator: ", ")
    }

    /// Opens the store as an app would and returns its batch numbers, sorted, and a problem
    /// for every batch that is not whole: ten movies `batch <n> item 1...10`, and ten reviews,
    /// each linked to one of them.
    static func batchContents(in store: URL) throws -> (batches: [Int], problems: [String]) {
        let container = try SaveLoopCommand.makeContainer(storeURL: store)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        var problems: [String] = []

        var itemsByBatch: [Int: [Int]] = [:]
        // Kept alive so that `review.movie` below finds the loaded movies instead of loading
        // each one alone: under load the child saves many batches before it is killed.
        let movies = try context.fetch(Movie.self)
        for movie in movies {
            let words = movie.title.split(separator: " ")
            guard let batch = SaveLoopCommand.batchNumber(ofTitle: movie.title), let item = Int(words[3]) else {
                problems.append("a movie has a title save-loop does not make: '\(movie.title)'")
                continue
            }
            itemsByBatch[batch, default: []].append(item)
        }
        var reviewsByBatch: [Int: Int] = [:]
        for review in try context.fetch(Review.self) {
            guard let movie = review.movie, let batch = SaveLoopCommand.batchNumber(ofTitle: movie.title) else {
                problems.append("review '\(review.text)' is not linked to a movie of a batch")
                continue
            }
            if review.text != "review of \(movie.title)" {
                problems.append("review '\(review.text)' is linked to '\(movie.title)'")
            }
            reviewsByBatch[batch, default: 0] += 1
        }
        withExtendedLifetime(movies) {}

        let expectedItems = Array(1...SaveLoopCommand.batchSize)
        for (batch, items) in itemsByBatch.sorted(by: { $0.key < $1.key }) {
            if items.sorted() != expectedItems {
                problems.append("batch \(batch) was saved in part: its movies are items \(items.sorted())")
            }
            if reviewsByBatch[batch] != SaveLoopCommand.batchSize {
                problems.append(
                    "batch \(batch) has \(reviewsByBatch[batch] ?? 0) reviews instead of \(SaveLoopCommand.batchSize)")
            }
        }
        for batch in reviewsByBatch.keys.sorted() where itemsByBatch[batch] == nil {
            problems.append("reviews of batch \(batch) are in the store but not its movies")
        }
        return (itemsByBatch.keys.sorted(), problems)
    }
}

/// The `strata` executable that `swift build --build-tests` put in the same products folder as
/// the tests (`<scratch path>/<triple>/debug`).
///
/// Only the tests' own products folder counts: a `strata` from another build folder (say the
/// default `.build` while the tests run from `--scratch-path`) may be stale and would test
/// other code.
enum StrataExecutable {
    static func locate() -> URL? {
        candidateFolders()
            .map { $0.appendingPathComponent("strata") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Where to look, best first.
    static func candidateFolders() -> [URL] {
        var folders: [URL] = []
        // macOS: the tests are a bundle `<products>/<Package>PackageTests.xctest` that a runner
        // from the toolchain loads. Linux: `Bundle(for:)` is the main bundle, below.
        let testBundle = Bundle(for: SaveLoopChild.self).bundleURL.resolvingSymlinksInPath()
        if testBundle.pathExtension == "xctest" {
            folders.append(testBundle.deletingLastPathComponent())
        }
        // Linux: the test product is itself an executable, `<products>/<Package>PackageTests.xctest`,
        // and `swift test` runs it directly.
        if let executable = Bundle.main.executableURL {
            folders.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        if let first = CommandLine.arguments.first, first.contains("/") {
            folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        var seen = Set<String>()
        return folders.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }
}

/// A running `strata save-loop` whose standard output is read as it comes.
final class SaveLoopChild {
    let process: Process
    private let errorLog: URL
    private let output = LockedBox((data: Data(), ended: false))

    /// Starts `strata save-loop --store <store>` with `arguments`, its standard error going to
    /// `errorLog`.
    init(executable: URL, store: URL, errorLog: URL, arguments: [String] = [], command: String = "save-loop") throws {
        try Data().write(to: errorLog)
        let errorHandle = try FileHandle(forWritingTo: errorLog)
        defer { try? errorHandle.close() }
        let pipe = Pipe()
        process = Process()
        process.executableURL = executable
        process.arguments = [command, "--store", store.path] + arguments
        process.standardOutput = pipe
        process.standardError = errorHandle
        self.errorLog = errorLog
        try process.run()
        try? pipe.fileHandleForWriting.close()

        let reading = pipe.fileHandleForReading
        let output = output
        // Blocking reads on a thread of its own, until the child's end of the pipe closes.
        Thread.detachNewThread {
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                output.withLock { $0.data.append(data) }
            }
            output.withLock { $0.ended = true }
        }
    }

    /// The complete lines the child has written so far.
    func lines() -> [String] {
        let text = output.withLock { String(decoding: $0.data, as: UTF8.self) }
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Whether the child's output has ended (it exited or was killed).
    var outputEnded: Bool { output.withLock { $0.ended } }

    /// The batch numbers of the complete lines the child has written so far.
    func reportedBatches() -> [Int] {
        let text = output.withLock { String(decoding: $0.data, as: UTF8.self) }
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { Int($0) }
    }

    /// Waits until the child reports a save; `false` if it does not within `timeout` or ends
    /// first (then at once: ``endReport()`` says how it ended).
    func waitForFirstSave(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !reportedBatches().isEmpty { return true }
            if output.withLock({ $0.ended }) { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
        // Other tests can keep this task off the CPU past the deadline: look once more.
        return !reportedBatches().isEmpty
    }

    func sendSIGKILL() {
        _ = kill(process.processIdentifier, SIGKILL)
    }

    /// Kills the child at a random moment of a run that takes about `duration` (up to
    /// `duration` × `stretch`), or not at all if it ends first, and waits for it to end.
    ///
    /// Polls rather than sleeping the whole delay: a child that finishes early (the machine got
    /// quieter than when `duration` was measured) ends the wait at once instead of leaving the
    /// test idle. Returns how long the child ran when it finished by itself, so that the caller
    /// can aim later kills at the shorter run; `nil` when it was killed.
    func killAtRandomMoment(of duration: Duration, stretch: Double = 1, startedAt started: ContinuousClock.Instant) async throws -> Duration? {
        let killAt = ContinuousClock.now + duration * Double.random(in: 0...stretch)
        while ContinuousClock.now < killAt {
            if !process.isRunning || outputEnded {
                try await waitForExit()
                return ContinuousClock.now - started
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        sendSIGKILL()
        try await waitForExit()
        return nil
    }

    func killIfRunning() {
        if process.isRunning { sendSIGKILL() }
    }

    /// Waits for the child to end and for its output to be read to the end: after SIGKILL, or
    /// (with a longer `timeout`) for work it was left to finish.
    func waitForExit(timeout: Duration = .seconds(300)) async throws {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning || !output.withLock({ $0.ended }) {
            guard ContinuousClock.now < deadline else {
                // Other tests can keep this task off the CPU past the deadline: look once more.
                if !process.isRunning && output.withLock({ $0.ended }) { return }
                Issue.record("save-loop (pid \(process.processIdentifier)) did not end within \(timeout)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// How the child ended and what it wrote to standard error, for failure messages; waits
    /// for it to end first when its output has ended.
    func endReport() async throws -> String {
        if outputEnded { try await waitForExit() }
        return "it \(exitDescription(process)); stderr: \(errorOutput())"
    }

    var wasKilled: Bool {
        !process.isRunning && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    func errorOutput() -> String {
        (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
    }
}
