import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import MovieServer
import Testing

/// `GET /movies/live`: server-sent events that follow the store.
@Suite struct LiveQueryTests {
    @Test(.timeLimit(.minutes(1)))
    func liveQuerySendsResultsThenUpdates() async throws {
        try await TestServer.test(.live) { client in
            _ = try await client.create("Heat", year: 1995, rating: 8.3)
            let port = try #require(client.port)
            var events = try await EventStream.open(
                "http://localhost:\(port)/movies/live?where=rating%20%3E%208&sort=title")
            #expect(events.contentType == "text/event-stream")
            #expect(try await events.next()?.map(\.title) == ["Heat"])

            _ = try await client.create("Alien", year: 1979, rating: 8.5)
            #expect(try await events.next()?.map(\.title) == ["Alien", "Heat"])

            // A movie the query does not select changes nothing.
            _ = try await client.create("Cats", year: 2019, rating: 2.8)
            let heat = try #require(
                try await client.execute(uri: "/movies?where=title%20%3D%3D%20'Heat'", method: .get)
                    .decode([MovieResource].self).first)
            let deleted = try await client.execute(uri: "/movies/\(heat.id)", method: .delete)
            #expect(deleted.status == .noContent)
            #expect(try await events.next()?.map(\.title) == ["Alien"])
            // The server shuts down with the stream open: the stream ends, the test returns.
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func liveQueryFollowsAnotherServerOnTheSameFile() async throws {
        try await TestServer.with { store in
            let writer = try store.makeApplication()
            let reader = try store.makeApplication()
            try await reader.test(.live) { readerClient in
                let port = try #require(readerClient.port)
                var events = try await EventStream.open("http://localhost:\(port)/movies/live")
                #expect(try await events.next()?.map(\.title) == [])
                try await writer.test(.router) { writerClient in
                    _ = try await writerClient.create("Heat", year: 1995)
                }
                // The reader's store notices the other container's commit when it polls.
                #expect(try await events.next()?.map(\.title) == ["Heat"])
            }
        }
    }
}

/// Reads a `text/event-stream` response event by event.
struct EventStream {
    let contentType: String?
    private var body: HTTPClientResponse.Body.AsyncIterator
    private var pending = ""

    /// Opens `url` and waits for the response's head.
    static func open(_ url: String) async throws -> EventStream {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(50))
        #expect(response.status == .ok)
        return EventStream(
            contentType: response.headers.first(name: "content-type"), body: response.body.makeAsyncIterator())
    }

    /// The movies of the next event, or `nil` at the end of the stream.
    mutating func next() async throws -> [MovieResource]? {
        while true {
            if let end = pending.range(of: "\n\n") {
                let event = pending[..<end.lowerBound]
                pending.removeSubrange(..<end.upperBound)
                let data = event.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }
                    .joined(separator: "\n")
                #expect(!event.contains("event: error"), "\(event)")
                return try JSONDecoder().decode([MovieResource].self, from: Data(data.utf8))
            }
            guard let buffer = try await body.next() else { return nil }
            pending += String(buffer: buffer)
        }
    }
}
