import Foundation
import Hummingbird
import Logging
import Strata

/// How to run the movie server.
public struct MovieServerConfiguration: Sendable {
    /// The address to listen on.
    public var hostname: String
    /// The port to listen on (0 for any free port; the log says which).
    public var port: Int
    /// Where the movies are kept.
    public var store: StoreLocation
    /// For an SQLite file, how often to look for commits of other processes (other servers on
    /// the same file), so that their writes reach this server's live queries. `nil` never looks.
    public var remoteChangePollingInterval: Duration?

    /// Creates a configuration.
    public init(
        hostname: String = "127.0.0.1", port: Int = 8080, store: StoreLocation,
        remoteChangePollingInterval: Duration? = .milliseconds(100)
    ) {
        self.hostname = hostname
        self.port = port
        self.store = store
        self.remoteChangePollingInterval = remoteChangePollingInterval
    }
}

/// Opens the store and builds the server: the routes of ``MovieController`` under `/movies`,
/// `GET /health`, and a service that closes the store after the server has stopped.
///
/// ```swift
/// let app = try makeMovieServer(configuration: .init(store: .sqlite(url)), logger: logger)
/// try await app.runService()   // until SIGINT or SIGTERM, then a graceful shutdown
/// ```
///
/// Opening the store blocks the calling thread until the file is open or the database answers.
///
/// - Throws: `StrataError` when the store cannot be opened (an unreachable server, bad
///   credentials, a file written with another model).
public func makeMovieServer(
    configuration: MovieServerConfiguration, logger: Logger
) throws -> some ApplicationProtocol {
    if case .sqlite(let url) = configuration.store {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    }
    let description = try configuration.store.storeDescription(
        remoteChangePollingInterval: configuration.remoteChangePollingInterval, logger: logger)
    let container = try PersistentContainer(
        name: "Movies", entities: [Movie.self, Director.self], storeDescriptions: [description])
    let repository = Repository(container)

    let router = Router()
    router.add(middleware: LogRequestsMiddleware(.debug))
    let storeKind = configuration.store.kind
    router.get("health") { _, context -> [String: String] in
        // A round trip to the store: the server is healthy when the store answers.
        do {
            let count = try await repository.count(of: Movie.self)
            return ["status": "ok", "store": storeKind, "movies": String(count)]
        } catch {
            context.logger.error("Health check failed", metadata: ["error": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: RepositoryError(error).code.rawValue, message: "The store does not answer.")
        }
    }
    MovieController<BasicRequestContext>(repository: repository).addRoutes(to: router.group("movies"))

    logger.info("Movies are kept in \(configuration.store.kind) store \(configuration.store)")
    return Application(
        router: router,
        configuration: .init(
            address: .hostname(configuration.hostname, port: configuration.port), serverName: "movie-server"),
        services: [ContainerService(container: container)],
        logger: logger)
}
