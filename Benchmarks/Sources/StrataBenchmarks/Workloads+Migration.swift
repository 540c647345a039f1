import CSQLite
import BenchmarkSupport
import Foundation
import Strata

// W17 (issue 16's "W15"): a lightweight migration of the items store that adds a column and
// renames another, against the same `ALTER TABLE` statements run by hand in raw SQLite. Both
// open the store, change it in one transaction and close it.

/// The items model before and after W17's migration.
enum ItemVersions: String, ModelVersion {
    case v1, v2

    var modelVersion: Schema {
        get throws {
            guard var item = Item.entityDescription else { throw BenchmarkError("Item has no entity description") }
            if self == .v2 {
                item.attributes = item.attributes.map { attribute in
                    guard attribute.name == "quantity" else { return attribute }
                    var renamed = attribute
                    renamed.name = "amount"
                    renamed.renamingIdentifier = "quantity"
                    return renamed
                }
                item.attributes.append(AttributeDescription(name: "note", type: .string, isOptional: true))
            }
            return try Schema([item])
        }
    }
}

/// W17: migrates the items store in `folder`.
func migrateItems(_ contender: Contender, in folder: URL) throws {
    let url = storeURL(in: folder)
    switch contender {
    case .strata:
        try ItemVersions.migrationManager().migrateStore(at: url)
    case .raw:
        let database = try RawDatabase(path: url.path)
        try database.execute("BEGIN")
        try database.execute("ALTER TABLE item ADD COLUMN note TEXT")
        try database.execute("ALTER TABLE item RENAME COLUMN quantity TO amount")
        try database.execute("COMMIT")
    case .grdbCodable, .grdbFast:
        throw BenchmarkError("W17 has no GRDB contender")
    }
}

/// Checks W17: every row is still there, under the new column names.
func verifyMigratedItems(_ contender: Contender, itemCount: Int, in folder: URL) throws {
    let table = contender == .strata ? "Item" : "item"
    let result = try queryIntegers(storeURL(in: folder), "SELECT COUNT(*), COUNT(note), SUM(amount) FROM \(table)")
    try expect(result[0], Int64(itemCount), "W17's rows")
    try expect(result[1], 0, "W17's new column")
}
