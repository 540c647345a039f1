/// The data-stack kit's context helpers: saving only when something changed, and deleting an
/// object that may already be gone.
extension ObjectContext {
    /// Saves the context if it has changes (the data-stack kit's `saveIfNeeded()`).
    ///
    /// With setters that write only changed values (equal writes are not changes in Strata),
    /// this saves nothing — and posts no save notifications — when an update changed nothing.
    ///
    /// For example:
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
    /// For example:
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

/// Typed lookups and inserts: the SwiftUI note's `insertObject()`, the data-stack kit's
/// transaction-author helpers, and typed variants of `existingObject(with:)`.
extension ObjectContext {
    /// The object with `objectID` as `Model`, loaded from its store if need be.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie: Movie = try context.existingObject(with: id)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/objectNotFound`` when no such object exists;
    ///   ``StrataError/Code/typeMismatch``, naming the entity found, when it is not a `Model`.
    public func existingObject<Model: ManagedObject>(with objectID: ObjectID) throws -> Model {
        try existing(Model.self, withID: objectID)
    }

    /// `object` as it is in this context: the object itself, or its counterpart loaded here for
    /// an object of another context; `nil` when it was deleted, was never saved (a new object
    /// of another context), or no longer exists in its store.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let current = try background.existing(movie) { current.rating = 5 }
    /// ```
    ///
    /// - Throws: Errors reading the store; a missing object is `nil`, not an error.
    public func existing<Model: ManagedObject>(_ object: Model) throws -> Model? {
        if object.context === self { return object.isDeleted ? nil : object }
        do {
            return try existing(Model.self, withID: object.objectID)
        } catch let error as StrataError where error.code == .objectNotFound {
            return nil
        }
    }

    /// Inserts a new object of the class the call site asks for (the SwiftUI note's
    /// `insertObject()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let article: Article = try context.insertObject()
    /// article.content = "Hello"
    /// ```
    ///
    /// - Throws: ``StrataError/Code/unknownEntity`` when the context's schema has no entity for
    ///   the class, ``StrataError/Code/abstractEntity`` when it is abstract.
    public func insertObject<Model: ManagedObject>() throws -> Model {
        let object = Model(entity: try Model.insertableEntity(in: self))
        insert(object)
        return object
    }

    /// Sets the author recorded with this context's saves (the data-stack kit's `setAuthor(_:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// context.setAuthor("import")   // as context.transactionAuthor = "import"
    /// try context.save()            // history and StoreCommit.author say "import"
    /// ```
    public func setAuthor(_ author: TransactionAuthor) {
        transactionAuthor = author
    }

    /// The author recorded with this context's saves (the data-stack kit's `author()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let author = context.author()   // nil until set; "viewContext" for a container's view context
    /// ```
    public func author() -> TransactionAuthor? {
        transactionAuthor
    }
}
