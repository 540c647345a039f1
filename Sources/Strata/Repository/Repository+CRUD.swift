import Foundation

extension Repository {
    // MARK: Create

    /// Stores a new object made from `item`, and returns the stored value (with its object ID).
    ///
    /// For example:
    ///
    /// ```swift
    /// let heat = try await repository.create(Movie.Value(id: UUID(), title: "Heat"), transactionAuthor: "editor")
    /// heat.objectID   // set
    /// ```
    ///
    /// - Parameters:
    ///   - item: The value to store.
    ///   - transactionAuthor: The author persistent history records (ignored in a transaction).
    /// - Returns: The value read back from the new object.
    /// - Throws: ``RepositoryError``: ``RepositoryError/Code/constraintConflict`` when another
    ///   object has the same unique values; validation and store errors under their own codes.
    ///   Nothing is stored when it throws.
    public func create<Model: WritableUnmanagedModel & FetchableUnmanagedModel>(
        _ item: Model, transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> Model {
        try await perform(author: transactionAuthor, saving: true) { context in
            let object = try item.asManagedModel(in: context)
            return { try Model(managed: object) }
        }
    }

    // MARK: Read

    /// The current value of the object `item` refers to (by its object ID, URI or domain key).
    ///
    /// For example:
    ///
    /// ```swift
    /// let current = try await repository.read(heat)   // heat: a Movie.Value the repository returned
    /// ```
    ///
    /// - Throws: ``RepositoryError``: ``RepositoryError/Code/noObjectID`` or
    ///   ``RepositoryError/Code/noObjectIDURL`` when `item` has nothing to find its object by,
    ///   ``RepositoryError/Code/noMatch`` for a domain key no object has,
    ///   ``RepositoryError/Code/objectDeleted`` when the object is gone.
    public func read<Model: ReadableUnmanagedModel>(_ item: Model) async throws(RepositoryError) -> Model {
        try await perform(saving: false) { context in
            let object = try item.readManaged(from: context)
            return { try Model(managed: object) }
        }
    }

    /// The value of the object whose domain key is `id`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let heat = try await repository.read(heatID, of: Movie.Value.self)
    /// ```
    ///
    /// - Throws: ``RepositoryError/Code/noMatch`` when no object has the key.
    public func read<Model: IdentifiedUnmanagedModel>(_ id: Model.UnmanagedId, of _: Model.Type)
        async throws(RepositoryError) -> Model
    {
        try await perform(saving: false) { context in
            let object = try Model.readManaged(id: id, from: context)
            return { try Model(managed: object) }
        }
    }

    /// The value of the object with `managedId`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let heat = try await repository.read(heatObjectID, of: Movie.Value.self)
    /// ```
    ///
    /// - Throws: ``RepositoryError/Code/objectDeleted`` when the object is gone,
    ///   ``RepositoryError/Code/typeMismatch`` when it is not a `Model.ManagedModel`.
    public func read<Model: FetchableUnmanagedModel>(_ managedId: ObjectID, of _: Model.Type)
        async throws(RepositoryError) -> Model
    {
        try await perform(saving: false) { context in
            let object = try Model.managedObject(with: managedId, in: context)
            return { try Model(managed: object) }
        }
    }

    /// The value of the object whose ID's URI is `managedIdUrl`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let card = try await repository.read(bookmarkURL, of: MovieCard.self)   // a URL kept from objectID.uriRepresentation
    /// ```
    ///
    /// - Throws: ``RepositoryError/Code/unknownObjectIDURL`` when the URI names no object of
    ///   the container's stores; otherwise as ``read(_:of:)-(ObjectID,_)``.
    public func read<Model: FetchableUnmanagedModel>(_ managedIdUrl: URL, of _: Model.Type)
        async throws(RepositoryError) -> Model
    {
        try await perform(saving: false) { context in
            let object = try Model.managedObject(with: try context.repositoryObjectID(for: managedIdUrl), in: context)
            return { try Model(managed: object) }
        }
    }

    // MARK: Update

    /// Writes `item` into the object it refers to, and returns the stored value.
    ///
    /// For example:
    ///
    /// ```swift
    /// heat.title = "Heat (1995)"
    /// heat = try await repository.update(with: heat)
    /// ```
    ///
    /// - Throws: The errors of ``read(_:)->_``, and of saving.
    public func update<Model: ReadableUnmanagedModel & WritableUnmanagedModel>(
        with item: Model, transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> Model {
        try await perform(author: transactionAuthor, saving: true) { context in
            let object = try item.readManaged(from: context)
            try item.updating(managed: object)
            return { try Model(managed: object) }
        }
    }

    /// Writes `item` into the object with `managedId`, and returns the stored value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let card = try await repository.update(heat.objectID!, with: MovieCard(title: "Heat (1995)"), transactionAuthor: "editor")
    /// ```
    public func update<Model: FetchableUnmanagedModel & WritableUnmanagedModel>(
        _ managedId: ObjectID, with item: Model, transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> Model {
        try await perform(author: transactionAuthor, saving: true) { context in
            let object = try Model.managedObject(with: managedId, in: context)
            try item.updating(managed: object)
            return { try Model(managed: object) }
        }
    }

    /// Writes `item` into the object whose ID's URI is `managedIdUrl`, and returns the stored
    /// value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let card = try await repository.update(bookmarkURL, with: MovieCard(title: "Heat (1995)"))
    /// ```
    public func update<Model: FetchableUnmanagedModel & WritableUnmanagedModel>(
        _ managedIdUrl: URL, with item: Model, transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> Model {
        try await perform(author: transactionAuthor, saving: true) { context in
            let object = try Model.managedObject(with: try context.repositoryObjectID(for: managedIdUrl), in: context)
            try item.updating(managed: object)
            return { try Model(managed: object) }
        }
    }

    // MARK: Delete

    /// Deletes the object `item` refers to (its delete rules apply).
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.delete(heat, transactionAuthor: "editor")   // its reviews go too: cascade
    /// ```
    ///
    /// - Throws: The errors of ``read(_:)->_``; ``RepositoryError/Code/objectDeleted`` when it is
    ///   already gone.
    public func delete<Model: ReadableUnmanagedModel>(
        _ item: Model, transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) {
        try await perform(author: transactionAuthor, saving: true) { context in
            context.delete(try item.readManaged(from: context))
            return {}
        }
    }

    /// Deletes the object with `managedId`.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.delete(heat.objectID!, transactionAuthor: "editor")
    /// ```
    public func delete(_ managedId: ObjectID, transactionAuthor: TransactionAuthor? = nil) async throws(RepositoryError) {
        try await perform(author: transactionAuthor, saving: true) { context in
            context.delete(try ManagedObjectReader.object(with: managedId, in: context))
            return {}
        }
    }

    /// Deletes the object whose ID's URI is `managedIdUrl`.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.delete(bookmarkURL)
    /// ```
    public func delete(_ managedIdUrl: URL, transactionAuthor: TransactionAuthor? = nil) async throws(RepositoryError) {
        try await perform(author: transactionAuthor, saving: true) { context in
            context.delete(try ManagedObjectReader.object(with: try context.repositoryObjectID(for: managedIdUrl), in: context))
            return {}
        }
    }
}

/// Finds objects of any type by ID, for calls that name no value type.
enum ManagedObjectReader: FetchableUnmanagedModel {
    typealias ManagedModel = ManagedObject

    init(managed: ManagedObject) throws {
        throw RepositoryError(.unknown, "ManagedObjectReader is never made.")
    }

    static var errorDescription: String { "object" }

    static func object(with objectID: ObjectID, in context: ObjectContext) throws -> ManagedObject {
        try managedObject(with: objectID, in: context)
    }
}
