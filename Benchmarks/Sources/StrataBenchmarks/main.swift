import CSQLite
import BenchmarkSupport
import Foundation

// Runs each workload for every contender: one warm-up, then the median of `runs` timed runs,
// each measured with the process's peak resident memory reset first. Writes a Markdown table.
//
//   StrataBenchmarks [--quick] [--runs N] [--output RESULTS.md] [--only W1,W2] [--contenders strata,raw]
//
// `--only` and `--contenders` narrow a run, e.g. to profile one workload under callgrind.

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let runs = arguments.firstIndex(of: "--runs").flatMap { Int(arguments[$0 + 1]) } ?? (quick ? 1 : 5)
let output = arguments.firstIndex(of: "--output").map { arguments[$0 + 1] }
let onlyWorkloads = arguments.firstIndex(of: "--only").map {
    Set(arguments[$0 + 1].split(separator: ",").map(String.init))
}
let onlyContenders = arguments.firstIndex(of: "--contenders").map {
    Set(arguments[$0 + 1].split(separator: ",").compactMap { Contender(rawValue: String($0)) })
}

struct Measurement {
    var seconds: Double
    var peakMegabytes: Double
}


func measure(_ body: () throws -> Void) rethrows -> Measurement {
    resetPeakMemory()
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Measurement(seconds: seconds, peakMegabytes: peakMemory())
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// One benchmark. Only `run` is timed; the other steps prepare its input or check its output.
///
/// For each contender: `setup` once, then for each run (the warm-up included) `prepareRun`,
/// the timed `run`, and `verify`. Workloads that modify a store (W6, W7) keep a template in
/// `setup`'s folder and give every run a fresh copy of it through `prepareRun`.
struct Workload {
    var name: String
    var description: String
    /// Contenders the workload does not apply to; the table shows "–" for them.
    var skipped: Set<Contender> = []
    /// Builds what every run reads (a store, usually) in a new folder, or returns nil.
    /// The folder is deleted after the contender's last run.
    var setup: (Contender) throws -> URL?
    /// Gives one run its own new folder (given `setup`'s), deleted after the run; nil keeps
    /// `setup`'s folder.
    var prepareRun: ((Contender, URL?) throws -> URL?)? = nil
    /// The measured work, given the run's folder.
    var run: (Contender, URL?) throws -> Void
    /// Checks that the run did its work (it throws `BenchmarkError` otherwise), so that a broken
    /// workload fails the smoke run instead of reporting a fast time.
    var verify: ((Contender, URL?) throws -> Void)? = nil
}

extension URL? {
    /// The folder that `setup` or `prepareRun` gave the run; a missing one is a bug in the workload.
    func required() throws -> URL {
        guard let self else { throw BenchmarkError("the workload's setup gave its run no folder") }
        return self
    }
}

/// One run: untimed preparation, the timed work, untimed verification.
func runOnce(_ workload: Workload, _ contender: Contender, prepared: URL?) throws -> Measurement {
    let folder = try workload.prepareRun?(contender, prepared) ?? prepared
    defer { if let folder, folder != prepared { try? FileManager.default.removeItem(at: folder) } }
    let measurement = try measure { try workload.run(contender, folder) }
    try workload.verify?(contender, folder)
    return measurement
}

/// A Markdown row: times, Strata's ratios, and every contender's peak memory; "–" where a
/// contender was skipped or not run.
func tableRow(_ workload: Workload, _ results: [Contender: Measurement]) -> String {
    func seconds(_ contender: Contender) -> String {
        // A fourth decimal for the shortest times, which quick runs and W4, W5 and W9 give.
        results[contender].map { String(format: $0.seconds < 0.01 ? "%.4f" : "%.3f", $0.seconds) } ?? "–"
    }
    func ratio(_ other: Contender) -> String {
        guard let strata = results[.strata]?.seconds, let time = results[other]?.seconds, time > 0 else { return "–" }
        return String(format: "%.2f×", strata / time)
    }
    let peaks = Contender.allCases.map { contender in
        results[contender].map { String(format: "%.0f", $0.peakMegabytes) } ?? "–"
    }
    let cells = [
        "\(workload.name): \(workload.description)", seconds(.strata), seconds(.raw), seconds(.grdbCodable),
        seconds(.grdbFast), ratio(.raw), ratio(.grdbCodable), peaks.joined(separator: " / "),
    ]
    return "| " + cells.joined(separator: " | ") + " |"
}

/// The stores W4–W9 start from, built on first use and removed when the program ends.
let templates = try StoreTemplates()
let w1Count = quick ? 2_000 : 50_000
let w2Count = quick ? 5_000 : 200_000
let w3Count = quick ? 2_000 : 50_000
let itemCount = quick ? 5_000 : 200_000  // W4–W7
let w8Count = quick ? 20_000 : 1_000_000
let w13Count = quick ? 20_000 : 1_000_000
let w17Count = quick ? 20_000 : 1_000_000

let workloads: [Workload] = [
    Workload(
        name: "W1", description: "insert \(w1Count) objects with 10 Int64 attributes, one save",
        setup: { _ in nil },
        prepareRun: { _, _ in try scratchFolder() },
        run: { contender, folder in try insertInts(contender, count: w1Count, in: folder.required()) },
        verify: { _, folder in try verifyInts(in: folder.required(), file: "w1.sqlite", count: w1Count) }),
    Workload(
        name: "W2", description: "fetch \(w2Count) such objects, reading every attribute",
        setup: { contender in try prepareInts(contender, count: w2Count) },
        run: { contender, folder in
            let total = try fetchInts(contender, in: folder.required())
            try expect(total, expectedIntsTotal(count: w2Count), "W2's total")
        }),
    Workload(
        name: "W12", description: "fetch \(w2Count) such objects, reading one attribute (issue 13's W11)",
        setup: { contender in try prepareInts(contender, count: w2Count) },
        run: { contender, folder in
            let total = try fetchIntsReadingOne(contender, in: folder.required())
            try expect(total, expectedIntsFirstAttributeTotal(count: w2Count), "W12's total")
        }),
    Workload(
        name: "W3",
        description:
            "insert \(w3Count) movies (UUID, String, Date, Decimal, to-one director) and their \(directorCount) "
            + "directors, one save",
        setup: { _ in nil },
        prepareRun: { _, _ in try scratchFolder() },
        run: { contender, folder in try insertMovies(contender, count: w3Count, in: folder.required()) },
        verify: { contender, folder in try verifyMovies(contender, count: w3Count, in: folder.required()) }),
    Workload(
        name: "W4",
        description: "fetch the \(itemCount / 100) of \(itemCount) objects where an indexed Int64 equals a value",
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        run: { contender, folder in try fetchBucket(contender, itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W5", description: "sum and average of an Int64 attribute over \(itemCount) objects, in SQL",
        skipped: [.grdbFast],
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        run: { contender, folder in try aggregatePrices(contender, itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W6", description: "fetch \(itemCount) objects, change one attribute of every tenth, save",
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        prepareRun: { _, folder in try copyFolder(folder.required()) },
        run: { contender, folder in
            try updateEveryTenthItem(contender, itemCount: itemCount, in: folder.required())
        },
        verify: { _, folder in try verifyUpdatedItems(itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W7", description: "fetch 10% of \(itemCount) objects by a predicate, delete them, save",
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        prepareRun: { _, folder in try copyFolder(folder.required()) },
        run: { contender, folder in
            try deleteTenPercentOfItems(contender, itemCount: itemCount, in: folder.required())
        },
        verify: { _, folder in try verifyDeletedItems(itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W8", description: "iterate \(w8Count) objects in batches of 1000 (streaming), reading one attribute",
        setup: { contender in try templates.copy(of: .ints(count: w8Count), for: contender) },
        run: { contender, folder in try iterateInts(contender, count: w8Count, in: folder.required()) }),
    Workload(
        name: "W9",
        description:
            "open a store of \(ManyEntities.entityCount) entities (5 attributes each, related in a chain) and fetch "
            + "\(ManyEntities.rowsPerEntity) objects of one",
        skipped: [.grdbFast],
        setup: { contender in try templates.copy(of: .manyEntities, for: contender) },
        run: { contender, folder in try openAndFetch(contender, in: folder.required()) }),
    Workload(
        name: "W13", description: "batch-insert \(w13Count) objects of W1's entity from an object handler (issue 14's W12)",
        skipped: [.grdbCodable, .grdbFast],
        setup: { _ in nil },
        prepareRun: { _, _ in try scratchFolder() },
        run: { contender, folder in
            try batchInsertInts(contender, count: w13Count, dictionaries: false, in: folder.required())
        },
        verify: { _, folder in try verifyInts(in: folder.required(), file: "w13.sqlite", count: w13Count) }),
    Workload(
        name: "W13d", description: "the same from a dictionary handler",
        skipped: [.grdbCodable, .grdbFast],
        setup: { _ in nil },
        prepareRun: { _, _ in try scratchFolder() },
        run: { contender, folder in
            try batchInsertInts(contender, count: w13Count, dictionaries: true, in: folder.required())
        },
        verify: { _, folder in try verifyInts(in: folder.required(), file: "w13.sqlite", count: w13Count) }),
    Workload(
        name: "W14", description: "batch-update 10% of \(itemCount) objects (price + 1) (issue 14's W13)",
        skipped: [.grdbCodable, .grdbFast],
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        prepareRun: { _, folder in try copyFolder(folder.required()) },
        run: { contender, folder in try batchUpdateItems(contender, in: folder.required()) },
        verify: { _, folder in try verifyBatchUpdatedItems(itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W15", description: "batch-delete 10% of \(itemCount) objects (issue 14's W13)",
        skipped: [.grdbCodable, .grdbFast],
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        prepareRun: { _, folder in try copyFolder(folder.required()) },
        run: { contender, folder in try batchDeleteItems(contender, in: folder.required()) },
        verify: { _, folder in try verifyDeletedItems(itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W17",
        description: "lightweight migration of \(w17Count) objects: add a column, rename another (issue 16's W15)",
        skipped: [.grdbCodable, .grdbFast],
        setup: { contender in try templates.copy(of: .items(count: w17Count), for: contender) },
        prepareRun: { _, folder in try copyFolder(folder.required()) },
        run: { contender, folder in try migrateItems(contender, in: folder.required()) },
        verify: { contender, folder in
            try verifyMigratedItems(contender, itemCount: w17Count, in: folder.required())
        }),
    Workload(
        name: "W18",
        description: "read \(itemCount) objects through a fetched results controller with 100 sections (issue 37)",
        setup: { contender in try templates.copy(of: .items(count: itemCount), for: contender) },
        run: { contender, folder in try fetchItemSections(contender, itemCount: itemCount, in: folder.required()) }),
    Workload(
        name: "W19",
        description: "fetch \(w3Count) movies and read each one's director (a to-one fault), no prefetching (issue 37)",
        setup: { contender in try prepareMovies(contender, count: w3Count) },
        run: { contender, folder in
            try fetchMoviesWithDirectors(contender, count: w3Count, prefetching: false, in: folder.required())
        }),
    Workload(
        name: "W20",
        description: "the same with relationshipKeyPathsForPrefetching = [\"director\"] (issue 37)",
        setup: { contender in try prepareMovies(contender, count: w3Count) },
        run: { contender, folder in
            try fetchMoviesWithDirectors(contender, count: w3Count, prefetching: true, in: folder.required())
        }),
]

var rows: [String] = []
do {
    for workload in workloads where onlyWorkloads?.contains(workload.name) ?? true {
        var results: [Contender: Measurement] = [:]
        for contender in Contender.allCases
        where (onlyContenders?.contains(contender) ?? true) && !workload.skipped.contains(contender) {
            let prepared = try workload.setup(contender)
            defer { if let prepared { try? FileManager.default.removeItem(at: prepared) } }
            _ = try runOnce(workload, contender, prepared: prepared)  // warm-up
            var times: [Double] = []
            var peaks: [Double] = []
            for _ in 0..<runs {
                let measurement = try runOnce(workload, contender, prepared: prepared)
                times.append(measurement.seconds)
                peaks.append(measurement.peakMegabytes)
            }
            results[contender] = Measurement(seconds: median(times), peakMegabytes: peaks.max() ?? 0)
            print(
                "\(workload.name) \(contender.rawValue): \(String(format: "%.4f", median(times))) s, "
                    + "peak \(String(format: "%.0f", peaks.max() ?? 0)) MB")
        }
        rows.append(tableRow(workload, results))
    }
} catch {
    templates.removeAll()
    print("error: \(error)")
    exit(1)
}
// Persistent history's overhead compares Strata with itself.
var historyTable = ""
if onlyWorkloads?.contains("H") ?? true, onlyContenders?.contains(.strata) ?? true {
    do {
        historyTable = try runHistoryOverheadWorkload(
            w1Count: w1Count, itemCount: itemCount, runs: runs, templates: templates)
        print(historyTable)
    } catch {
        templates.removeAll()
        print("error: \(error)")
        exit(1)
    }
}
// The repository compares Strata with itself too.
var repositoryTable = ""
if onlyWorkloads?.contains("W16") ?? true, onlyContenders?.contains(.strata) ?? true {
    do {
        repositoryTable = try runRepositoryWorkload(
            createCount: quick ? 1_000 : 10_000, itemCount: itemCount, runs: runs, templates: templates)
        print(repositoryTable)
    } catch {
        templates.removeAll()
        print("error: \(error)")
        exit(1)
    }
}
templates.removeAll()

// W10 measures Strata against itself (an incremental update against a full refetch), so it
// has a table of its own.
var controllerTable = ""
if onlyWorkloads?.contains("W10") ?? true, onlyContenders?.contains(.strata) ?? true {
    do {
        controllerTable = try runControllerWorkload(count: quick ? 5_000 : 100_000, runs: runs)
        print(controllerTable)
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

// W11 measures building a schema, with no store and no other contender.
var schemaTable = ""
if onlyWorkloads?.contains("W11") ?? true, onlyContenders?.contains(.strata) ?? true {
    do {
        // The quick run builds the full size too: it takes about a second, and it is what
        // catches schema building turning quadratic again.
        schemaTable = try runSchemaWorkload(
            runs: runs, limit: quick ? LargeSchema.quickLimitSeconds : LargeSchema.targetSeconds)
        print(schemaTable)
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

let sqliteVersion = String(cString: sqlite3_libversion())
let table = """
    SQLite \(sqliteVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores; release build; \
    median of \(runs) run(s) after a warm-up; ratios are Strata's time over the other's (lower is better). \
    Peak RSS is the process's peak during each contender's runs, in the order Strata / raw SQLite / \
    GRDB Codable / GRDB hand-written; "–" marks a contender the workload does not apply to.

    | workload | Strata (s) | raw SQLite (s) | GRDB Codable (s) | GRDB hand-written (s) | Strata/raw | \
    Strata/GRDB Codable | peak RSS (MB) |
    | --- | --- | --- | --- | --- | --- | --- | --- |
    \(rows.joined(separator: "\n"))
    """ + (controllerTable.isEmpty ? "" : "\n\n" + controllerTable) + (schemaTable.isEmpty ? "" : "\n\n" + schemaTable)
    + (historyTable.isEmpty ? "" : "\n\n" + historyTable)
    + (repositoryTable.isEmpty ? "" : "\n\n" + repositoryTable)
print(table)
if let output {
    try (table + "\n").write(toFile: output, atomically: true, encoding: .utf8)
}
