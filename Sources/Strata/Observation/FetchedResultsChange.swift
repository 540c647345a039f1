import Foundation

/// What happened to a section or an object of a ``FetchedResultsController``'s result.
public enum FetchedResultsChangeType: String, Sendable, Hashable, CaseIterable {
    /// It entered the result (for objects: inserted, or changed so that it now matches).
    case insert
    /// It left the result (for objects: deleted, or changed so that it no longer matches).
    case delete
    /// An object changed position (a sort-key or section-key edit).
    case move
    /// An object changed where it was.
    case update
}

/// A section of a ``FetchedResultsController``'s result: the objects that share a section name,
/// in the result's order (Core Data's `NSFetchedResultsSectionInfo`).
public struct FetchedResultsSection<Model: ManagedObject> {
    /// The section's name: the section key's value as text (`""` for `nil`, and for the single
    /// section of a controller without a section key).
    public let name: String
    /// The section's index title (by default the first letter of its name, upper-cased).
    public let indexTitle: String?
    let slice: ArraySlice<Model>

    /// The number of objects in the section.
    public var numberOfObjects: Int { slice.count }

    /// The section's objects, in order.
    public var objects: [Model] { Array(slice) }
}

@available(*, unavailable, message: "A section holds managed objects; they stay in their context's isolation domain.")
extension FetchedResultsSection: Sendable {}

/// One batch of changes to a ``FetchedResultsController``'s result, ready for a table or
/// collection view's batch update and as a `CollectionDifference` of object IDs.
///
/// ``sectionChanges`` lists section deletions (old indexes, descending) and then insertions (new
/// indexes, ascending). ``objectChanges`` lists, in this order, object deletions (old index
/// paths, descending), insertions (new index paths, ascending), moves (old to new) and updates
/// (old index path, with the new one). That is the order `performBatchUpdates` expects:
///
/// ```swift
/// for await change in controller.changes {
///     tableView.performBatchUpdates {
///         tableView.deleteSections(IndexSet(change.deletedSections), with: .fade)
///         tableView.insertSections(IndexSet(change.insertedSections), with: .fade)
///         tableView.deleteRows(at: change.deletedIndexPaths, with: .fade)
///         tableView.insertRows(at: change.insertedIndexPaths, with: .fade)
///         for move in change.movedIndexPaths { tableView.moveRow(at: move.from, to: move.to) }
///         tableView.reloadRows(at: change.updatedIndexPaths, with: .none)
///     }
/// }
/// ```
///
/// Objects of a deleted section are covered by the section deletion, and objects of an
/// inserted section by the section insertion: they are not listed again (a move out of a
/// deleted section is listed as an insertion, a move into an inserted section as a deletion).
public struct FetchedResultsChange: Sendable, Hashable {
    /// A section that appeared or disappeared.
    public struct SectionChange: Sendable, Hashable {
        /// ``FetchedResultsChangeType/insert`` or ``FetchedResultsChangeType/delete``.
        public var type: FetchedResultsChangeType
        /// The section's index: in the old result for a deletion, in the new one for an insertion.
        public var index: Int
        /// The section's name.
        public var name: String
        /// The section's index title.
        public var indexTitle: String?
    }

    /// An object that entered, left, moved within or changed in the result.
    public struct ObjectChange: Sendable, Hashable {
        /// What happened.
        public var type: FetchedResultsChangeType
        /// The object's ID (its permanent ID once saved).
        public var objectID: ObjectID
        /// Where it was, for deletions, moves and updates.
        public var indexPath: IndexPath?
        /// Where it is now, for insertions, moves and updates.
        public var newIndexPath: IndexPath?
    }

    /// Section deletions (descending), then insertions (ascending).
    public var sectionChanges: [SectionChange]
    /// Object deletions (descending), insertions (ascending), moves, then updates.
    public var objectChanges: [ObjectChange]
    /// The same change to the flat list of object IDs (``FetchedResultsController/fetchedObjects``):
    /// removals at old offsets, insertions at new offsets, moves associated. Updates in place
    /// are not part of it.
    public var difference: CollectionDifference<ObjectID>

    /// Indexes of deleted sections, in the old result.
    public var deletedSections: [Int] { sectionChanges.filter { $0.type == .delete }.map(\.index) }
    /// Indexes of inserted sections, in the new result.
    public var insertedSections: [Int] { sectionChanges.filter { $0.type == .insert }.map(\.index) }
    /// Index paths of deleted objects, in the old result.
    public var deletedIndexPaths: [IndexPath] { objectChanges.filter { $0.type == .delete }.compactMap(\.indexPath) }
    /// Index paths of inserted objects, in the new result.
    public var insertedIndexPaths: [IndexPath] { objectChanges.filter { $0.type == .insert }.compactMap(\.newIndexPath) }
    /// Old and new index paths of moved objects.
    public var movedIndexPaths: [(from: IndexPath, to: IndexPath)] {
        objectChanges.filter { $0.type == .move }.compactMap { change in
            guard let from = change.indexPath, let to = change.newIndexPath else { return nil }
            return (from, to)
        }
    }
    /// Index paths (in the old result) of objects that changed in place.
    public var updatedIndexPaths: [IndexPath] { objectChanges.filter { $0.type == .update }.compactMap(\.indexPath) }

    /// Whether nothing changed.
    public var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty }
}

#if !canImport(Darwin)
// UIKit and AppKit give `IndexPath` these on Apple platforms; Linux's Foundation does not.
extension IndexPath {
    /// An index path to an item of a section.
    ///
    /// For example:
    ///
    /// ```swift
    /// let path = IndexPath(item: 2, section: 0)   // [0, 2]
    /// let third = controller.object(at: path)
    /// ```
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// An index path to a row of a section.
    ///
    /// For example:
    ///
    /// ```swift
    /// let path = IndexPath(row: 0, section: 1)   // [1, 0]
    /// print(path.section, path.row)              // 1 0
    /// ```
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section of a two-element index path.
    public var section: Int { self[0] }
    /// The item of a two-element index path.
    public var item: Int { self[1] }
    /// The row of a two-element index path.
    public var row: Int { self[1] }
}
#endif
