import Foundation

extension Repository {
    // MARK: Fetch

    /// The objects `request` matches, as values.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(predicate: \.boxOffice > 100, sortDescriptors: [.ascending(\.title)])
    /// let movies = try await repository.fetch(request, as: Movie.Value.self)
    /// ```
    ///
    /// - Throws: ``RepositoryError`` with the code of the fetch's error (an unknown key, say).
    @inlinable  // the mapping to values is specialized for the caller's type
    public func fetch<Model: FetchableUnmanagedModel>(_ request: FetchRequest<Model.ManagedModel>, as _: Model.Type)
        async throws(RepositoryError) -> [Model]
    {
        try await perform(saving: false) { context in
            let values = try context.fetch(request).map(Model.init(managed:))
            return { values }
        }
    }

    /// Runs `operation` on the objects `request` matches, inside the repository's context, and
    /// returns what it makes of them — any `Sendable` value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let titles = try await repository.fetch(request: FetchRequest<Movie>()) { movies in
    ///     movies.map(\.title).sorted()
    /// }
    /// ```
    public func fetch<Managed: ManagedObject, Output: Sendable>(
        request: FetchRequest<Managed>, operation: @escaping @Sendable (_ results: [Managed]) throws -> Output
    ) async throws(RepositoryError) -> Output {
        try await perform(saving: false) { context in
            let output = try operation(try context.fetch(request))
            return { output }
        }
    }

    // MARK: Fetch subscriptions

    /// The values `request` matches now, then again after every save that changes them, as
    /// `Result`s: a failed fetch is yielded, and the subscription goes on.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await result in repository.fetchSubscription(request, of: Movie.Value.self) {
    ///     switch result {
    ///     case .success(let movies): render(movies)
    ///     case .failure(let error): show(error)
    ///     }
    /// }
    /// ```
    ///
    /// Saves re-run the request when they change objects of its entity (every save, when its
    /// predicate or sort reaches related objects; use ``fetchSubscription(request:changeTrackingRequest:of:)``
    /// to name the entity whose changes count). A result equal to the previous one is not
    /// yielded again when `Model` is `Equatable`. The stream ends — and its observation with it —
    /// when the consumer stops iterating.
    public func fetchSubscription<Model: FetchableUnmanagedModel>(
        _ request: FetchRequest<Model.ManagedModel>, of _: Model.Type
    ) -> AsyncStream<Result<[Model], RepositoryError>> {
        fetchSubscription(request, tracking: container.relevantEntities(for: request)).resultStream()
    }

    /// Like ``fetchSubscription(_:of:)``, but re-runs `request` after the saves that change
    /// objects of `changeTrackingRequest`'s entity: for predicates that cannot be tracked
    /// otherwise (a list of movies showing their review counts, re-run when reviews change).
    ///
    /// For example:
    ///
    /// ```swift
    /// // Movies with more than three reviews, fetched again whenever a review changes:
    /// let request = try FetchRequest<Movie>(format: "reviews.@count > 3")
    /// for await result in repository.fetchSubscription(
    ///     request: request, changeTrackingRequest: FetchRequest<Review>(), of: Movie.Value.self)
    /// {
    ///     print(try result.get().map(\.title))
    /// }
    /// ```
    public func fetchSubscription<Model: FetchableUnmanagedModel, Tracked: ManagedObject>(
        request: FetchRequest<Model.ManagedModel>, changeTrackingRequest: FetchRequest<Tracked>, of _: Model.Type
    ) -> AsyncStream<Result<[Model], RepositoryError>> {
        fetchSubscription(request, tracking: trackedEntities(changeTrackingRequest)).resultStream()
    }

    /// Like ``fetchSubscription(_:of:)``, as a throwing stream that ends with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movies in repository.fetchThrowingSubscription(request, of: Movie.Value.self) {
    ///     render(movies)
    /// }
    /// ```
    public func fetchThrowingSubscription<Model: FetchableUnmanagedModel>(
        _ request: FetchRequest<Model.ManagedModel>, of _: Model.Type
    ) -> AsyncThrowingStream<[Model], any Error> {
        fetchSubscription(request, tracking: container.relevantEntities(for: request)).throwingStream()
    }

    /// Like ``fetchSubscription(request:changeTrackingRequest:of:)``, as a throwing stream.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = try FetchRequest<Movie>(format: "ANY reviews.stars == 5")
    /// for try await movies in repository.fetchThrowingSubscription(
    ///     request: request, changeTrackingRequest: FetchRequest<Review>(), of: Movie.Value.self)
    /// {
    ///     print(movies.map(\.title))
    /// }
    /// ```
    public func fetchThrowingSubscription<Model: FetchableUnmanagedModel, Tracked: ManagedObject>(
        request: FetchRequest<Model.ManagedModel>, changeTrackingRequest: FetchRequest<Tracked>, of _: Model.Type
    ) -> AsyncThrowingStream<[Model], any Error> {
        fetchSubscription(request, tracking: trackedEntities(changeTrackingRequest)).throwingStream()
    }

    private func fetchSubscription<Model: FetchableUnmanagedModel>(
        _ request: FetchRequest<Model.ManagedModel>, tracking: Set<String>?
    ) -> RepositorySubscription<[Model]> {
        let observed = ObservedRequest(request, in: container.schema)
        return RepositorySubscription(container: container, relevantEntities: tracking, failureEnds: false) { context in
            try observed.fetch(Model.ManagedModel.self, in: context).map(Model.init(managed:))
        }
    }

    /// The entities whose changes a change-tracking request names.
    func trackedEntities(_ request: any ChangeTrackingRequest) -> Set<String>? {
        guard let entity = container.schema.entity(named: request.entityName) else { return nil }
        return request.includesSubentities ? entity.kindNames : [entity.name]
    }

    // MARK: Read subscriptions

    /// The current value of `item`'s object, then its value after each save that changes it.
    /// A lookup that fails (the object is deleted, say) yields one failure and ends the
    /// stream.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await result in repository.readSubscription(heat) {
    ///     if case .success(let movie) = result { print(movie.title) }
    /// }
    /// ```
    public func readSubscription<Model: ReadableUnmanagedModel>(_ item: Model) -> AsyncStream<Result<Model, RepositoryError>> {
        readSubscription(of: Model.self) { context in try item.readManaged(from: context) }.resultStream()
    }

    /// The value of the object whose domain key is `id`, now and after each change.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await result in repository.readSubscription(heatID, of: Movie.Value.self) {
    ///     if case .success(let movie) = result { print(movie.title) }
    /// }
    /// ```
    public func readSubscription<Model: IdentifiedUnmanagedModel>(_ id: Model.UnmanagedId, of _: Model.Type)
        -> AsyncStream<Result<Model, RepositoryError>>
    {
        readSubscription(of: Model.self) { context in try Model.readManaged(id: id, from: context) }.resultStream()
    }

    /// The value of the object with `managedId`, now and after each change.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await result in repository.readSubscription(heat.objectID!, of: Movie.Value.self) {
    ///     if case .success(let movie) = result { print(movie.rating) }
    /// }
    /// ```
    public func readSubscription<Model: FetchableUnmanagedModel>(_ managedId: ObjectID, of _: Model.Type)
        -> AsyncStream<Result<Model, RepositoryError>>
    {
        readSubscription(of: Model.self) { context in try Model.managedObject(with: managedId, in: context) }
            .resultStream()
    }

    /// The value of the object whose ID's URI is `managedIdUrl`, now and after each change.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await result in repository.readSubscription(bookmarkURL, of: MovieCard.self) {
    ///     if case .success(let card) = result { print(card.title) }
    /// }
    /// ```
    public func readSubscription<Model: FetchableUnmanagedModel>(_ managedIdUrl: URL, of _: Model.Type)
        -> AsyncStream<Result<Model, RepositoryError>>
    {
        readSubscription(of: Model.self) { context in
            try Model.managedObject(with: try context.repositoryObjectID(for: managedIdUrl), in: context)
        }.resultStream()
    }

    /// Like ``readSubscription(_:)-(Model)``, as a throwing stream that ends with the first failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movie in repository.readThrowingSubscription(heat) {   // throws once heat is deleted
    ///     print(movie.title)
    /// }
    /// ```
    public func readThrowingSubscription<Model: ReadableUnmanagedModel>(_ item: Model) -> AsyncThrowingStream<Model, any Error> {
        readSubscription(of: Model.self) { context in try item.readManaged(from: context) }.throwingStream()
    }

    /// Like ``readSubscription(_:of:)-(Model.UnmanagedId,_)``, as a throwing stream.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movie in repository.readThrowingSubscription(heatID, of: Movie.Value.self) {
    ///     print(movie.title)
    /// }
    /// ```
    public func readThrowingSubscription<Model: IdentifiedUnmanagedModel>(_ id: Model.UnmanagedId, of _: Model.Type)
        -> AsyncThrowingStream<Model, any Error>
    {
        readSubscription(of: Model.self) { context in try Model.readManaged(id: id, from: context) }.throwingStream()
    }

    /// Like ``readSubscription(_:of:)-(ObjectID,_)``, as a throwing stream.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await movie in repository.readThrowingSubscription(heat.objectID!, of: Movie.Value.self) {
    ///     print(movie.rating)
    /// }
    /// ```
    public func readThrowingSubscription<Model: FetchableUnmanagedModel>(_ managedId: ObjectID, of _: Model.Type)
        -> AsyncThrowingStream<Model, any Error>
    {
        readSubscription(of: Model.self) { context in try Model.managedObject(with: managedId, in: context) }
            .throwingStream()
    }

    /// Like ``readSubscription(_:of:)-(URL,_)``, as a throwing stream.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await card in repository.readThrowingSubscription(bookmarkURL, of: MovieCard.self) {
    ///     print(card.title)
    /// }
    /// ```
    public func readThrowingSubscription<Model: FetchableUnmanagedModel>(_ managedIdUrl: URL, of _: Model.Type)
        -> AsyncThrowingStream<Model, any Error>
    {
        readSubscription(of: Model.self) { context in
            try Model.managedObject(with: try context.repositoryObjectID(for: managedIdUrl), in: context)
        }.throwingStream()
    }

    private func readSubscription<Model: FetchableUnmanagedModel>(
        of _: Model.Type, _ find: @escaping @Sendable (ObjectContext) throws -> Model.ManagedModel
    ) -> RepositorySubscription<Model> {
        let entity = container.schema.entity(named: Model.ManagedModel.entity.name)
        return RepositorySubscription(
            container: container, relevantEntities: entity.map(\.kindNames),
            failureEnds: true
        ) { context in try Model(managed: try find(context)) }
    }
}
