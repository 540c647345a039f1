import Foundation

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
