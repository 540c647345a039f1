import Foundation
import Testing

/// Every Strata sample of the DocC article "Porting from Core Data" (`PortingFromCoreData.md`),
/// compiled and run, so the guide cannot rot. Each file holds one section of the article, one
/// test per sample, named after the sample's heading; the article's code is copied from these
/// tests verbatim between `// sample:` and `// end sample` lines.
enum PortingGuide {
    /// A fresh folder for a sample's store, removed when the sample ends.
    static func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("porting-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }
}

/// A counter samples' `@Sendable` handlers can add to.
///
/// `@unchecked Sendable`: its one value is read and written only under its lock.
final class Counts: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int]

    init(_ count: Int) { values = Array(repeating: 0, count: count) }

    func add(_ amount: Int, at index: Int) { lock.withLock { values[index] += amount } }
    var all: [Int] { lock.withLock { values } }
}
