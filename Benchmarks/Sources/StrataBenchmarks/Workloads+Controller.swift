import BenchmarkSupport
import Foundation
import Strata

// W10: a fetched results controller over a large result, kept current through one-object
// changes. Strata only: the question is what an incremental update costs next to the full
// refetch a controller without incremental updates would run after every save. Three ways a
// change reaches the controller are measured, each as the median of the runs:
//
// - full refetch: `performFetch()` again over the whole result (objects already registered,
//   so this is the cheapest refetch there is);
// - controller update: the controller's own work for one inserted object, from
//   `controllerWillChangeContent` to `controllerDidChangeContent`;
// - insert + save: a user's whole step — insert one object in the controller's context and
//   save it — with the controller's update included;
// - merge: another context saves one insert; the controller's context merges it and the
//   controller updates (`processPendingChanges()`), the path of a view context.

/// Times the controller's update from the delegate's will to its did.
final class UpdateTimer: FetchedResultsControllerDelegate {
    private var start: ContinuousClock.Instant?
    private(set) var durations: [Double] = []
    private(set) var insertedCount = 0

    func controllerWillChangeContent(_ controller: FetchedResultsController<Ints>) { start = .now }

    func controller(
        _ controller: FetchedResultsController<Ints>, didChange object: Ints, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        if type == .insert { insertedCount += 1 }
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<Ints>) {
        guard let start else { return }
        durations.append(seconds(ContinuousClock.now - start))
        self.start = nil
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Runs W10 over a store of `count` `Ints` objects and returns its Markdown table.
func runControllerWorkload(count: Int, runs: Int) throws -> String {
    let folder = try scratchFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = storeURL(in: folder)
    try buildIntsStore(strata: true, count: count, at: url)
    let container = try PersistentContainer(name: "W10", entities: [Ints.self], storeDescriptions: [.sqlite(url)])
    defer { try? container.close() }
    let context = container.newBackgroundContext()
    context.automaticallyMergesChangesFromContainer = true
    let controller = FetchedResultsController(FetchRequest<Ints>(sortDescriptors: [.ascending(\.a)]), context: context)
    let timer = UpdateTimer()
    controller.delegate = timer
    try controller.performFetch()

    var refetches: [Double] = []
    var saves: [Double] = []
    var merges: [Double] = []
    var next = Int64(5)  // between existing values (multiples of 10), spread over the result
    func insertOne(in context: ObjectContext) {
        let object = Ints(context: context)
        object.a = next
        next = (next &* 7_919 &+ 10) % Int64(count * 10)
        next += next % 10 == 0 ? 5 : 0
    }
    for run in 0...runs {  // the first round is the warm-up
        let refetch = try measure { try controller.performFetch() }
        let save = try measure {
            insertOne(in: context)
            try context.save()
        }
        let other = container.newBackgroundContext()
        insertOne(in: other)
        try other.save()
        let merge = measure { context.processPendingChanges() }
        if run > 0 {
            refetches.append(refetch.seconds)
            saves.append(save.seconds)
            merges.append(merge.seconds)
        }
    }
    guard timer.insertedCount == 2 * (runs + 1), controller.fetchedObjects.count == count + 2 * (runs + 1) else {
        throw BenchmarkError(
            "W10's controller saw \(timer.insertedCount) insertions and holds \(controller.fetchedObjects.count) objects")
    }
    let updates = Array(timer.durations.dropFirst(2))  // the warm-up round's two updates
    let refetch = median(refetches)
    func row(_ name: String, _ time: Double) -> String {
        "| \(name) | \(String(format: time < 0.01 ? "%.5f" : "%.3f", time)) | \(String(format: "%.2f%%", 100 * time / refetch)) |"
    }
    return """
        W10: a fetched results controller over \(count) objects (sorted by an Int64), one object inserted at a \
        time; median of \(runs) run(s) after a warm-up. Target: an update costs at most 5% of a full refetch.

        | W10 step | Strata (s) | of a full refetch |
        | --- | --- | --- |
        \(row("full refetch (performFetch over the whole result)", refetch))
        \(row("controller update for one inserted object (delegate will → did)", median(updates)))
        \(row("insert one object and save it, controller update included", median(saves)))
        \(row("merge another context's one-object save and update", median(merges)))
        """
}
