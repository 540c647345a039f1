import Foundation

/// A value type a ``Repository`` can fetch: made from a managed object, with the request that
/// finds objects of its kind.
///
/// The repository kit's protocol of the same name. Every `@Entity final class` generates a
/// `Value` snapshot that conforms already (see ``RepositoryValue``); a hand-written value type
/// conforms with a few lines:
///
/// ```swift
/// struct MovieSummary: FetchableUnmanagedModel {
///     var title: String
///     var boxOffice: Decimal
///     init(managed: Movie) { title = managed.title; boxOffice = managed.boxOffice }
/// }
/// let summaries = try await repository.fetch(FetchRequest<Movie>(), as: MovieSummary.self)
/// ```
public protocol FetchableUnmanagedModel: Sendable {
    /// The managed class the value is read from.
    associatedtype ManagedModel: ManagedObject

    /// Creates the value from a managed object, inside the repository's context.
    ///
    /// For example:
    ///
    /// ```swift
    /// // In MovieSummary:
    /// init(managed: Movie) {
    ///     title = managed.title
    ///     boxOffice = managed.boxOffice
    /// }
    /// ```
    ///
    /// - Throws: Anything; a repository reports it as a ``RepositoryError``.
    init(managed: ManagedModel) throws

    /// The request for every object of the value's kind (the entity of ``ManagedModel``).
    ///
    /// For example:
    ///
    /// ```swift
    /// // In MovieSummary: only this century's movies have summaries.
    /// static func managedFetchRequest() -> FetchRequest<Movie> { FetchRequest(predicate: \.year >= 2000) }
    /// ```
    static func managedFetchRequest() -> FetchRequest<ManagedModel>

    /// How errors name this value (default: its type's name).
    var errorDescription: String { get }

    /// How errors name the value's type (default: its name).
    static var errorDescription: String { get }
}

extension FetchableUnmanagedModel {
    /// A request for every object of ``ManagedModel``'s entity.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = MovieSummary.managedFetchRequest()   // FetchRequest<Movie>(): every movie
    /// ```
    public static func managedFetchRequest() -> FetchRequest<ManagedModel> { FetchRequest<ManagedModel>() }

    /// The type's name, qualified by the types it is nested in (`Movie.Value`).
    public var errorDescription: String { Self.errorDescription }

    /// The type's name, qualified by the types it is nested in (`Movie.Value`).
    public static var errorDescription: String { qualifiedTypeName(Self.self) }
}

/// A fetchable value that can find its own managed object: by its object ID, its object-ID URL,
/// or its domain key.
///
/// Conform through ``ManagedIdReferencable``, ``ManagedIdUrlReferencable`` or
/// ``IdentifiedUnmanagedModel``, which implement ``readManaged(from:)``.
public protocol ReadableUnmanagedModel: FetchableUnmanagedModel {
    /// The managed object this value stands for, in `context`.
    ///
    /// For example:
    ///
    /// ```swift
    /// // In a value found by its title, which is unique:
    /// func readManaged(from context: ObjectContext) throws -> Movie {
    ///     guard let movie = try context.fetch(Movie.self, where: \.title == title, limit: 1).first else {
    ///         throw RepositoryError(.noMatch, "No movie is called \(title).", typeName: "MovieSummary", key: title)
    ///     }
    ///     return movie
    /// }
    /// ```
    ///
    /// - Throws: ``RepositoryError`` with ``RepositoryError/Code/noObjectID``,
    ///   ``RepositoryError/Code/noObjectIDURL``, ``RepositoryError/Code/noMatch``,
    ///   ``RepositoryError/Code/objectDeleted`` or ``RepositoryError/Code/typeMismatch``.
    func readManaged(from context: ObjectContext) throws -> ManagedModel
}

/// A value that can be read and written: what create, read, update and delete take.
public typealias UnmanagedModel = ReadableUnmanagedModel & WritableUnmanagedModel

extension ReadableUnmanagedModel where Self: ManagedIdReferencable {
    /// The object whose ID is ``ManagedIdReferencable/managedId``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try heat.readManaged(from: context)   // heat: a Movie.Value the repository returned
    /// ```
    public func readManaged(from context: ObjectContext) throws -> ManagedModel {
        guard let managedId else { throw RepositoryError.noObjectID(on: Self.errorDescription) }
        return try Self.managedObject(with: managedId, in: context)
    }
}

extension ReadableUnmanagedModel where Self: ManagedIdUrlReferencable {
    /// The object whose ID's URI is ``ManagedIdUrlReferencable/managedIdUrl``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try card.readManaged(from: context)   // card: a MovieCard the repository returned
    /// ```
    public func readManaged(from context: ObjectContext) throws -> ManagedModel {
        guard let managedIdUrl else { throw RepositoryError.noObjectIDURL(on: Self.errorDescription) }
        return try Self.managedObject(with: try context.repositoryObjectID(for: managedIdUrl), in: context)
    }
}

extension FetchableUnmanagedModel {
    /// The live object with `objectID` in `context`, as a `ManagedModel`.
    static func managedObject(with objectID: ObjectID, in context: ObjectContext) throws -> ManagedModel {
        let root = Self.rootContext(of: context)
        if objectID.isTemporaryID || objectID.storeIdentifier.flatMap({ root.container?.store(withIdentifier: $0) }) == nil,
            root.container != nil, context.registeredObject(for: objectID) == nil
        {
            throw RepositoryError(
                .unknownObjectID,
                "The object ID \(objectID) names no object of this container's stores: it is "
                    + (objectID.isTemporaryID ? "the temporary ID of an object never saved" : "another store's")
                    + "; use an ID the repository returned.",
                typeName: errorDescription, objectID: objectID)
        }
        let object: ManagedObject
        do {
            object = try context.existingObject(with: objectID)
        } catch let error as StrataError where error.code == .objectNotFound || error.code == .objectDeleted {
            throw RepositoryError(
                .objectDeleted,
                "The \(errorDescription) with object ID \(objectID) is deleted and cannot be read.",
                typeName: errorDescription, objectID: objectID, underlyingError: error)
        }
        guard !object.isDeleted else {
            throw RepositoryError(
                .objectDeleted, "The \(errorDescription) with object ID \(objectID) is deleted and cannot be read.",
                typeName: errorDescription, objectID: objectID)
        }
        guard let typed = object as? ManagedModel else {
            throw RepositoryError(
                .typeMismatch,
                "The object with ID \(objectID) is a \(object.entity.name), not a \(ManagedModel.entity.name) that \(errorDescription) is read from.",
                typeName: errorDescription, objectID: objectID)
        }
        return typed
    }
}

extension FetchableUnmanagedModel {
    /// The context at the top of `context`'s chain of parents.
    static func rootContext(of context: ObjectContext) -> ObjectContext {
        var root = context
        while let parent = root.parent { root = parent }
        return root
    }
}

extension ObjectContext {
    /// The object ID a URI stands for, among the stores of the context's container.
    func repositoryObjectID(for url: URL) throws -> ObjectID {
        guard let parsed = ObjectID(uriRepresentation: url) else {
            throw RepositoryError(
                .unknownObjectIDURL, "\(url.absoluteString) is not the URI of an object ID.", url: url)
        }
        guard let container, let objectID = container.objectID(forURIRepresentation: url) else {
            throw RepositoryError(
                .unknownObjectIDURL,
                "No object ID of this container's stores correlates to \(url.absoluteString): it names "
                    + (parsed.storeIdentifier.map { "store \($0)" } ?? "no store")
                    + ", and entity \(parsed.entityName).",
                url: url)
        }
        return objectID
    }
}

/// `type`'s name with the types it is nested in, without its module (`Movie.Value`).
func qualifiedTypeName(_ type: Any.Type) -> String {
    let reflected = String(reflecting: type)
    // Local types reflect as "Module.(unknown context at …).Name": keep the plain name.
    guard !reflected.contains("("), let dot = reflected.firstIndex(of: ".") else { return "\(type)" }
    return String(reflected[reflected.index(after: dot)...])
}
