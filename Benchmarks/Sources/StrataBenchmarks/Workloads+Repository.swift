import BenchmarkSupport
import Foundation
import Strata

// The value-type repository (issue 15), against the same work written directly with a
// context, interleaved run by run (Strata against itself, a table of its own):
//
// - W16c: store 10,000 `Item.Value`s in one save and get the stored values back
//   (`createAtomically` against inserting objects, `update(from:)`, saving and taking `.value`).
// - W16f: fetch 200,000 items as `Item.Value`s (`fetch(_:as:)` against `fetch(_:)` and `.value`).

/// Runs `body` on another task and waits for it (the benchmark's timing is synchronous).
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = LockedResult<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { result.set(.success(try await body())) } catch { result.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try result.get()
}

/// One result handed from a task to the waiting thread.
///
/// `@unchecked Sendable` is safe: the value is only touched under the lock.
final class LockedResult<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { lock.withLock { self.value = value } }
    func get() throws -> T {
        guard let value = lock.withLock({ value }) else { throw BenchmarkError("no result") }
        return try value.get()
    }
}

func itemValues(count: Int) -> [Item.Value] {
    (0..<count).map { row in
        Item.Value(
            bucket: ItemValues.bucket(row), price: ItemValues.price(row), quantity: Int64(row % 7), serial: Int64(row))
    }
}

/// W16c through the repository or directly.
func createItemValues(_ values: [Item.Value], repository: Bool, in folder: URL) throws {
    let container = try openItems(at: folder.appendingPathComponent("w16.sqlite"))
    defer { try? container.close() }
    let stored: [Item.Value]
    if repository {
        let repository = Repository(container)
        stored = try waitFor { try await repository.createAtomically(values) }
    } else {
        stored = try waitFor {
            try await container.performBackgroundTask { context in
                let objects = try values.map { value in
                    let item = Item(context: context)
                    try item.update(from: value)
                    return item
                }
                try context.save()
                return objects.map(\.value)
            }
        }
    }
    try expect(Int64(stored.count), Int64(values.count), "W16c's stored values")
    try expect(Int64(stored.filter { $0.objectID == nil }.count), 0, "W16c's object IDs")
}

/// W16f through the repository or directly.
func fetchItemValues(repository: Bool, itemCount: Int, in folder: URL) throws {
    let container = try openItems(at: storeURL(in: folder))
    defer { try? container.close() }
    let values: [Item.Value]
    if repository {
        let repository = Repository(container)
        values = try waitFor { try await repository.fetch(FetchRequest<Item>(), as: Item.Value.self) }
    } else {
        values = try waitFor {
            try await container.performBackgroundTask { context in try context.fetch(FetchRequest<Item>()).map(\.value) }
        }
    }
    try expect(Int64(values.count), Int64(itemCount), "W16f's values")
}

/// The repository table: W16c and W16f through the repository and directly, interleaved.
func runRepositoryWorkload(createCount: Int, itemCount: Int, runs: Int, templates: StoreTemplates) throws -> String {
    let items = try templates.copy(of: .items(count: itemCount), for: .strata)
    defer { try? FileManager.default.removeItem(at: items) }
    let values = itemValues(count: createCount)
    var times: [String: [Double]] = [:]
    for run in 0...runs {  // the first round warms up
        for repository in [false, true] {
            let folder = try scratchFolder()
            let create = try measure { try createItemValues(values, repository: repository, in: folder) }
            try? FileManager.default.removeItem(at: folder)
            let fetch = try measure { try fetchItemValues(repository: repository, itemCount: itemCount, in: items) }
            guard run > 0 else { continue }
            times["W16c \(repository)", default: []].append(create.seconds)
            times["W16f \(repository)", default: []].append(fetch.seconds)
        }
    }
    func row(_ name: String, _ description: String) -> String {
        let direct = median(times["\(name) false"] ?? [])
        let through = median(times["\(name) true"] ?? [])
        let ratio = direct > 0 ? through / direct : 0
        return "| \(name): \(description) | \(String(format: "%.3f", direct)) | \(String(format: "%.3f", through)) | "
            + "\(String(format: "%.2f×", ratio)) | ≤ 1.5× \(ratio <= 1.5 ? "(met)" : "(missed)") |"
    }
    return """
        The value-type repository's cost: the repository against the same work written directly with a \
        context, median of \(runs) interleaved run(s) after a warm-up.

        | workload | context (s) | repository (s) | repository/context | target |
        | --- | --- | --- | --- | --- |
        \(row("W16c", "store \(createCount) values in one save, get them back"))
        \(row("W16f", "fetch \(itemCount) objects as values"))
        """
}
