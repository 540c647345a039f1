import BenchmarkSupport
import Foundation

/// The contenders, in the table's order.
enum ContenderName: String, CaseIterable {
    case strata, raw, rawUnnest = "raw-unnest", fluent
}

/// One way of doing the workloads against the server. Calls block the calling thread (the
/// main thread: Strata's store calls must not run on Swift's cooperative pool, and the async
/// contenders are waited for with `waitFor`).
///
/// Only the workload methods are timed; `prepare…` and `verify…` are the untimed setup and
/// checks around them.
protocol Contender: AnyObject {
    var name: ContenderName { get }

    /// Builds (once) the `count` `Ints` rows W2 reads.
    func prepareInts(count: Int) throws
    /// Builds (once) the `count` items W4 and W5 read.
    func prepareItems(count: Int) throws
    /// Empties W1's table before a run.
    func prepareInsert() throws
    /// Checks the rows W1 wrote.
    func verifyInsert(count: Int) throws

    /// W1: insert `count` objects with ten Int64 attributes in one transaction.
    func insertInts(count: Int) throws
    /// W2: fetch every `Ints` row, reading every attribute; returns their total.
    func fetchInts() throws -> Int64
    /// W4: fetch the items of bucket `fetchedBucket`, reading every attribute.
    func fetchBucket() throws -> BucketResult
    /// W5: SUM and AVG of the items' `price`, computed by the server.
    func aggregatePrices() throws -> (sum: Int64, average: Double?)

    func close()
}
