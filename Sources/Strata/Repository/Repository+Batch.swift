import Foundation

extension Repository {
    // MARK: Non-atomic batches: every item is tried; each failure names its item

    /// Creates each item on its own: the ones that can be stored are, and each one that
    /// cannot is reported with its error.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (created, failed) = await repository.create(movies, transactionAuthor: "import")
    /// print(created.count, "stored;", failed.map { "\($0.item.title): \($0.error.code)" })
    /// ```
    ///
    /// - Returns: The stored values, in order, and the failures, in order.
    public func create<Model: WritableUnmanagedModel & FetchableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async -> (success: [Model], failed: [BatchError<Model>]) {
        await each(items) { item throws(RepositoryError) in try await create(item, transactionAuthor: transactionAuthor) }
    }

    /// Reads each item's current value; items that cannot be read are reported with their error.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (current, failed) = await repository.read(movies)
    /// for failure in failed { print(failure.item.title, failure.error.code) }   // objectDeleted: gone since
    /// ```
    public func read<Model: ReadableUnmanagedModel>(_ items: some Sequence<Model>) async -> (
        success: [Model], failed: [BatchError<Model>]
    ) {
        await readEach(Array(items)) { item, context in try item.readManaged(from: context) }
    }

    /// Reads the objects with these domain keys; keys that match nothing are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (found, failed) = await repository.read([heatID, roninID], as: Movie.Value.self)
    /// ```
    public func read<Model: IdentifiedUnmanagedModel>(
        _ ids: some Sequence<Model.UnmanagedId>, as _: Model.Type
    ) async -> (success: [Model], failed: [BatchError<Model.UnmanagedId>]) {
        await readEach(Array(ids)) { id, context in try Model.readManaged(id: id, from: context) }
    }

    /// Reads the objects with these IDs; IDs whose objects are gone are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (found, failed) = await repository.read(movieIDs, as: Movie.Value.self)
    /// ```
    public func read<Model: FetchableUnmanagedModel>(
        _ managedIds: some Sequence<ObjectID>, as _: Model.Type
    ) async -> (success: [Model], failed: [BatchError<ObjectID>]) {
        await readEach(Array(managedIds)) { id, context in try Model.managedObject(with: id, in: context) }
    }

    /// Reads the objects whose IDs' URIs these are; URIs that name no object are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (cards, failed) = await repository.read(bookmarkURLs, as: MovieCard.self)
    /// ```
    public func read<Model: FetchableUnmanagedModel>(
        _ managedIdUrls: some Sequence<URL>, as _: Model.Type
    ) async -> (success: [Model], failed: [BatchError<URL>]) {
        await readEach(Array(managedIdUrls)) { url, context in
            try Model.managedObject(with: try context.repositoryObjectID(for: url), in: context)
        }
    }

    /// Updates each item on its own; items that cannot be updated are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let retitled = movies.map { movie in var movie = movie; movie.title = movie.title.capitalized; return movie }
    /// let (updated, failed) = await repository.update(retitled, transactionAuthor: "editor")
    /// ```
    public func update<Model: ReadableUnmanagedModel & WritableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async -> (success: [Model], failed: [BatchError<Model>]) {
        await each(items) { item throws(RepositoryError) in try await update(with: item, transactionAuthor: transactionAuthor) }
    }

    /// Deletes each item's object on its own; items that cannot be deleted are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (deleted, failed) = await repository.delete(movies, transactionAuthor: "cleanup")
    /// ```
    public func delete<Model: ReadableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async -> (success: [Model], failed: [BatchError<Model>]) {
        await each(items) { item throws(RepositoryError) in
            try await delete(item, transactionAuthor: transactionAuthor)
            return item
        }
    }

    /// Deletes the objects with these IDs, each on its own; IDs that cannot be deleted are
    /// reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (deleted, failed) = await repository.delete(movieIDs, transactionAuthor: "cleanup")
    /// ```
    public func delete(_ managedIds: [ObjectID], transactionAuthor: TransactionAuthor? = nil) async -> (
        success: [ObjectID], failed: [BatchError<ObjectID>]
    ) {
        await each(managedIds) { id throws(RepositoryError) in
            try await delete(id, transactionAuthor: transactionAuthor)
            return id
        }
    }

    /// Deletes the objects whose IDs' URIs these are, each on its own; URIs that cannot be
    /// deleted are reported.
    ///
    /// For example:
    ///
    /// ```swift
    /// let (deleted, failed) = await repository.delete(bookmarkURLs)
    /// ```
    public func delete(_ managedIdUrls: [URL], transactionAuthor: TransactionAuthor? = nil) async -> (
        success: [URL], failed: [BatchError<URL>]
    ) {
        await each(managedIdUrls) { url throws(RepositoryError) in
            try await delete(url, transactionAuthor: transactionAuthor)
            return url
        }
    }

    private func each<Item: Sendable, Output>(
        _ items: [Item], _ body: (Item) async throws(RepositoryError) -> Output
    ) async -> (success: [Output], failed: [BatchError<Item>]) {
        var success: [Output] = []
        var failed: [BatchError<Item>] = []
        for item in items {
            do {
                success.append(try await body(item))
            } catch {
                failed.append(BatchError(item: item, error: error))
            }
        }
        return (success, failed)
    }

    /// Reads every item in one context, each failure on its own.
    private func readEach<Item: Sendable, Model: FetchableUnmanagedModel>(
        _ items: [Item], _ find: @escaping @Sendable (Item, ObjectContext) throws -> Model.ManagedModel
    ) async -> (success: [Model], failed: [BatchError<Item>]) {
        do {
            return try await perform(saving: false) { context in
                var success: [Model] = []
                var failed: [BatchError<Item>] = []
                for item in items {
                    do {
                        success.append(try Model(managed: try find(item, context)))
                    } catch {
                        failed.append(BatchError(item: item, error: RepositoryError(error)))
                    }
                }
                return { (success, failed) }
            }
        } catch {
            return ([], items.map { BatchError(item: $0, error: error) })
        }
    }

    // MARK: Atomic batches: one save; any failure stores nothing

    /// Creates every item in one save, or none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let stored = try await repository.createAtomically(movies, transactionAuthor: "import")
    /// ```
    ///
    /// - Throws: The first item's error (the save's, for a unique-constraint clash); nothing
    ///   is stored.
    public func createAtomically<Model: WritableUnmanagedModel & FetchableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> [Model] {
        try await perform(author: transactionAuthor, saving: true) { context in
            let objects = try items.map { try $0.asManagedModel(in: context) }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Reads every item, or throws the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// let current = try await repository.readAtomically(movies)
    /// ```
    public func readAtomically<Model: ReadableUnmanagedModel>(_ items: some Sequence<Model> & Sendable)
        async throws(RepositoryError) -> [Model]
    {
        try await perform(saving: false) { context in
            let objects = try items.map { try $0.readManaged(from: context) }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Reads the objects with these domain keys, or throws the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// let pair = try await repository.readAtomically([heatID, roninID], as: Movie.Value.self)
    /// ```
    public func readAtomically<Model: IdentifiedUnmanagedModel>(
        _ ids: some Sequence<Model.UnmanagedId> & Sendable, as _: Model.Type
    ) async throws(RepositoryError) -> [Model] {
        try await perform(saving: false) { context in
            let objects = try ids.map { try Model.readManaged(id: $0, from: context) }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Reads the objects with these IDs, or throws the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movies = try await repository.readAtomically(movieIDs, as: Movie.Value.self)
    /// ```
    public func readAtomically<Model: FetchableUnmanagedModel>(
        _ managedIds: some Sequence<ObjectID> & Sendable, as _: Model.Type
    ) async throws(RepositoryError) -> [Model] {
        try await perform(saving: false) { context in
            let objects = try managedIds.map { try Model.managedObject(with: $0, in: context) }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Reads the objects whose IDs' URIs these are, or throws the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// let cards = try await repository.readAtomically(bookmarkURLs, as: MovieCard.self)
    /// ```
    public func readAtomically<Model: FetchableUnmanagedModel>(
        _ managedIdUrls: some Sequence<URL> & Sendable, as _: Model.Type
    ) async throws(RepositoryError) -> [Model] {
        try await perform(saving: false) { context in
            let objects = try managedIdUrls.map { try Model.managedObject(with: try context.repositoryObjectID(for: $0), in: context) }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Updates every item in one save, or none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let updated = try await repository.updateAtomically(retitled, transactionAuthor: "editor")
    /// ```
    public func updateAtomically<Model: ReadableUnmanagedModel & WritableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) -> [Model] {
        try await perform(author: transactionAuthor, saving: true) { context in
            let objects = try items.map { item in
                let object = try item.readManaged(from: context)
                try item.updating(managed: object)
                return object
            }
            return { try objects.map(Model.init(managed:)) }
        }
    }

    /// Deletes every item's object in one save, or none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.deleteAtomically(movies, transactionAuthor: "cleanup")
    /// ```
    public func deleteAtomically<Model: ReadableUnmanagedModel>(
        _ items: [Model], transactionAuthor: TransactionAuthor? = nil
    ) async throws(RepositoryError) {
        try await perform(author: transactionAuthor, saving: true) { context in
            let objects = try items.map { try $0.readManaged(from: context) }
            for object in objects { context.delete(object) }
            return {}
        }
    }

    /// Deletes the objects with these IDs in one save, or none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.deleteAtomically(movieIDs, transactionAuthor: "cleanup")
    /// ```
    public func deleteAtomically(_ managedIds: [ObjectID], transactionAuthor: TransactionAuthor? = nil)
        async throws(RepositoryError)
    {
        try await perform(author: transactionAuthor, saving: true) { context in
            let objects = try managedIds.map { try ManagedObjectReader.object(with: $0, in: context) }
            for object in objects { context.delete(object) }
            return {}
        }
    }

    /// Deletes the objects whose IDs' URIs these are in one save, or none of them.
    ///
    /// For example:
    ///
    /// ```swift
    /// try await repository.deleteAtomically(bookmarkURLs)
    /// ```
    public func deleteAtomically(_ managedIdUrls: [URL], transactionAuthor: TransactionAuthor? = nil)
        async throws(RepositoryError)
    {
        try await perform(author: transactionAuthor, saving: true) { context in
            let objects = try managedIdUrls.map {
                try ManagedObjectReader.object(with: try context.repositoryObjectID(for: $0), in: context)
            }
            for object in objects { context.delete(object) }
            return {}
        }
    }

    // MARK: Batch requests

    /// Executes a batch insert in the store, recording `transactionAuthor`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchInsertRequest(entity: Movie.self, objects: [["id": UUID(), "title": "Heat"], ["id": UUID(), "title": "Ronin"]])
    /// let result = try await repository.insert(request, transactionAuthor: "import")
    /// ```
    ///
    /// In a transaction the request records the transaction's author, and — as in Core Data —
    /// writes to the store at once, outside the transaction's context.
    ///
    /// - Throws: ``RepositoryError`` with the code of the request's error; nothing is stored.
    public func insert(_ request: sending BatchInsertRequest, transactionAuthor: TransactionAuthor? = nil)
        async throws(RepositoryError) -> BatchResult
    {
        // The request is not Sendable (closures, `Any` values); the caller gave it up, and the
        // one task that executes it takes it out of the lock box.
        let box = LockedBox<BatchInsertRequest?>(request)
        return try await executeBatch(author: transactionAuthor) { context in
            guard let request = box.withLock({ request in defer { request = nil }; return request }) else {
                throw RepositoryError(.unknown, "The batch insert request was already executed.")
            }
            return try context.execute(request)
        }
    }

    /// Executes a batch update in the store, recording `transactionAuthor`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = BatchUpdateRequest(entity: Movie.self, where: \.year < 1950, propertiesToUpdate: ["rating": .key("rating") + 1])
    /// let result = try await repository.update(request, transactionAuthor: "curator")
    /// print(result.count)   // the movies updated
    /// ```
    public func update(_ request: BatchUpdateRequest, transactionAuthor: TransactionAuthor? = nil)
        async throws(RepositoryError) -> BatchResult
    {
        try await executeBatch(author: transactionAuthor) { context in try context.execute(request) }
    }

    /// Executes a batch delete in the store, recording `transactionAuthor`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let old = BatchDeleteRequest(fetchRequest: FetchRequest<Movie>(predicate: \.year < 1950))
    /// let result = try await repository.delete(old, transactionAuthor: "cleanup")
    /// ```
    public func delete(_ request: BatchDeleteRequest, transactionAuthor: TransactionAuthor? = nil)
        async throws(RepositoryError) -> BatchResult
    {
        try await executeBatch(author: transactionAuthor) { context in try context.execute(request) }
    }

    private func executeBatch(
        author: TransactionAuthor?, _ body: @escaping @Sendable (ObjectContext) throws -> BatchResult
    ) async throws(RepositoryError) -> BatchResult {
        let transaction = currentTransaction
        let author = transaction.map(\.transactionAuthor) ?? author
        let container = container
        do {
            try Task.checkCancellation()
            return try await Self.detached {
                let context = container.newBackgroundContext()
                context.name = "repository"
                context.transactionAuthor = author
                return try body(context)
            }
        } catch {
            throw RepositoryError(error)
        }
    }
}
