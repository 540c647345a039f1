import Foundation

/// The error of every ``Repository`` call.
///
/// Its ``code`` keeps the repository kit's distinctions — an object that is gone
/// (``Code/objectDeleted``), a domain key with no match (``Code/noMatch``), a value with no
/// object ID or URI to find its object by (``Code/noObjectID``, ``Code/noObjectIDURL``), a URI
/// that names no object of the container's stores (``Code/unknownObjectIDURL``), an object of
/// another type (``Code/typeMismatch``), a unique-constraint clash
/// (``Code/constraintConflict``) — and passes on the code of any other ``StrataError``
/// (validation, store errors) under the same raw value.
///
/// ```swift
/// do {
///     _ = try await repository.read(heatID, of: Movie.Value.self)
/// } catch where error.code == .noMatch {
///     print(error.message)   // "No match found when reading Movie.Value -- id: 5F0C…."
/// }
/// ```
public struct RepositoryError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier for a kind of repository error.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable string value of the code.
        public let rawValue: String

        /// Creates a code from its raw value.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The raw value.
        public var description: String { rawValue }

        /// The object is deleted (by this context or in the store): it cannot be read, updated
        /// or deleted again. The kit's `fetchedObjectIsFlaggedAsDeleted`.
        public static let objectDeleted = Self(rawValue: StrataError.Code.objectDeleted.rawValue)
        /// No object has the domain key. The kit's `noMatchFoundWhenReadingItem`.
        public static let noMatch = Self(rawValue: "noMatch")
        /// The value has no object ID to find its object by. The kit's `noObjectIdOnItem`.
        public static let noObjectID = Self(rawValue: "noObjectID")
        /// The value has no object-ID URI to find its object by. The kit's
        /// `noUrlOnItemToMapToObjectId`.
        public static let noObjectIDURL = Self(rawValue: "noObjectIDURL")
        /// The URI is not an object ID of the container's stores (malformed, or of another
        /// store). The kit's `failedToGetObjectIdFromUrl`.
        public static let unknownObjectIDURL = Self(rawValue: "unknownObjectIDURL")
        /// The object is of another entity than the value's managed class. The kit's
        /// `fetchedObjectFailedToCastToExpectedType`.
        public static let typeMismatch = Self(rawValue: StrataError.Code.typeMismatch.rawValue)
        /// A save would store two objects with the same unique values.
        public static let constraintConflict = Self(rawValue: StrataError.Code.constraintConflict.rawValue)
        /// The transaction's block has returned: a call can no longer join it.
        public static let transactionEnded = Self(rawValue: "transactionEnded")
        /// A transaction given to `continuing:` belongs to another container's repository.
        public static let foreignTransaction = Self(rawValue: "foreignTransaction")
        /// More than one object has the domain key (give the key a uniqueness constraint).
        public static let ambiguousMatch = Self(rawValue: "ambiguousMatch")
        /// The object ID names no object of the container's stores: it is temporary (of an
        /// object never saved), or another store's.
        public static let unknownObjectID = Self(rawValue: "unknownObjectID")
        /// The task was cancelled before the work was stored.
        public static let cancelled = Self(rawValue: "cancelled")
        /// An error that is not a ``StrataError`` (thrown by a value's own code, say).
        public static let unknown = Self(rawValue: "unknown")
    }

    /// What kind of error this is.
    public var code: Code
    /// What happened, and what it concerned.
    public var message: String
    /// How the value type involved names itself (``FetchableUnmanagedModel/errorDescription-swift.type.property``).
    public var typeName: String?
    /// The domain key involved, as text.
    public var key: String?
    /// The object ID involved.
    public var objectID: ObjectID?
    /// The object-ID URI involved.
    public var url: URL?
    /// The error this one reports (a ``StrataError`` from the engine, or the error a value's
    /// own code threw).
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// For example:
    ///
    /// ```swift
    /// throw RepositoryError(.noMatch, "No movie is called \(title).", typeName: "MovieSummary", key: title)
    /// ```
    public init(
        _ code: Code, _ message: String, typeName: String? = nil, key: String? = nil, objectID: ObjectID? = nil,
        url: URL? = nil, underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.typeName = typeName
        self.key = key
        self.objectID = objectID
        self.url = url
        self.underlyingError = underlyingError
    }

    /// The error a repository reports for `error`: itself when it is one, a ``StrataError``
    /// under its own code, cancellation as ``Code/cancelled``, anything else as
    /// ``Code/unknown``.
    ///
    /// For example:
    ///
    /// ```swift
    /// do {
    ///     try context.save()
    /// } catch {
    ///     throw RepositoryError(error)   // a StrataError keeps its code
    /// }
    /// ```
    public init(_ error: any Error) {
        switch error {
        case let error as RepositoryError:
            self = error
        case let error as StrataError:
            self.init(
                Code(rawValue: error.code.rawValue), error.message, objectID: error.objectID, underlyingError: error)
        case is CancellationError:
            self.init(.cancelled, "The task was cancelled; nothing was stored.", underlyingError: CancellationError())
        default:
            self.init(.unknown, "\(error)", underlyingError: SendableErrorDescription(error))
        }
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }

    static func noObjectID(on typeName: String) -> RepositoryError {
        RepositoryError(
            .noObjectID,
            "No object ID found on the \(typeName) for an operation against an existing object; use a value the repository returned.",
            typeName: typeName)
    }

    static func noObjectIDURL(on typeName: String) -> RepositoryError {
        RepositoryError(
            .noObjectIDURL,
            "No object ID URL found on the \(typeName) for an operation against an existing object; use a value the repository returned.",
            typeName: typeName)
    }
}

/// A non-`Sendable` error, kept as its description.
struct SendableErrorDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}
