import Foundation

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
