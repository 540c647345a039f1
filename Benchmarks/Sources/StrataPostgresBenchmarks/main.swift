import BenchmarkSupport
import Foundation

// Strata's PostgreSQL store against postgres-nio used directly and against Fluent, on one
// server in one run, and the latency of commit notices between two containers (N1). Each
// workload: setup for every contender, one warm-up run each, then `runs` rounds in which every
// contender runs once (interleaved, so that the machine's noise falls on all alike); the table
// gives each contender's median. Writes a Markdown table.
//
//   StrataPostgresBenchmarks [--url URL] [--quick] [--runs N] [--output FILE] [--only W1,N1]
//                            [--contenders strata,raw,raw-unnest,fluent]
//
// The server's URL comes from --url or STRATA_POSTGRES_URL (Benchmarks/run.sh --postgres
// starts a private server and sets it). `--only` and `--contenders` narrow a run, e.g. to
// profile one workload.

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}
let quick = arguments.contains("--quick")
let runs = option("--runs").flatMap { Int($0) } ?? (quick ? 1 : 5)
let output = option("--output")
let onlyWorkloads = option("--only").map { Set($0.split(separator: ",").map(String.init)) }
let onlyContenders = option("--contenders").map {
    Set($0.split(separator: ",").compactMap { ContenderName(rawValue: String($0)) })
}
guard let url = option("--url") ?? ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"] else {
    print("error: no PostgreSQL server: pass --url postgres://USER:PASSWORD@HOST:PORT/DATABASE or set STRATA_POSTGRES_URL")
    print("(Benchmarks/run.sh --postgres starts a private server)")
    exit(2)
}

let w1Count = quick ? 2_000 : 50_000
let w2Count = quick ? 5_000 : 200_000
let itemCount = quick ? 5_000 : 200_000  // W4, W5
let n1Saves = quick ? 50 : 200

/// Strata's targets against the others.
let rawTarget = 1.5

/// One benchmark. Only `run` is timed; the other steps prepare its input or check its output.
struct Workload {
    var name: String
    var description: String
    /// The contenders it applies to; the table shows "–" for the others.
    var contenders: Set<ContenderName> = [.strata, .raw, .fluent]
    /// Builds what every run reads, once per contender.
    var setup: (any Contender) throws -> Void = { _ in }
    /// Before each run.
    var prepareRun: (any Contender) throws -> Void = { _ in }
    /// The measured work. It checks what it read (counts and sums), throwing when wrong.
    var run: (any Contender) throws -> Void
    /// After each run: checks what it wrote.
    var verify: (any Contender) throws -> Void = { _ in }
}

let workloads: [Workload] = [
    Workload(
        name: "W1", description: "insert \(w1Count) objects with 10 Int64 attributes, one save",
        contenders: [.strata, .raw, .rawUnnest, .fluent],
        prepareRun: { try $0.prepareInsert() },
        run: { try $0.insertInts(count: w1Count) },
        verify: { try $0.verifyInsert(count: w1Count) }),
    Workload(
        name: "W2", description: "fetch \(w2Count) such objects, reading every attribute",
        setup: { try $0.prepareInts(count: w2Count) },
        run: { try expect(try $0.fetchInts(), expectedIntsTotal(count: w2Count), "W2's total") }),
    Workload(
        name: "W4",
        description: "fetch the \(itemCount / 100) of \(itemCount) objects where an indexed Int64 equals a value",
        setup: { try $0.prepareItems(count: itemCount) },
        run: { try $0.fetchBucket().check(itemCount: itemCount) }),
    Workload(
        name: "W5", description: "sum and average of an Int64 attribute over \(itemCount) objects, in SQL",
        setup: { try $0.prepareItems(count: itemCount) },
        run: { contender in
            let (sum, average) = try contender.aggregatePrices()
            try checkAggregates(sum: sum, average: average, itemCount: itemCount)
        }),
]

/// One run: untimed preparation, the timed work, untimed verification.
func runOnce(_ workload: Workload, _ contender: any Contender) throws -> Measurement {
    try workload.prepareRun(contender)
    let measurement = try measure { try workload.run(contender) }
    try workload.verify(contender)
    return measurement
}

/// A Markdown row: times, Strata's ratios, whether it meets its targets, every contender's peak
/// memory; "–" where a contender was not run.
func tableRow(_ workload: Workload, _ results: [ContenderName: Measurement]) -> String {
    func seconds(_ contender: ContenderName) -> String {
        results[contender].map { String(format: $0.seconds < 0.01 ? "%.4f" : "%.3f", $0.seconds) } ?? "–"
    }
    func ratio(_ other: ContenderName) -> Double? {
        guard let strata = results[.strata]?.seconds, let time = results[other]?.seconds, time > 0 else { return nil }
        return strata / time
    }
    func format(_ ratio: Double?) -> String { ratio.map { String(format: "%.2f×", $0) } ?? "–" }
    var misses: [String] = []
    if let raw = ratio(.raw), raw > rawTarget { misses.append("> \(rawTarget)× raw") }
    if let fluent = ratio(.fluent), fluent >= 1 { misses.append("not faster than Fluent") }
    let targets = ratio(.raw) == nil && ratio(.fluent) == nil ? "–" : misses.isEmpty ? "met" : "missed: " + misses.joined(separator: ", ")
    let peaks = ContenderName.allCases.map { contender in
        results[contender].map { String(format: "%.0f", $0.peakMegabytes) } ?? "–"
    }
    let cells = [
        "\(workload.name): \(workload.description)", seconds(.strata), seconds(.raw), seconds(.rawUnnest), seconds(.fluent),
        format(ratio(.raw)), format(ratio(.rawUnnest)), format(ratio(.fluent)), targets, peaks.joined(separator: " / "),
    ]
    return "| " + cells.joined(separator: " | ") + " |"
}

var server: BenchmarkServer?
var contenders: [any Contender] = []
@MainActor func finish(_ status: Int32) -> Never {
    for contender in contenders { contender.close() }
    server?.close()
    exit(status)
}

var rows: [String] = []
var latencyLine = ""
var serverVersion = ""
do {
    let benchmarkServer = try BenchmarkServer(url: url)
    server = benchmarkServer
    serverVersion = try benchmarkServer.version()
    try benchmarkServer.dropSchemas()
    for name in ContenderName.allCases where onlyContenders?.contains(name) ?? true {
        switch name {
        case .strata: contenders.append(StrataContender(server: benchmarkServer))
        case .raw: contenders.append(try RawContender(server: benchmarkServer, unnest: false))
        case .rawUnnest: contenders.append(try RawContender(server: benchmarkServer, unnest: true))
        case .fluent: contenders.append(FluentContender(server: benchmarkServer))
        }
    }
    for workload in workloads where onlyWorkloads?.contains(workload.name) ?? true {
        let active = contenders.filter { workload.contenders.contains($0.name) }
        for contender in active { try workload.setup(contender) }
        for contender in active { _ = try runOnce(workload, contender) }  // warm-up
        var times: [ContenderName: [Double]] = [:]
        var peaks: [ContenderName: [Double]] = [:]
        for _ in 0..<runs {
            for contender in active {
                let measurement = try runOnce(workload, contender)
                times[contender.name, default: []].append(measurement.seconds)
                peaks[contender.name, default: []].append(measurement.peakMegabytes)
            }
        }
        var results: [ContenderName: Measurement] = [:]
        for contender in active {
            let result = Measurement(
                seconds: median(times[contender.name] ?? []), peakMegabytes: peaks[contender.name]?.max() ?? 0)
            results[contender.name] = result
            print(
                "\(workload.name) \(contender.name.rawValue): \(String(format: "%.4f", result.seconds)) s, "
                    + "peak \(String(format: "%.0f", result.peakMegabytes)) MB")
        }
        rows.append(tableRow(workload, results))
    }
    if onlyWorkloads?.contains("N1") ?? true, onlyContenders?.contains(.strata) ?? true {
        latencyLine = try runNotificationLatency(server: benchmarkServer, saves: n1Saves).line
        print(latencyLine)
    }
} catch {
    // postgres-nio's errors hide their details from `description`.
    print("error: \(String(reflecting: error))")
    finish(1)
}

let table = """
    PostgreSQL \(serverVersion) on loopback (fsync off), \(ProcessInfo.processInfo.activeProcessorCount) cores; release \
    build; median of \(runs) run(s) after a warm-up, the contenders' runs interleaved; ratios are Strata's time over the \
    other's (lower is better). Targets: Strata at most \(rawTarget)× raw postgres-nio (pipelined prepared statements) and \
    faster than Fluent. Peak RSS is the process's peak during each contender's runs, in the order Strata / raw / raw \
    unnest / Fluent; "–" marks a contender the workload does not apply to.

    | workload | Strata (s) | raw postgres-nio (s) | raw unnest (s) | Fluent (s) | Strata/raw | Strata/raw unnest | \
    Strata/Fluent | targets | peak RSS (MB) |
    | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
    \(rows.joined(separator: "\n"))
    """ + (latencyLine.isEmpty ? "" : "\n\n" + latencyLine)
print(table)
if let output {
    do {
        try (table + "\n").write(toFile: output, atomically: true, encoding: .utf8)
    } catch {
        print("error: cannot write \(output): \(error)")
        finish(1)
    }
}
finish(0)
