import Foundation
import Hummingbird
import Logging
import Strata

/// The movie routes: a JSON API over a Strata container, and a live query as server-sent events.
///
/// | route | what |
/// | --- | --- |
/// | `GET /movies` | the movies a ``MovieQuery`` selects |
/// | `GET /movies/count` | how many movies match `where` |
/// | `GET /movies/live` | the same results as `GET /movies`, now and after every change, as server-sent events |
/// | `GET /movies/:id` | one movie |
/// | `POST /movies` | adds a movie (``MovieInput``); `201 Created` |
/// | `PATCH /movies/:id` | changes some fields (``MoviePatch``) |
/// | `DELETE /movies/:id` | removes a movie; `204 No Content` |
///
/// Reads and live queries go through the value-type `Repository`; writes through
/// `performBackgroundTask` with a merge policy (see ``write(_:)``). Both run the synchronous
/// store work on threads that may block: an event-loop thread never waits for the disk or the
/// database server.
public struct MovieController<Context: RequestContext>: Sendable {
    /// The repository the handlers read through (and whose container they write to).
    public let repository: Repository
    /// The author persistent history records for the server's writes.
    public let transactionAuthor: TransactionAuthor

    /// Creates the routes' handlers.
    public init(repository: Repository, transactionAuthor: TransactionAuthor = "movie-server") {
        self.repository = repository
        self.transactionAuthor = transactionAuthor
    }

    /// Adds the routes to `group` (the `/movies` group).
    public func addRoutes(to group: RouterGroup<Context>) {
        group.get(use: list)
        group.get("count", use: count)
        group.get("live", use: live)
        group.get(":id", use: show)
        group.post(use: create)
        group.patch(":id", use: update)
        group.delete(":id", use: delete)
    }

    // MARK: Handlers

    @Sendable func list(_ request: Request, context: Context) async throws -> [MovieResource] {
        let query = try MovieQuery(request: request)
        return try await call(context) { [repository] in
            try await repository.fetch(query.fetchRequest, as: MovieResource.self)
        }
    }

    @Sendable func count(_ request: Request, context: Context) async throws -> [String: Int] {
        let query = try MovieQuery(request: request)
        let count = try await call(context) { [repository] in
            try await repository.count(of: Movie.self, where: query.predicate)
        }
        return ["count": count]
    }

    @Sendable func show(_ request: Request, context: Context) async throws -> MovieResource {
        let id = try Self.movieID(context)
        return try await call(context) { [repository] in
            try await repository.read(id, of: MovieResource.self)
        }
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<MovieResource> {
        let input = try await Self.decode(MovieInput.self, from: request, context: context)
        let movie = try await call(context) {
            try await write(linkingDirector: input.director) { context in
                MovieResource(managed: try input.makeResource().asManagedModel(in: context))
            }
        }
        return EditedResponse(status: .created, headers: [.location: "/movies/\(movie.id.uuidString)"], response: movie)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> MovieResource {
        let id = try Self.movieID(context)
        let patch = try await Self.decode(MoviePatch.self, from: request, context: context)
        return try await call(context) {
            try await write(linkingDirector: patch.director ?? nil) { context in
                let movie = try MovieResource.readManaged(id: id, from: context)
                try patch.applied(to: MovieResource(managed: movie)).updating(managed: movie)
                return MovieResource(managed: movie)
            }
        }
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try Self.movieID(context)
        try await call(context) {
            try await write(linkingDirector: nil) { context in
                context.delete(try MovieResource.readManaged(id: id, from: context))
            }
        }
        return .noContent
    }

    /// `GET /movies/live`: the query's results now, then again after every change, each as one
    /// server-sent event whose `data:` is the JSON array `GET /movies` returns.
    ///
    /// The request runs once before the stream starts, so a bad predicate or key is a `400`
    /// like everywhere else. The stream ends when the client disconnects or the server shuts
    /// down; a fetch that fails later is sent as an `error` event and the stream goes on.
    @Sendable func live(_ request: Request, context: Context) async throws -> Response {
        let query = try MovieQuery(request: request)
        let fetchRequest = query.fetchRequest
        _ = try await call(context) { [repository] in
            try await repository.fetch(fetchRequest, as: MovieResource.self)
        }
        let updates = repository.fetchSubscription(fetchRequest, of: MovieResource.self)
        let logger = context.logger
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                logger.debug("Live query started")
                do {
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        try await ServerSentEvents.stream(updates, to: &writer, logger: logger)
                    }
                } catch is CancellationError {
                    // The client went away: its connection is closed, there is nothing to finish.
                    logger.debug("Live query ended: the client disconnected")
                    return
                }
                // The server is shutting down (or the store closed): end the response properly.
                logger.debug("Live query ended")
                try await writer.finish(nil)
            })
    }

    // MARK: Helpers

    /// The `:id` parameter as a UUID; an id that is not one names no movie.
    static func movieID(_ context: Context) throws(APIError) -> UUID {
        let text = context.parameters.get("id") ?? ""
        guard let id = UUID(uuidString: text) else { throw APIError.movieNotFound(text) }
        return id
    }

    /// Decodes a JSON body; a malformed one is a `400` with the decoder's explanation.
    static func decode<Body: Decodable>(_ type: Body.Type, from request: Request, context: Context) async throws -> Body
    {
        do {
            return try await request.decode(as: type, context: context)
        } catch let error as HTTPError where error.status == .badRequest {
            throw APIError(.badRequest, code: "invalidBody", message: error.body ?? "The body is not valid JSON.")
        } catch let error as HTTPError {
            throw APIError(error.status, code: "invalidBody", message: error.body ?? error.status.reasonPhrase)
        }
    }

    /// Runs a store call, turning its error into a response (and logging server errors).
    func call<T: Sendable>(
        _ context: Context, _ body: () async throws -> T
    ) async throws(APIError) -> T {
        do {
            return try await body()
        } catch {
            let response = APIError(RepositoryError(error))
            if response.status == .internalServerError {
                context.logger.error("Repository call failed", metadata: ["error": "\(error)"])
            }
            throw response
        }
    }

    /// Runs `body` in a new context on a thread that may block, then saves what it changed.
    ///
    /// Writes do not go through the repository, whose saves treat every conflict as an error:
    /// adding or removing a movie changes its director's `movies` too, so two requests that
    /// link movies to the same director at once conflict on the director. Saved with
    /// `MergePolicy.mergeByPropertyObjectTrump`, the later save keeps the other's changes and
    /// its own (concurrent changes of different fields of one movie both stay, too).
    ///
    /// A director the request names is made sure of first, in a save of its own: two requests
    /// that name the same new director both add one, and the later save becomes the saved
    /// director (an upsert). It is saved alone because the upsert gives the saved director the
    /// new one's to-many `movies` in place of its own, which would unlink the movies it had.
    func write<T: Sendable>(
        linkingDirector director: String?, _ body: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> T {
        try await repository.container.performBackgroundTask(author: transactionAuthor) { context in
            context.mergePolicy = .mergeByPropertyObjectTrump
            if let director {
                _ = try MovieResource.director(named: director, in: context)
                if context.hasChanges { try context.save() }
            }
            let result = try body(context)
            try context.save()
            return result
        }
    }
}
