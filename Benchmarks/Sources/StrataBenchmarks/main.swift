import CSQLite
import Foundation

// Runs each workload for every contender: one warm-up, then the median of `runs` timed runs,
// each measured with the process's peak resident memory reset first. Writes a Markdown table.
//
//   StrataBenchmarks [--quick] [--runs N] [--output RESULTS.md]

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let runs = arguments.firstIndex(of: "--runs").flatMap { Int(arguments[$0 + 1]) } ?? (quick ? 1 : 5)
let output = arguments.firstIndex(of: "--output").map { arguments[$0 + 1] }

struct Measurement {
    var seconds: Double
    var peakMegabytes: Double
}

/// Resets the kernel's peak-RSS counter for this process (Linux), so each run reports its own peak.
func resetPeakMemory() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// The peak resident memory since the last reset, in MB (VmHWM), or 0 where unknown.
func peakMemory() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes / 1024
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

struct Workload {
    var name: String
    var description: String
    /// Measures one run for a contender; `prepared` is a folder the setup filled (or nil).
    var setup: (Contender) throws -> URL?
    var run: (Contender, URL?) throws -> Void
}

let w1Count = quick ? 2_000 : 50_000
let w2Count = quick ? 5_000 : 200_000

let workloads: [Workload] = [
    Workload(
        name: "W1", description: "insert \(w1Count) objects with 10 Int64 attributes, one save",
        setup: { _ in nil },
        run: { contender, _ in
            let folder = try scratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            try insertInts(contender, count: w1Count, in: folder)
        }),
    Workload(
        name: "W2", description: "fetch \(w2Count) such objects, reading every attribute",
        setup: { contender in
            let folder = try scratchFolder()
            try prepareInts(contender, count: w2Count, in: folder)
            return folder
        },
        run: { contender, folder in
            guard let folder else { return }
            let total = try fetchInts(contender, in: folder)
            if total == 0 { throw BenchmarkError("W2 read nothing") }
        }),
]

var rows: [String] = []
for workload in workloads {
    var results: [Contender: Measurement] = [:]
    for contender in Contender.allCases {
        let prepared = try workload.setup(contender)
        defer { if let prepared { try? FileManager.default.removeItem(at: prepared) } }
        _ = try measure { try workload.run(contender, prepared) }  // warm-up
        var times: [Double] = []
        var peaks: [Double] = []
        for _ in 0..<runs {
            let measurement = try measure { try workload.run(contender, prepared) }
            times.append(measurement.seconds)
            peaks.append(measurement.peakMegabytes)
        }
        results[contender] = Measurement(seconds: median(times), peakMegabytes: peaks.max() ?? 0)
        print("\(workload.name) \(contender.rawValue): \(String(format: "%.4f", median(times))) s, peak \(String(format: "%.0f", peaks.max() ?? 0)) MB")
    }
    func seconds(_ contender: Contender) -> Double { results[contender]?.seconds ?? 0 }
    func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.2f×", a / b) : "–" }
    let strata = seconds(.strata)
    rows.append(
        "| \(workload.name): \(workload.description) | \(String(format: "%.3f", strata)) | \(String(format: "%.3f", seconds(.raw))) | "
            + "\(String(format: "%.3f", seconds(.grdbCodable))) | \(String(format: "%.3f", seconds(.grdbFast))) | "
            + "\(ratio(strata, seconds(.raw))) | \(ratio(strata, seconds(.grdbCodable))) | "
            + "\(String(format: "%.0f", results[.strata]?.peakMegabytes ?? 0)) |")
}

let sqliteVersion = String(cString: sqlite3_libversion())
let table = """
    SQLite \(sqliteVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores; release build; \
    median of \(runs) run(s) after a warm-up; ratios are Strata's time over the other's (lower is better). \
    Peak RSS is the process's peak during Strata's runs.

    | workload | Strata (s) | raw SQLite (s) | GRDB Codable (s) | GRDB hand-written (s) | Strata/raw | Strata/GRDB Codable | Strata peak RSS (MB) |
    | --- | --- | --- | --- | --- | --- | --- | --- |
    \(rows.joined(separator: "\n"))
    """
print(table)
if let output {
    try (table + "\n").write(toFile: output, atomically: true, encoding: .utf8)
}
