import Foundation

/// A provider whose store may be one Core Data wrote (an SQLite file with Core Data's tables):
/// how the object layer finds such a store, reads it, imports it into a new Strata store and
/// converts it in place, without knowing what kind of file it is. ``SQLiteStoreProvider`` is
/// the one that has these requirements.
package protocol CoreDataStoreProvider: PersistentStoreProvider {
    /// Whether the store is one Core Data wrote. Reads without writing; `false` for anything
    /// else, a missing file among them.
    var isCoreDataStore: Bool { get }

    /// The Core Data store's UUID (`Z_METADATA.Z_UUID`); `nil` when the store is no Core Data
    /// store or its metadata holds none.
    var coreDataStoreUUID: String? { get }

    /// Throws unless the Core Data store has the table layout `schema` gives.
    ///
    /// - Throws: ``StrataError/Code/incompatibleSchema`` when it has another layout,
    ///   ``StrataError/Code/notAStore`` when it is no Core Data store.
    func checkCoreDataStore(writtenWith schema: Schema) throws

    /// Imports the Core Data store, written with `schema`, into a new Strata store at
    /// `destination`, in one go: the new store appears complete, or not at all.
    ///
    /// The layout is checked before anything is written. Then `fill` receives one consistent
    /// view of the Core Data store and a description of the new store (a scratch store beside
    /// `destination`, which takes its place when `fill` returns), copies the objects, and
    /// returns how many it copied.
    ///
    /// - Throws: ``StrataError/Code/storeNotWritable`` when there is a file at `destination`
    ///   or the new store cannot be put there; the layout check's errors; what `fill` throws.
    func importCoreDataStore(
        writtenWith schema: Schema, to destination: URL,
        filling fill: (any ImportedStoreSnapshot, StoreDescription) throws -> Int
    ) throws -> Int

    /// A provider of a new, empty store beside this one for a conversion to build the Strata
    /// store in (after removing what conversions killed half-way left); `nil` when the store
    /// has no file to build beside. The caller holds the store to itself.
    func makeConversionTarget() -> (any PersistentStoreProvider)?

    /// Puts the converted store (from ``makeConversionTarget()``) in the Core Data store's
    /// place in one atomic step: a process killed before it finds the Core Data store as it
    /// was, one killed after it the complete converted store. The Core Data store is then
    /// removed, unless `keepingOriginal` (it is kept beside the store).
    ///
    /// - Throws: ``StrataError/Code/storeNotWritable`` when the files cannot be moved,
    ///   ``StrataError/Code/storeInUse`` when another program has the Core Data store open.
    ///   The Core Data store is then as it was.
    func replaceCoreDataStore(withConverted converted: any PersistentStoreProvider, keepingOriginal: Bool) throws

    /// Finishes a conversion whose process was killed after the converted store took the Core
    /// Data store's place: keeps the Core Data store beside it or removes it.
    func finishInterruptedCoreDataConversion(keepingOriginal: Bool)

    /// Removes a conversion target (from ``makeConversionTarget()``) that is still there.
    func removeConversionTarget(_ target: any PersistentStoreProvider)
}
