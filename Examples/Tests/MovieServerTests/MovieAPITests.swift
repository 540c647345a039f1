import Foundation
import Hummingbird
import HummingbirdTesting
import MovieServer
import Testing

/// The JSON API: create, read, update, delete, queries and their errors.
@Suite struct MovieAPITests {
    @Test func createReadUpdateDelete() async throws {
        try await TestServer.test { client in
            let heat = try await client.create("Heat", year: 1995, rating: 8.3, director: "Michael Mann")
            #expect(heat.title == "Heat")
            #expect(heat.director == "Michael Mann")

            let read = try await client.execute(uri: "/movies/\(heat.id)", method: .get)
            #expect(read.status == .ok)
            #expect(try read.decode(MovieResource.self) == heat)

            let patched = try await client.send(
                .patch, "/movies/\(heat.id)", json: #"{"rating": 9.1, "title": "Heat (1995)"}"#)
            #expect(patched.status == .ok)
            let updated = try patched.decode(MovieResource.self)
            #expect(
                updated
                    == MovieResource(
                        id: heat.id, title: "Heat (1995)", year: 1995, rating: 9.1, director: "Michael Mann"))

            let unlinked = try await client.send(.patch, "/movies/\(heat.id)", json: #"{"director": null}"#)
            #expect(try unlinked.decode(MovieResource.self).director == nil)
            #expect(try unlinked.decode(MovieResource.self).rating == 9.1)

            let deleted = try await client.execute(uri: "/movies/\(heat.id)", method: .delete)
            #expect(deleted.status == .noContent)
            let gone = try await client.execute(uri: "/movies/\(heat.id)", method: .get)
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "noMatch")
        }
    }

    @Test func moviesShareTheirDirector() async throws {
        try await TestServer.test { client in
            _ = try await client.create("Heat", year: 1995, director: "Michael Mann")
            _ = try await client.create("Collateral", year: 2004, director: "Michael Mann")
            _ = try await client.create("Ronin", year: 1998, director: "John Frankenheimer")
            let query =
                "director.name == 'Michael Mann'".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let byMann = try await client.execute(uri: "/movies?where=\(query)&sort=year", method: .get)
            #expect(byMann.status == .ok)
            #expect(try byMann.decode([MovieResource].self).map(\.title) == ["Heat", "Collateral"])
        }
    }

    @Test func concurrentWritesShareANewDirector() async throws {
        try await TestServer.test(.ahc(.http)) { client in
            // Each save links a movie to the same director, which none of them has seen saved:
            // the saves conflict on the director's unique name and on its movies, and merge.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 1...20 {
                    group.addTask { _ = try await client.create("Take \(number)", year: 2000, director: "Agnes Varda") }
                }
                try await group.waitForAll()
            }
            let query =
                "director.name == 'Agnes Varda'".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let count = try await client.execute(uri: "/movies/count?where=\(query)", method: .get)
            #expect(try count.decode([String: Int].self) == ["count": 20])
            let all = try await client.execute(uri: "/movies?limit=100", method: .get)
            let directors = try all.decode([MovieResource].self).map { $0.director ?? "none" }
            #expect(directors == Array(repeating: "Agnes Varda", count: 20))
        }
    }

    @Test func listFiltersSortsAndLimits() async throws {
        try await TestServer.test { client in
            for (title, year, rating) in [
                ("Alien", 1979, 8.5), ("Brazil", 1985, 7.9), ("Casablanca", 1942, 8.5), ("Dune", 2021, 8.0),
            ] {
                _ = try await client.create(title, year: year, rating: rating)
            }
            let all = try await client.execute(uri: "/movies", method: .get)
            #expect(try all.decode([MovieResource].self).map(\.title) == ["Alien", "Brazil", "Casablanca", "Dune"])

            let sorted = try await client.execute(uri: "/movies?sort=-rating,-year&limit=3", method: .get)
            #expect(try sorted.decode([MovieResource].self).map(\.title) == ["Alien", "Casablanca", "Dune"])

            let filtered = try await client.execute(uri: "/movies?where=year%20%3E%3D%201980&sort=-year", method: .get)
            #expect(try filtered.decode([MovieResource].self).map(\.title) == ["Dune", "Brazil"])

            // As forms and `curl --data-urlencode` write them: `+` is a space, `%2B` a plus sign.
            let formEncoded = try await client.execute(
                uri: "/movies?where=rating+%3E%3D+8.5+AND+NOT+title+CONTAINS+'%2B'&sort=-year", method: .get)
            #expect(try formEncoded.decode([MovieResource].self).map(\.title) == ["Alien", "Casablanca"])

            let count = try await client.execute(uri: "/movies/count?where=rating%20%3D%3D%208.5", method: .get)
            #expect(count.status == .ok)
            #expect(try count.decode([String: Int].self) == ["count": 2])
            let total = try await client.execute(uri: "/movies/count", method: .get)
            #expect(try total.decode([String: Int].self) == ["count": 4])
        }
    }

    @Test(arguments: [
        ("/movies?where=title%20%3D%3D", "invalidPredicate"),
        ("/movies?where=titel%20%3D%3D%20'Heat'", "unknownKey"),
        ("/movies?sort=titel", "unknownKey"),
        ("/movies?sort=-", "invalidParameter"),
        ("/movies?limit=0", "invalidParameter"),
        ("/movies?limit=ten", "invalidParameter"),
        ("/movies/count?where=(year", "invalidPredicate"),
        ("/movies/live?where=budget%20%3E%201", "unknownKey"),
    ])
    func badQueriesAreRejected(uri: String, code: String) async throws {
        try await TestServer.test { client in
            _ = try await client.create("Heat", year: 1995)
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .badRequest, "\(uri): \(String(buffer: response.body))")
            #expect(response.errorCode == code, "\(uri): \(String(buffer: response.body))")
        }
    }

    @Test func badBodiesAreRejected() async throws {
        try await TestServer.test { client in
            let missingTitle = try await client.send(.post, "/movies", json: #"{"year": 1995}"#)
            #expect(missingTitle.status == .badRequest)
            #expect(missingTitle.errorCode == "invalidBody")

            let notJSON = try await client.send(.post, "/movies", json: "title=Heat")
            #expect(notJSON.status == .badRequest)

            let outOfRange = try await client.send(
                .post, "/movies", json: #"{"title": "Heat", "year": 1995, "rating": 11}"#)
            #expect(outOfRange.status == .badRequest, "\(String(buffer: outOfRange.body))")

            let emptyTitle = try await client.send(.post, "/movies", json: #"{"title": "", "year": 1995}"#)
            #expect(emptyTitle.status == .badRequest, "\(String(buffer: emptyTitle.body))")

            let count = try await client.execute(uri: "/movies/count", method: .get)
            #expect(try count.decode([String: Int].self) == ["count": 0])
        }
    }

    @Test func unknownIDsAreNotFound() async throws {
        try await TestServer.test { client in
            let unknown = UUID()
            for method in [HTTPRequest.Method.get, .delete] {
                let response = try await client.execute(uri: "/movies/\(unknown)", method: method)
                #expect(response.status == .notFound, "\(method)")
            }
            let patch = try await client.send(.patch, "/movies/\(unknown)", json: #"{"rating": 1}"#)
            #expect(patch.status == .notFound)
            let malformed = try await client.execute(uri: "/movies/not-a-uuid", method: .get)
            #expect(malformed.status == .notFound)
            #expect(malformed.errorCode == "notFound")
        }
    }

    @Test func healthReportsTheStore() async throws {
        try await TestServer.test { client in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .ok)
            #expect(try response.decode([String: String].self) == ["status": "ok", "store": "sqlite", "movies": "0"])
        }
    }
}
