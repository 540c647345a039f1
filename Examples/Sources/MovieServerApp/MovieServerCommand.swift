import ArgumentParser
import Foundation
import Hummingbird
import Logging
import MovieServer

/// `movie-server`: the movie catalogue server, until SIGINT or SIGTERM.
@main
struct MovieServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "movie-server",
        abstract: "A movie catalogue over HTTP: a JSON API and live queries, on SQLite or PostgreSQL.",
        discussion: """
            The store is an SQLite file, or a PostgreSQL database when --store is a postgres:// \
            URL (or MOVIES_STORE holds one). Several servers can share a PostgreSQL database, or \
            an SQLite file on one machine: each one's live queries follow the others' writes.

            Examples:
              movie-server --store movies.sqlite
              movie-server --port 8081 --store 'postgres://user:password@127.0.0.1:5432/app?schema=movies'
            """)

    @Option(help: "The address to listen on.")
    var hostname = "127.0.0.1"

    @Option(help: "The port to listen on (0 for any free port).")
    var port = 8080

    @Option(
        help: ArgumentHelp(
            "An SQLite file, or a postgres:// URL (default: $MOVIES_STORE, else movies.sqlite).",
            valueName: "path-or-url"))
    var store: String?

    @Option(help: "For an SQLite store: how often, in milliseconds, to look for other processes' commits (0: never).")
    var pollInterval = 100

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
        guard pollInterval >= 0 else { throw ValidationError("--poll-interval must be 0 or more.") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
    }

    func run() async throws {
        var logger = Logger(label: "movie-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let argument = store ?? ProcessInfo.processInfo.environment["MOVIES_STORE"] ?? "movies.sqlite"
        let location: StoreLocation
        do {
            location = try StoreLocation(argument)
        } catch {
            throw ValidationError("--store: \(error)")
        }
        let configuration = MovieServerConfiguration(
            hostname: hostname, port: port, store: location,
            remoteChangePollingInterval: pollInterval > 0 ? .milliseconds(pollInterval) : nil)
        let app: any ApplicationProtocol
        do {
            app = try makeMovieServer(configuration: configuration, logger: logger)
        } catch {
            logger.critical("Cannot open the store: \(error)")
            throw ExitCode.failure
        }
        // Runs until SIGINT or SIGTERM, then stops accepting connections, ends live streams,
        // waits for the requests under way and closes the store.
        try await app.runService()
        logger.info("Stopped")
    }
}
