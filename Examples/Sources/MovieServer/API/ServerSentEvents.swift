import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Strata

extension MovieResource: ResponseEncodable {}

/// Writes a repository subscription as server-sent events (`text/event-stream`).
///
/// Each result is one event whose `data:` line is the results as JSON (one line: JSON text
/// never needs a raw newline); a failed fetch is an `error` event with the JSON of an
/// ``APIError``, and the stream goes on:
///
/// ```text
/// data: [{"id":"…","title":"Heat","year":1995,"rating":8.3,"director":"Michael Mann"}]
///
/// event: error
/// data: {"error":{"code":"storeClosed","message":"…"}}
/// ```
enum ServerSentEvents {
    /// Writes every element of `updates` to `writer` until the subscription ends or the server
    /// begins a graceful shutdown.
    static func stream(
        _ updates: AsyncStream<Result<[MovieResource], RepositoryError>>, to writer: inout any ResponseBodyWriter,
        logger: Logger
    ) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for await update in updates.cancelOnGracefulShutdown() {
            let event: String
            switch update {
            case .success(let movies):
                event = "data: \(String(decoding: try encoder.encode(movies), as: UTF8.self))\n\n"
            case .failure(let error):
                logger.warning("Live query failed", metadata: ["error": "\(error)"])
                let response = APIError(error)
                let body = ["error": ["code": response.code, "message": response.message]]
                event = "event: error\ndata: \(String(decoding: try encoder.encode(body), as: UTF8.self))\n\n"
            }
            try await writer.write(ByteBuffer(string: event))
        }
    }
}
