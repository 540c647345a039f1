import Foundation

/// One consistent view of a store of another program, read object by object
/// (``CoreDataStoreReader/Snapshot``): how importers above the store layer read it.
package protocol ImportedStoreSnapshot {
    /// The number of objects in the store.
    func objectCount() throws -> Int
    /// Calls `body` with every object, one at a time.
    func forEachObject(includingAttributes: Bool, _ body: (ImportedObject) throws -> Void) throws
    /// Calls `body` with the links of each to-many relationship the objects' to-one references
    /// do not give.
    func forEachLinks(_ body: (ImportedLinks) throws -> Void) throws
    /// The number of links `forEachLinks` gives.
    func linkCount() throws -> Int
}
