/// The data-stack kit's context helpers: saving only when something changed, and deleting an
/// object that may already be gone.
extension ObjectContext {
    /// Saves the context if it has changes (the data-stack kit's `saveIfNeeded()`).
    ///
    /// With setters that write only changed values (equal writes are not changes in Strata),
    /// this saves nothing — and posts no save notifications — when an update changed nothing.
    ///
    /// ```swift
    /// movie.title = movie.title      // equal: no change
    /// let saved = try context.saveIfNeeded()   // false
    /// ```
    ///
    /// - Returns: Whether the context saved.
    /// - Throws: What ``save()`` throws.
    @discardableResult
    public func saveIfNeeded() throws -> Bool {
        guard hasChanges else { return false }
        try save()
        return true
    }

    /// Deletes `object` from this context if it is still there: an object of this context that
    /// is not deleted yet, or the counterpart here of an object of another context that still
    /// exists. `nil`, an object already deleted here, and an object of another context that no
    /// longer exists do nothing.
    ///
    /// ```swift
    /// context.deleteIfPresent(movie.director)
    /// ```
    ///
    /// - Returns: Whether an object was deleted.
    @discardableResult
    public func deleteIfPresent(_ object: ManagedObject?) -> Bool {
        guard let object else { return false }
        let target: ManagedObject
        if object.context === self {
            target = object
        } else if let counterpart = try? existingObject(with: object.objectID) {
            target = counterpart
        } else {
            return false
        }
        guard !target.isDeleted else { return false }
        delete(target)
        return true
    }
}
