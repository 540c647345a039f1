import CSQLite
import BenchmarkSupport
import Foundation
import GRDB
import Strata

// W18 (issue 37): every object of W4–W7's store read through a list with sections, as a table
// view shows it. Strata: a `FetchedResultsController` sorted by bucket and serial, sectioned by
// bucket (100 sections), every section's objects read. Raw SQLite and GRDB: the same rows in the
// same order, grouped into sections by hand (an array of rows per bucket), every value read.

/// One section as the raw and GRDB contenders build it: the bucket and its rows.
private struct Section<Row> {
    var bucket: Int64
    var rows: [Row]
}

/// Groups rows that arrive sorted by bucket into sections.
private func sections<Row>(_ rows: [Row], bucket: (Row) -> Int64) -> [Section<Row>] {
    var result: [Section<Row>] = []
    for row in rows {
        let key = bucket(row)
        if result.last?.bucket == key {
            result[result.count - 1].rows.append(row)
        } else {
            result.append(Section(bucket: key, rows: [row]))
        }
    }
    return result
}

/// An item row as the raw and GRDB contenders read it.
private protocol ItemRow {
    var bucket: Int64 { get }
    var price: Int64 { get }
    var quantity: Int64 { get }
    var serial: Int64 { get }
}

extension RawItem: ItemRow {}
extension ItemRecord: ItemRow {}
extension FastItemRecord: ItemRow {}

/// W18: every item, sorted by bucket and serial, in sections by bucket; every value read.
func fetchItemSections(_ contender: Contender, itemCount: Int, in folder: URL) throws {
    let url = storeURL(in: folder)
    let sql = "SELECT \(itemColumns) FROM item ORDER BY bucket, serial"
    var sectionCount = 0
    var count = 0
    var priceSum: Int64 = 0
    var checksum: Int64 = 0  // the other attributes, so that every one is read
    func read(bucket: Int64, price: Int64, quantity: Int64, serial: Int64) {
        count += 1
        priceSum += price
        checksum &+= bucket &+ quantity &+ serial
    }
    /// Groups sorted rows into sections and reads every section's rows.
    func readSections<Row: ItemRow>(of rows: [Row]) {
        for section in sections(rows, bucket: \.bucket) {
            sectionCount += 1
            for item in section.rows {
                read(bucket: item.bucket, price: item.price, quantity: item.quantity, serial: item.serial)
            }
        }
    }
    switch contender {
    case .strata:
        let container = try openItems(at: url)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Item>(sortDescriptors: [.ascending(\.bucket), .ascending(\.serial)]),
            context: context, sectionNameKeyPath: "bucket")
        try controller.performFetch()
        for section in controller.sections {
            sectionCount += 1
            for item in section.objects {
                read(bucket: item.bucket, price: item.price, quantity: item.quantity, serial: item.serial)
            }
        }
    case .raw:
        let database = try RawDatabase(path: url.path)
        let statement = try database.prepare(sql)
        defer { sqlite3_finalize(statement) }
        var items: [RawItem] = []
        while sqlite3_step(statement) == SQLITE_ROW { items.append(RawItem(statement)) }
        readSections(of: items)
    case .grdbCodable:
        let queue = try DatabaseQueue(path: url.path)
        readSections(of: try queue.read { db in try ItemRecord.order(Column("bucket"), Column("serial")).fetchAll(db) })
    case .grdbFast:
        let queue = try DatabaseQueue(path: url.path)
        readSections(of: try queue.read { db in try FastItemRecord.fetchAll(db, sql: sql) })
    }
    try expect(sectionCount, 100, "W18's sections")
    try expect(count, itemCount, "W18's objects")
    try expect(priceSum, ItemValues.priceSum(count: itemCount), "W18's sum of prices")
    if checksum == 0 { throw BenchmarkError("W18 read no attributes") }
}
