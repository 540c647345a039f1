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

/// A value type a ``Repository`` can write: it makes a managed object from itself, and copies
/// itself into an existing one.
public protocol WritableUnmanagedModel: Sendable {
    /// The managed class the value is written to.
    associatedtype ManagedModel: ManagedObject

    /// A new managed object in `context` with this value's contents. The default inserts a
    /// new `ManagedModel` and calls ``updating(managed:)``.
    ///
    /// For example:
    ///
    /// ```swift
    /// // In MovieCard: a new movie is released today.
    /// func asManagedModel(in context: ObjectContext) throws -> Movie {
    ///     let movie = Movie(context: context)
    ///     movie.title = title
    ///     movie.releaseDate = Date()
    ///     return movie
    /// }
    /// ```
    func asManagedModel(in context: ObjectContext) throws -> ManagedModel

    /// Copies this value into `managed`.
    ///
    /// For example:
    ///
    /// ```swift
    /// // In MovieCard:
    /// func updating(managed: Movie) { managed.title = title }
    /// ```
    func updating(managed: ManagedModel) throws
}

extension WritableUnmanagedModel {
    /// Inserts a new `ManagedModel` into `context` and copies this value into it.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try MovieCard(title: "Heat").asManagedModel(in: context)   // inserted, not saved
    /// ```
    public func asManagedModel(in context: ObjectContext) throws -> ManagedModel {
        guard let entity = context.schemaEntity(for: ManagedModel.entity) else {
            throw StrataError(
                .unknownEntity,
                "The context's schema has no entity \(ManagedModel.entity.name); add \(ManagedModel.self) to the container's schema.",
                entityName: ManagedModel.entity.name)
        }
        let object = ManagedModel(entity: entity)
        context.insert(object)
        try updating(managed: object)
        return object
    }
}

/// A value that can be read and written: what create, read, update and delete take.
public typealias UnmanagedModel = ReadableUnmanagedModel & WritableUnmanagedModel

/// A value that remembers the object ID of its managed object (`nil` before it is created).
public protocol ManagedIdReferencable {
    /// The object ID of the managed object, set by the repository on every value it returns.
    var managedId: ObjectID? { get set }
}

/// A value that remembers its managed object by the URI of its object ID
/// (``ObjectID/uriRepresentation``), for values kept in files or links.
public protocol ManagedIdUrlReferencable {
    /// The URI of the managed object's ID, set by the repository on every value it returns.
    var managedIdUrl: URL? { get set }
}

/// A readable value identified by a domain key: an attribute with a value of its own (a UUID
/// with a unique constraint, an e-mail address) rather than its object ID.
///
/// ```swift
/// extension Movie.Value: IdentifiedUnmanagedModel {
///     var unmanagedId: UUID { id }
///     static var unmanagedIdKeyPath: KeyPath<Movie, UUID> { \.id }
/// }
/// let heat = try await repository.read(heatID, of: Movie.Value.self)
/// ```
public protocol IdentifiedUnmanagedModel: ReadableUnmanagedModel {
    /// The type of the domain key.
    associatedtype UnmanagedId: Equatable & Sendable & PredicateArgument

    /// This value's domain key.
    var unmanagedId: UnmanagedId { get }

    /// The attribute of the managed class that holds the domain key.
    static var unmanagedIdKeyPath: KeyPath<ManagedModel, UnmanagedId> { get }

    /// How errors name a key (default: its description).
    ///
    /// For example:
    ///
    /// ```swift
    /// // In a value identified by an e-mail address:
    /// static func errorDescription(for unmanagedId: String) -> String { "<\(unmanagedId)>" }
    /// ```
    static func errorDescription(for unmanagedId: UnmanagedId) -> String
}

extension IdentifiedUnmanagedModel {
    /// The key's description.
    ///
    /// For example:
    ///
    /// ```swift
    /// let text = Movie.Value.errorDescription(for: heatID)   // "5F0C8A0E-…", heatID's description
    /// ```
    public static func errorDescription(for unmanagedId: UnmanagedId) -> String { "\(unmanagedId)" }

    /// Finds the object whose domain key is ``unmanagedId``.
    ///
    /// For example:
    ///
    /// ```swift
    /// struct Ticket: IdentifiedUnmanagedModel {
    ///     var code: String
    ///     var unmanagedId: String { code }
    ///     static var unmanagedIdKeyPath: KeyPath<Booking, String> { \.code }
    ///     init(code: String) { self.code = code }
    ///     init(managed: Booking) { code = managed.code }
    /// }
    /// let booking = try Ticket(code: "K7Q2").readManaged(from: context)
    /// ```
    public func readManaged(from context: ObjectContext) throws -> ManagedModel {
        try Self.readManaged(id: unmanagedId, from: context)
    }

    /// Finds the object whose domain key is `id`: exactly one must match.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try Movie.Value.readManaged(id: heatID, from: context)
    /// ```
    ///
    /// - Throws: ``RepositoryError/Code/noMatch`` when none match,
    ///   ``RepositoryError/Code/ambiguousMatch`` when several do.
    public static func readManaged(id: UnmanagedId, from context: ObjectContext) throws -> ManagedModel {
        let name = KeyPathNames.name(of: unmanagedIdKeyPath, root: ManagedModel.self)
        var request = managedFetchRequest()
        let match = FetchPredicate<ManagedModel>(.comparison(.keyPath(name), .equalTo, id.predicateExpression))
        request.predicate = request.predicate.map { $0 && match } ?? match
        request.fetchLimit = 2
        let objects = try context.fetch(request)
        guard objects.count == 1, let object = objects.first else {
            throw RepositoryError(
                objects.isEmpty ? .noMatch : .ambiguousMatch,
                objects.isEmpty
                    ? "No match found when reading \(errorDescription) -- id: \(errorDescription(for: id))."
                    : "More than one match found when reading \(errorDescription) -- id: \(errorDescription(for: id)); a domain key needs a unique constraint.",
                typeName: errorDescription, key: errorDescription(for: id))
        }
        return object
    }
}

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

extension IdentifiedUnmanagedModel where Self: ManagedIdReferencable {
    /// The object whose ID is ``ManagedIdReferencable/managedId`` when the value has one, else
    /// the object with its domain key.
    ///
    /// For example:
    ///
    /// ```swift
    /// let byKey = try Movie.Value(id: heatID).readManaged(from: context)   // no object ID: found by id
    /// let byObjectID = try heat.readManaged(from: context)                 // by heat.objectID
    /// ```
    public func readManaged(from context: ObjectContext) throws -> ManagedModel {
        guard let managedId else { return try Self.readManaged(id: unmanagedId, from: context) }
        return try Self.managedObject(with: managedId, in: context)
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

/// A generated `Model.Value` snapshot: every `@Entity final class`'s `Value` conforms, so it
/// can be created, read, updated, deleted, fetched and observed through a ``Repository`` with
/// no code of its own. It finds its object by its object ID; add
/// ``IdentifiedUnmanagedModel`` to read and update by a domain key too.
///
/// ```swift
/// var heat = try await repository.create(Movie.Value(id: UUID(), title: "Heat"))
/// heat.title = "Heat (1995)"
/// heat = try await repository.update(with: heat)
/// ```
public protocol RepositoryValue: UnmanagedModel, ManagedIdReferencable, Hashable, Codable
where ManagedModel: ValueSnapshotRepresentable, ManagedModel.Value == Self {
    /// The object ID of the snapshot's object; `nil` for a value not yet created.
    var objectID: ObjectID? { get set }
}

extension RepositoryValue {
    /// The object's snapshot.
    ///
    /// For example:
    ///
    /// ```swift
    /// let snapshot = Movie.Value(managed: movie)   // the same as movie.value
    /// ```
    public init(managed: ManagedModel) { self = managed.value }

    /// Writes the snapshot into `managed`, where it differs; the object ID is left alone.
    ///
    /// For example:
    ///
    /// ```swift
    /// var snapshot = movie.value
    /// snapshot.title = "Heat (1995)"
    /// try snapshot.updating(managed: movie)   // sets the title; nothing else differs
    /// ```
    public func updating(managed: ManagedModel) throws { try managed.update(from: self) }

    /// The snapshot's ``objectID``.
    public var managedId: ObjectID? {
        get { objectID }
        set { objectID = newValue }
    }
}

/// `type`'s name with the types it is nested in, without its module (`Movie.Value`).
func qualifiedTypeName(_ type: Any.Type) -> String {
    let reflected = String(reflecting: type)
    // Local types reflect as "Module.(unknown context at …).Name": keep the plain name.
    guard !reflected.contains("("), let dot = reflected.firstIndex(of: ".") else { return "\(type)" }
    return String(reflected[reflected.index(after: dot)...])
}
