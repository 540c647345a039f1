/// How a save resolves conflicts between a context's objects and the store.
///
/// Two kinds of conflict exist. An *optimistic-locking* conflict: another context saved a change
/// to an object after this context loaded it. A *constraint* conflict: a new (or changed) object
/// has the same values for a uniqueness constraint as an object already in the store, or as
/// another object in the same save.
///
/// ```swift
/// context.mergePolicy = .mergeByPropertyObjectTrump
/// let movie = Movie(context: context)
/// movie.id = existingID          // same unique id as a saved movie
/// movie.title = "Heat (Director's Cut)"
/// try context.save()             // updates the saved movie instead of adding a second one
/// ```
public enum MergePolicy: Sendable, Hashable, CaseIterable {
    /// Conflicts fail the save with a ``StrataError`` (``StrataError/Code/optimisticLockingFailure``
    /// or ``StrataError/Code/constraintConflict``, listing the objects and values). The default.
    case error
    /// The object's changed properties win; its other properties take the store's values. A new
    /// object that duplicates a saved one becomes that object, updated with the new object's
    /// values (an *upsert*).
    case mergeByPropertyObjectTrump
    /// The store's values win for properties changed on both sides; the object's other changes
    /// are kept. A new object that duplicates a saved one becomes that object with its stored
    /// values.
    case mergeByPropertyStoreTrump
    /// The object's whole state overwrites the store's. A new object that duplicates a saved one
    /// replaces its values.
    case overwrite
    /// The object's changes are discarded in favour of the store's state. A new object that
    /// duplicates a saved one becomes that object with its stored values.
    case rollback
}
