import Foundation

/// Told about the batches of changes of a ``FetchedResultsController``, in the order a table
/// view's batch update expects (Core Data's `NSFetchedResultsControllerDelegate`).
///
/// Every method has an empty default implementation.
///
/// ```swift
/// final class MoviesScreen: FetchedResultsControllerDelegate {
///     func controller(_ controller: FetchedResultsController<Movie>, didChangeContentWith change: FetchedResultsChange) {
///         print(change.insertedIndexPaths)
///     }
/// }
/// ```
public protocol FetchedResultsControllerDelegate<Model>: AnyObject {
    /// The type of the controller's objects.
    associatedtype Model: ManagedObject

    /// A batch of changes begins; the controller still shows the old result.
    ///
    /// For example:
    ///
    /// ```swift
    /// func controllerWillChangeContent(_ controller: FetchedResultsController<Movie>) {
    ///     print("before:", controller.fetchedObjects.map(\.title))
    /// }
    /// ```
    func controllerWillChangeContent(_ controller: FetchedResultsController<Model>)

    /// A section was inserted (at its new index) or deleted (at its old index).
    ///
    /// For example:
    ///
    /// ```swift
    /// func controller(
    ///     _ controller: FetchedResultsController<Movie>, didChange section: FetchedResultsChange.SectionChange,
    ///     atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    /// ) { print(type, "section", section.name, "at", sectionIndex) }
    /// ```
    func controller(
        _ controller: FetchedResultsController<Model>, didChange section: FetchedResultsChange.SectionChange,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)

    /// An object was inserted (`newIndexPath`), deleted (`indexPath`), moved (both) or updated
    /// (both; `indexPath` is where it was before the batch).
    ///
    /// For example:
    ///
    /// ```swift
    /// func controller(
    ///     _ controller: FetchedResultsController<Movie>, didChange object: Movie, at indexPath: IndexPath?,
    ///     for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    /// ) { print(type, object.title, indexPath as Any, newIndexPath as Any) }
    /// ```
    func controller(
        _ controller: FetchedResultsController<Model>, didChange object: Model, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?)

    /// The batch ended; the controller shows the new result.
    ///
    /// For example:
    ///
    /// ```swift
    /// func controllerDidChangeContent(_ controller: FetchedResultsController<Movie>) {
    ///     print("after:", controller.fetchedObjects.map(\.title))
    /// }
    /// ```
    func controllerDidChangeContent(_ controller: FetchedResultsController<Model>)

    /// The whole batch, after ``controllerDidChangeContent(_:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// func controller(
    ///     _ controller: FetchedResultsController<Movie>, didChangeContentWith change: FetchedResultsChange
    /// ) { print(change.insertedIndexPaths, change.deletedIndexPaths, change.updatedIndexPaths) }
    /// ```
    func controller(_ controller: FetchedResultsController<Model>, didChangeContentWith change: FetchedResultsChange)
}

extension FetchedResultsControllerDelegate {
    /// Does nothing by default.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class BatchCounter: FetchedResultsControllerDelegate {   // its will-change call does nothing
    ///     var batches = 0
    ///     func controllerDidChangeContent(_ controller: FetchedResultsController<Movie>) { batches += 1 }
    /// }
    /// ```
    public func controllerWillChangeContent(_ controller: FetchedResultsController<Model>) {}

    /// Does nothing by default.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class BatchCounter: FetchedResultsControllerDelegate {   // its section calls do nothing
    ///     var batches = 0
    ///     func controllerDidChangeContent(_ controller: FetchedResultsController<Movie>) { batches += 1 }
    /// }
    /// ```
    public func controller(
        _ controller: FetchedResultsController<Model>, didChange section: FetchedResultsChange.SectionChange,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {}

    /// Does nothing by default.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class BatchCounter: FetchedResultsControllerDelegate {   // its object calls do nothing
    ///     var batches = 0
    ///     func controllerDidChangeContent(_ controller: FetchedResultsController<Movie>) { batches += 1 }
    /// }
    /// ```
    public func controller(
        _ controller: FetchedResultsController<Model>, didChange object: Model, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}

    /// Does nothing by default.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class BatchCounter: FetchedResultsControllerDelegate {   // its did-change call does nothing
    ///     var batches = 0
    ///     func controllerWillChangeContent(_ controller: FetchedResultsController<Movie>) { batches += 1 }
    /// }
    /// ```
    public func controllerDidChangeContent(_ controller: FetchedResultsController<Model>) {}

    /// Does nothing by default.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class BatchCounter: FetchedResultsControllerDelegate {   // its whole-batch call does nothing
    ///     var batches = 0
    ///     func controllerWillChangeContent(_ controller: FetchedResultsController<Movie>) { batches += 1 }
    /// }
    /// ```
    public func controller(
        _ controller: FetchedResultsController<Model>, didChangeContentWith change: FetchedResultsChange
    ) {}
}
