import Foundation
import Hummingbird
import Strata

/// An error response: an HTTP status and a JSON body with a stable code and a message.
///
/// ```json
/// {"error": {"code": "unknownKey", "message": "Movie has no attribute or relationship 'titel'…"}}
/// ```
///
/// Errors from Strata keep their code (``RepositoryError/Code``'s raw value), so a client can
/// match on it; ``init(_:)`` chooses the status from it.
public struct APIError: HTTPResponseError, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable identifier of the kind of error (`unknownKey`, `invalidPredicate`, `notFound`…).
    public var code: String
    /// What happened and how to fix it.
    public var message: String

    /// Creates an error response.
    public init(_ status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The response for an error a repository call threw.
    ///
    /// Errors that the request caused — a malformed or unsupported predicate, an unknown key,
    /// a value outside the model's rules — are `400 Bad Request`; a movie that does not exist
    /// is `404 Not Found`; a clash with another write is `409 Conflict`; anything else is
    /// `500 Internal Server Error`, whose message is kept out of the response (the server logs it).
    public init(_ error: RepositoryError) {
        let status: HTTPResponse.Status =
            switch error.code.rawValue {
            case RepositoryError.Code.noMatch.rawValue, RepositoryError.Code.objectDeleted.rawValue,
                StrataError.Code.objectNotFound.rawValue:
                .notFound
            case RepositoryError.Code.constraintConflict.rawValue, StrataError.Code.optimisticLockingFailure.rawValue,
                StrataError.Code.deleteDenied.rawValue:
                .conflict
            case StrataError.Code.invalidPredicate.rawValue, StrataError.Code.unsupportedPredicate.rawValue,
                StrataError.Code.unknownKey.rawValue, StrataError.Code.typeMismatch.rawValue,
                StrataError.Code.valueOutOfRange.rawValue, StrataError.Code.validationFailed.rawValue,
                StrataError.Code.unrepresentableValue.rawValue, StrataError.Code.missingValue.rawValue,
                StrataError.Code.valueTooSmall.rawValue, StrataError.Code.valueTooLarge.rawValue,
                StrataError.Code.patternMismatch.rawValue:
                .badRequest
            case RepositoryError.Code.cancelled.rawValue:
                .serviceUnavailable
            default:
                .internalServerError
            }
        let message =
            status == .internalServerError
            ? "The server could not complete the request (\(error.code)); its log has the details."
            : error.message
        self.init(status, code: error.code.rawValue, message: message)
    }

    /// `404 Not Found` for a movie identifier no movie has.
    static func movieNotFound(_ id: String) -> APIError {
        APIError(.notFound, code: "notFound", message: "No movie has the id '\(id)'.")
    }

    /// `400 Bad Request` for a query parameter that cannot be used.
    static func badParameter(_ name: String, _ message: String) -> APIError {
        APIError(.badRequest, code: "invalidParameter", message: "Query parameter '\(name)': \(message)")
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
        }
        let error: Detail
    }

    /// The JSON response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(
            Body(error: .init(code: code, message: message)), from: request, context: context)
        response.status = status
        return response
    }

    /// The status and the code, for logs.
    public var description: String { "\(status.code) \(code): \(message)" }
}
