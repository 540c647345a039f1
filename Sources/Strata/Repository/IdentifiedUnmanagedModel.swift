import Foundation

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
