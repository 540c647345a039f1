import BenchmarkSupport
import Foundation
import Strata

// The data of the workloads: the same entities and values as the SQLite benchmarks
// (StrataBenchmarks/Workloads.swift and Workloads+Queries.swift).

/// The entity of W1 and W2: ten Int64 attributes.
@Entity final class Ints: ManagedObject {
    var a: Int64 = 0
    var b: Int64 = 0
    var c: Int64 = 0
    var d: Int64 = 0
    var e: Int64 = 0
    var f: Int64 = 0
    var g: Int64 = 0
    var h: Int64 = 0
    var i: Int64 = 0
    var j: Int64 = 0
}

/// The entity of W4 and W5: an indexed `bucket` (row % 100, so that one bucket holds 1% of the
/// rows) and three more Int64 attributes.
@Entity final class Item: ManagedObject {
    @Attribute(.indexed) var bucket: Int64 = 0
    var price: Int64 = 0
    var quantity: Int64 = 0
    var serial: Int64 = 0
}

/// N1's small object.
@Entity final class Note: ManagedObject {
    var number: Int64 = 0
    var text: String = ""
}

/// Sets the attributes of row `row` on `object`: `row * 10` to `row * 10 + 9`.
func fillInts(_ object: Ints, row: Int) {
    let base = Int64(row &* 10)
    object.a = base
    object.b = base &+ 1
    object.c = base &+ 2
    object.d = base &+ 3
    object.e = base &+ 4
    object.f = base &+ 5
    object.g = base &+ 6
    object.h = base &+ 7
    object.i = base &+ 8
    object.j = base &+ 9
}


/// What W4 read: the objects of one bucket.
struct BucketResult: Equatable {
    var count = 0
    var priceSum: Int64 = 0
    /// The other attributes, so that every one is read.
    var checksum: Int64 = 0

    mutating func add(bucket: Int64, price: Int64, quantity: Int64, serial: Int64) {
        count += 1
        priceSum += price
        checksum &+= bucket &+ quantity &+ serial
    }

    /// Throws unless this is bucket `fetchedBucket` of `itemCount` items.
    func check(itemCount: Int) throws {
        try expect(count, itemCount / 100, "W4's objects")
        try expect(priceSum, ItemValues.priceSum(count: itemCount, bucket: fetchedBucket), "W4's sum of prices")
        var expected = BucketResult()
        for row in stride(from: Int(fetchedBucket), to: itemCount, by: 100) {
            expected.add(
                bucket: ItemValues.bucket(row), price: ItemValues.price(row), quantity: ItemValues.quantity(row),
                serial: ItemValues.serial(row))
        }
        try expect(checksum, expected.checksum, "W4's other attributes")
    }
}

/// Throws unless W5's aggregates are those of `itemCount` items.
func checkAggregates(sum: Int64, average: Double?, itemCount: Int) throws {
    let expectedSum = ItemValues.priceSum(count: itemCount)
    try expect(sum, expectedSum, "W5's sum")
    guard let average, abs(average - Double(expectedSum) / Double(itemCount)) < 1e-6 else {
        throw BenchmarkError("W5's average: got \(String(describing: average))")
    }
}

/// The tables raw postgres-nio and Fluent use: Strata's columns for the same entities (`bigint`,
/// nullable as Strata makes them), a key from a sequence, and the index Strata creates on
/// `bucket`. Strata's own tables also have its `_entity` and `_version` columns.
enum SQLTables {
    static func createInts(in schema: String) -> String {
        "CREATE TABLE \(schema).ints (id bigserial PRIMARY KEY, "
            + intsColumns.map { "\($0) bigint" }.joined(separator: ", ") + ")"
    }

    static func createItems(in schema: String) -> [String] {
        [
            "CREATE TABLE \(schema).item (id bigserial PRIMARY KEY, bucket bigint, price bigint, quantity bigint, serial bigint)",
            "CREATE INDEX item_bucket ON \(schema).item (bucket)",
        ]
    }

    static let intsColumns = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]

    /// Fills `schema.ints` with `count` rows as W1 writes them, in one statement (untimed setup).
    static func fillInts(in schema: String, count: Int) -> String {
        "INSERT INTO \(schema).ints (\(intsColumns.joined(separator: ", "))) SELECT "
            + intsColumns.indices.map { "n * 10 + \($0)" }.joined(separator: ", ")
            + " FROM generate_series(0, \(count - 1)) AS n"
    }

    /// Fills `schema.item` with `count` items with `ItemValues`' values (untimed setup).
    static func fillItems(in schema: String, count: Int) -> String {
        "INSERT INTO \(schema).item (bucket, price, quantity, serial) SELECT n % 100, n % 1000, n % 7, n"
            + " FROM generate_series(0, \(count - 1)) AS n"
    }

    /// The count of rows and the total of every column of an `Ints` table (W1's check).
    static func intsCheck(_ table: String) -> String {
        "SELECT COUNT(*)::bigint, COALESCE(SUM(\(intsColumns.joined(separator: " + "))), 0)::bigint FROM \(table)"
    }
}
