import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MovieServer
import Testing

/// A movie server on an SQLite store of its own, in a temporary folder removed afterwards.
struct TestServer {
    let folder: URL
    var storeURL: URL { folder.appendingPathComponent("movies.sqlite") }

    /// Runs `body` with a new folder, then removes it.
    static func with<T>(_ body: (TestServer) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("movie-server-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(TestServer(folder: folder))
    }

    /// Runs `body` against a server on a new store, through Hummingbird's router test client.
    static func test<T: Sendable>(
        _ setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await with { server in try await server.makeApplication().test(setup, body) }
    }

    /// A server on this folder's store (several may share it, as several processes would).
    func makeApplication() throws -> some ApplicationProtocol {
        var logger = Logger(label: "movie-server-tests")
        logger.logLevel = .warning
        return try makeMovieServer(
            configuration: MovieServerConfiguration(
                port: 0, store: .sqlite(storeURL), remoteChangePollingInterval: .milliseconds(20)),
            logger: logger)
    }
}

extension TestClientProtocol {
    /// Sends `body` as JSON.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, json body: String) async throws -> TestResponse {
        try await execute(
            uri: uri, method: method, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
    }

    /// Adds a movie and returns it.
    func create(_ title: String, year: Int, rating: Double = 5, director: String? = nil) async throws -> MovieResource {
        let input = MovieInput(title: title, year: year, rating: rating, director: director)
        let response = try await send(
            .post, "/movies", json: String(decoding: try JSONEncoder().encode(input), as: UTF8.self))
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try response.decode(MovieResource.self)
    }
}

extension TestResponse {
    /// The body, decoded from JSON.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(body.readableBytesView))
    }

    /// The `code` of an error body.
    var errorCode: String? {
        struct Body: Decodable {
            struct Detail: Decodable { let code: String; let message: String }
            let error: Detail
        }
        return try? decode(Body.self).error.code
    }
}
