import Foundation

/// A value that imports itself into a context in two phases: shared importer data made once
/// for the whole batch, then each item imported with it. The data-stack kit's `Persistable`,
/// renamed so that it does not clash with the Rx kit's `Persistable`, which Strata calls
/// ``PersistableValue``.
///
/// ```swift
/// struct ImportablePerson: Identifiable {
///     var id: Int
///     var firstName: String
///     var townID: Int
/// }
///
/// extension ImportablePerson: Importable {
///     typealias ImporterData = [Int: Town]
///
///     // Once per import: fetch every town the batch names, in one query.
///     static func generateImporterData(objects: [Self], context: ObjectContext) throws -> ImporterData {
///         let towns = try context.fetch(Town.self, where: (\Town.id).in(objects.map(\.townID)))
///         return Dictionary(towns.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
///     }
///
///     // Then once per item.
///     func importIntoContext(_ context: ObjectContext, importerData: inout ImporterData) -> PersistenceResult {
///         let person = Person(context: context)
///         person.firstName = firstName
///         person.town = importerData[townID]
///         return .insert(person.objectID)
///     }
/// }
///
/// let results: [PersistenceResult] = try context.importPersistableObjects(people)
/// let byID: [Int: PersistenceResult] = try context.importPersistableObjects(people)
/// try context.save()
/// ```
///
/// The import changes the context only; save it to keep the results. Types without importer
/// data (`ImporterData == Void`) need not write ``generateImporterData(objects:context:)``.
public protocol Importable {
    /// What every item's import needs: related objects fetched once, existing objects to update,
    /// a cache that grows as items are imported. `Void` when nothing is shared.
    associatedtype ImporterData

    /// Makes the importer data for a batch, once, before any item is imported.
    ///
    /// For example:
    ///
    /// ```swift
    /// struct MovieRow: Importable {
    ///     var title: String
    ///     var directorName: String
    ///
    ///     // Every director the batch names, fetched in one query.
    ///     static func generateImporterData(objects: [MovieRow], context: ObjectContext) throws -> [String: Person] {
    ///         let directors = try context.fetch(Person.self, where: (\Person.name).in(objects.map(\.directorName)))
    ///         return Dictionary(directors.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    ///     }
    ///
    ///     func importIntoContext(_ context: ObjectContext, importerData: inout [String: Person])
    ///         -> PersistenceResult
    ///     {
    ///         let movie = Movie(context: context)
    ///         movie.title = title
    ///         movie.director = importerData[directorName]
    ///         return .insert(movie.objectID)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - objects: Every item of the batch, in input order.
    ///   - context: The context the items are imported into.
    /// - Returns: The data each item's import receives.
    /// - Throws: Any error, which ends the import before any item is imported.
    static func generateImporterData(objects: [Self], context: ObjectContext) throws -> ImporterData

    /// Imports this item into `context`.
    ///
    /// A non-throwing implementation (the kit's signature) satisfies the requirement; a throwing
    /// one may throw instead of returning ``PersistenceResult/fail(_:)``, and the import records
    /// the error as that item's failure and goes on.
    ///
    /// For example:
    ///
    /// ```swift
    /// struct CastMember: Importable {
    ///     var movieTitle: String
    ///     var name: String
    ///
    ///     static func generateImporterData(objects: [CastMember], context: ObjectContext) throws -> [String: Person] {
    ///         [:]   // filled as the items are imported
    ///     }
    ///
    ///     // A name that comes back in a later row gets the Person the earlier row made.
    ///     func importIntoContext(_ context: ObjectContext, importerData: inout [String: Person]) throws
    ///         -> PersistenceResult
    ///     {
    ///         guard let movie = try context.fetch(Movie.self, where: \.title == movieTitle, limit: 1).first else {
    ///             return .noAction
    ///         }
    ///         let person = importerData[name] ?? Person(context: context)
    ///         person.name = name
    ///         importerData[name] = person
    ///         movie.cast.append(person)
    ///         return .update(movie.objectID)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: The context to write to.
    ///   - importerData: The batch's importer data, which the item may change for the items
    ///     after it (to remember an object it inserted, say).
    /// - Returns: What the item did.
    func importIntoContext(_ context: ObjectContext, importerData: inout ImporterData) throws -> PersistenceResult
}

extension Importable where ImporterData == Void {
    /// Nothing: an importable type without importer data needs no preparation.
    ///
    /// For example:
    ///
    /// ```swift
    /// struct Retitle: Importable {   // no ImporterData, no generateImporterData(objects:context:)
    ///     var id: UUID
    ///     var title: String
    ///
    ///     func importIntoContext(_ context: ObjectContext, importerData: inout Void) throws -> PersistenceResult {
    ///         guard let movie = try context.fetch(Movie.self, where: \.id == id, limit: 1).first else {
    ///             return .noAction
    ///         }
    ///         movie.title = title
    ///         return .update(movie.objectID)
    ///     }
    /// }
    /// ```
    public static func generateImporterData(objects: [Self], context: ObjectContext) throws {}
}

/// What importing one item did (the data-stack kit's `PersistenceResult`).
public enum PersistenceResult: Sendable, CustomStringConvertible {
    /// A new object was inserted (its ID is temporary until the context saves).
    case insert(ObjectID)
    /// An existing object was updated.
    case update(ObjectID)
    /// An object was deleted.
    case delete(ObjectID)
    /// Nothing needed doing.
    case noAction
    /// The item could not be imported.
    case fail(any Error)

    /// The object the item inserted, updated or deleted, if any.
    public var objectID: ObjectID? {
        switch self {
        case .insert(let id), .update(let id), .delete(let id): id
        case .noAction, .fail: nil
        }
    }

    /// The error of a failed item.
    public var error: (any Error)? {
        if case .fail(let error) = self { return error }
        return nil
    }

    /// The result, as `insert(Movie/p12)`, `noAction` or `fail(…)`.
    public var description: String {
        switch self {
        case .insert(let id): "insert(\(id))"
        case .update(let id): "update(\(id))"
        case .delete(let id): "delete(\(id))"
        case .noAction: "noAction"
        case .fail(let error): "fail(\(error))"
        }
    }
}

extension ObjectContext {
    /// Imports `objects` in two phases: ``Importable/generateImporterData(objects:context:)``
    /// once, then ``Importable/importIntoContext(_:importerData:)`` for each item in order.
    ///
    /// For example:
    ///
    /// ```swift
    /// let results: [PersistenceResult] = try context.importPersistableObjects(teachers)
    /// let failures = results.compactMap(\.error)
    /// try context.save()
    /// ```
    ///
    /// - Parameter objects: The items to import.
    /// - Returns: Each item's result, in input order.
    /// - Throws: What making the importer data throws; an item that fails is recorded as
    ///   ``PersistenceResult/fail(_:)`` and the others are still imported.
    public func importPersistableObjects<Item: Importable>(_ objects: [Item]) throws -> [PersistenceResult] {
        var importerData = try Item.generateImporterData(objects: objects, context: self)
        return objects.map { item in
            do {
                return try item.importIntoContext(self, importerData: &importerData)
            } catch {
                return .fail(error)
            }
        }
    }

    /// Imports `objects` as the array-returning form does, and returns the results keyed by each
    /// item's identifier.
    ///
    /// For `Identifiable` items Swift picks this form unless the result is annotated as
    /// `[PersistenceResult]`, as in the kit.
    ///
    /// For example:
    ///
    /// ```swift
    /// let byID: [Teacher.ID: PersistenceResult] = try context.importPersistableObjects(teachers)
    /// ```
    ///
    /// - Returns: Each item's result by its `id`; when two items share an identifier, the later
    ///   one's result is kept (both are imported).
    /// - Throws: What making the importer data throws.
    public func importPersistableObjects<Item: Importable & Identifiable>(_ objects: [Item]) throws
        -> [Item.ID: PersistenceResult]
    {
        let results: [PersistenceResult] = try importPersistableObjects(objects)
        var byID: [Item.ID: PersistenceResult] = [:]
        for (item, result) in zip(objects, results) { byID[item.id] = result }
        return byID
    }
}
