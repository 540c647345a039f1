import Foundation

/// A value type that stores itself as one object, found by a primary attribute: the Rx kit's
/// `Persistable`, without RxSwift.
///
/// ```swift
/// struct LoginData: PersistableValue {
///     var phoneNumber: String
///     var token: String
///
///     static var primaryAttributeName: String { "phoneNumber" }
///     var identity: String { phoneNumber }
///
///     func update(_ entity: Login) { entity.phoneNumber = phoneNumber; entity.token = token }
/// }
/// extension LoginData {   // in an extension, so that the memberwise initializer stays
///     init(entity: Login) { phoneNumber = entity.phoneNumber; token = entity.token }
/// }
///
/// try context.upsert(LoginData(phoneNumber: "0912", token: "t"))   // inserts, or updates the one with that number
/// for try await logins in context.entities(LoginData.self) { print(logins.count) }
/// ```
public protocol PersistableValue {
    /// The managed class the value is stored as (the kit's `T`).
    associatedtype Model: ManagedObject
    /// The type of ``identity``.
    associatedtype Identity: PredicateArgument

    /// The entity's name (default: ``Model``'s entity). A value whose ``Model`` is
    /// `ManagedObject` itself (objects without a class of their own, as the Rx kit's
    /// `Persistable` uses them) must name its entity here.
    static var entityName: String { get }

    /// The attribute whose value identifies each object; also the default sort of
    /// ``ObjectContext/entities(_:where:sortedBy:)``.
    static var primaryAttributeName: String { get }

    /// This value's primary attribute value.
    var identity: Identity { get }

    /// Creates the value from its object.
    ///
    /// For example:
    ///
    /// ```swift
    /// // In LoginData:
    /// init(entity: Login) throws {
    ///     phoneNumber = entity.phoneNumber
    ///     token = entity.token
    /// }
    /// ```
    init(entity: Model) throws

    /// Copies the value into `entity` (new or existing).
    ///
    /// For example:
    ///
    /// ```swift
    /// // In LoginData:
    /// func update(_ entity: Login) throws {
    ///     entity.phoneNumber = phoneNumber
    ///     entity.token = token
    /// }
    /// ```
    func update(_ entity: Model) throws

    /// The predicate that finds this value's object (default: primary attribute equals
    /// ``identity``).
    ///
    /// For example:
    ///
    /// ```swift
    /// // In a value found by two attributes rather than by its primary attribute alone:
    /// func predicate() -> FetchPredicate<Login> { \.phoneNumber == phoneNumber && \.country == country }
    /// ```
    func predicate() -> FetchPredicate<Model>
}

extension PersistableValue {
    /// ``Model``'s entity name.
    public static var entityName: String { Model.entity.name }

    /// `primaryAttributeName == identity`, with the identity bound as a value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let predicate = LoginData(phoneNumber: "0912", token: "t").predicate()   // phoneNumber == "0912"
    /// ```
    public func predicate() -> FetchPredicate<Model> {
        FetchPredicate(.comparison(.keyPath(Self.primaryAttributeName), .equalTo, identity.predicateExpression))
    }

    /// The request for the values' objects: `predicate`, sorted by `sortDescriptors` or by the
    /// primary attribute.
    static func fetchRequest(
        where predicate: FetchPredicate<Model>?, sortedBy sortDescriptors: [FetchSortDescriptor<Model>]?
    ) -> FetchRequest<Model> {
        // By name: a value stored as a plain `ManagedObject` (the Rx kit's way) has no class entity.
        FetchRequest<Model>(
            entityName: entityName, predicate: predicate,
            sortDescriptors: sortDescriptors ?? [FetchSortDescriptor(key: primaryAttributeName)])
    }
}

extension ObjectContext {
    /// The values of type `P` now, then again each time the context's result changes — its own
    /// processed changes and the other saves it merges — as an `AsyncSequence` iterated in the
    /// context's isolation domain. The Rx kit's `rx.entities(_:predicate:sortDescriptors:)`.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await logins in container.viewContext.entities(LoginData.self, where: try FetchPredicate(format: "nick != nil")) {
    ///     render(logins)   // sorted by the primary attribute
    /// }
    /// ```
    ///
    /// It runs a ``FetchedResultsController`` on the context: the
    /// ``PersistentContainer/viewContext`` merges other contexts' saves as they arrive; another
    /// context follows them when it ``automaticallyMergesChangesFromContainer``. Ending the
    /// iteration releases the controller and its observations.
    ///
    /// - Parameters:
    ///   - type: The value type.
    ///   - predicate: Which objects; all when `nil`.
    ///   - sortDescriptors: The order; by ``PersistableValue/primaryAttributeName`` when `nil`.
    public func entities<P: PersistableValue>(
        _ type: P.Type = P.self, where predicate: FetchPredicate<P.Model>? = nil,
        sortedBy sortDescriptors: [FetchSortDescriptor<P.Model>]? = nil
    ) -> FetchedResultsSequence<P.Model, [P]> {
        FetchedResultsSequence(
            controller: FetchedResultsController(
                fetchRequest: P.fetchRequest(where: predicate, sortedBy: sortDescriptors), context: self)
        ) { controller in try controller.fetchedObjects.map(P.init(entity:)) }
    }

    /// The objects `fetchRequest` matches now, then again each time the result changes (the
    /// kit's `rx.entities(fetchRequest:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.title)])
    /// for try await movies in context.entities(fetchRequest: request) {
    ///     print(movies.map(\.title))
    /// }
    /// ```
    public func entities<Model: ManagedObject>(fetchRequest: FetchRequest<Model>) -> FetchedResultsSequence<Model, [Model]> {
        FetchedResultsSequence(controller: FetchedResultsController(fetchRequest: fetchRequest, context: self)) {
            $0.fetchedObjects
        }
    }

    /// The sections of `fetchRequest`'s result grouped by `sectionNameKeyPath`, now and after
    /// each change (the kit's `rx.sections(fetchRequest:sectionNameKeyPath:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = FetchRequest<Movie>(sortDescriptors: [.ascending(\.year), .ascending(\.title)])
    /// for try await sections in context.sections(fetchRequest: request, sectionNameKeyPath: "year") {
    ///     print(sections.map { "\($0.name): \($0.numberOfObjects)" })
    /// }
    /// ```
    public func sections<Model: ManagedObject>(
        fetchRequest: FetchRequest<Model>, sectionNameKeyPath: String? = nil
    ) -> FetchedResultsSequence<Model, [FetchedResultsSection<Model>]> {
        FetchedResultsSequence(
            controller: FetchedResultsController(
                fetchRequest: fetchRequest, context: self, sectionNameKeyPath: sectionNameKeyPath)
        ) { $0.sections }
    }

    /// Stores `persistable`: updates the object its ``PersistableValue/predicate()`` finds
    /// (unsaved ones included), or inserts one. Never makes a duplicate. Does not save.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.upsert(login)
    /// try context.save()
    /// ```
    ///
    /// - Returns: The object written.
    @discardableResult
    public func upsert<P: PersistableValue>(_ persistable: P) throws -> P.Model {
        let object: P.Model
        if let existing = try existingObject(for: persistable) {
            object = existing
        } else {
            guard let entity = schema.entity(named: P.entityName) else {
                throw StrataError(
                    .unknownEntity, "The context's schema has no entity \(P.entityName) for \(P.self).",
                    entityName: P.entityName)
            }
            guard let created = (entity.objectType as? ManagedObject.Type ?? P.Model.self).init(entity: entity) as? P.Model
            else {
                throw StrataError(
                    .typeMismatch, "Entity \(P.entityName) is not stored as \(P.Model.self), the model of \(P.self).",
                    entityName: P.entityName)
            }
            insert(created)
            object = created
        }
        try persistable.update(object)
        return object
    }

    /// Deletes the object of `persistable` and saves the context, as the Rx kit's `delete`
    /// does. A value with no object is left alone (nothing is saved).
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.delete(login)   // deletes its object, if there is one, and saves
    /// ```
    ///
    /// - Throws: The fetch's or the save's error. When the save fails, the deletion stays
    ///   pending in the context with its other unsaved changes, as after any failed save: fix
    ///   the cause and save again, or roll back.
    public func delete<P: PersistableValue>(_ persistable: P) throws {
        guard let object = try existingObject(for: persistable) else { return }
        delete(object)
        try save()
    }

    /// Runs `updateAction` in a new child context, then saves the child and this context only
    /// if it changed anything. Errors propagate: one thrown by `updateAction` (or by the child's
    /// save) leaves this context untouched; when this context's save fails, the child's changes
    /// stay in it, unsaved, as in Core Data.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.performUpdate { child in
    ///     try child.upsert(login)
    /// }
    /// ```
    public func performUpdate(_ updateAction: (ObjectContext) throws -> Void) throws {
        let child = ObjectContext(parent: self)
        try updateAction(child)
        guard child.hasChanges else { return }
        try child.save()
        try save()
    }

    /// The object `persistable`'s predicate finds, if any.
    private func existingObject<P: PersistableValue>(for persistable: P) throws -> P.Model? {
        var request = FetchRequest<P.Model>(entityName: P.entityName, predicate: persistable.predicate())
        request.fetchLimit = 1
        return try fetch(request).first
    }
}

/// A fetched results controller's result, now and after each change, as an `AsyncSequence`
/// iterated in its context's isolation domain. Made by ``ObjectContext/entities(_:where:sortedBy:)``,
/// ``ObjectContext/entities(fetchRequest:)`` and ``ObjectContext/sections(fetchRequest:sectionNameKeyPath:)``.
///
/// Iterate it once: its controller fetches when iteration starts, and ending the iteration
/// releases the controller and its observations.
public struct FetchedResultsSequence<Model: ManagedObject, Element>: AsyncSequence {
    /// The error iteration can throw.
    public typealias Failure = any Error

    let controller: FetchedResultsController<Model>
    let transform: (FetchedResultsController<Model>) throws -> Element

    /// Starts iterating; the first element is the current result.
    public func makeAsyncIterator() -> Iterator { Iterator(controller: controller, transform: transform) }

    /// The iterator of a ``FetchedResultsSequence``.
    public struct Iterator: AsyncIteratorProtocol {
        let controller: FetchedResultsController<Model>
        let transform: (FetchedResultsController<Model>) throws -> Element
        private var registration: ContextQueryRegistration?
        private var triggers: AsyncStream<Void>.Iterator?
        private let flag = ChangeFlag<Model>()

        init(controller: FetchedResultsController<Model>, transform: @escaping (FetchedResultsController<Model>) throws -> Element) {
            self.controller = controller
            self.transform = transform
        }

        /// The next result, in the caller's isolation (the context's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
            guard let registration, var triggers else {
                // Other contexts' saves wake the iteration and are merged into the context
                // (unless it merges them itself); the controller follows the merge.
                let context = controller.managedObjectContext
                let registration = ContextQueryRegistration(
                    context: context, relevantEntities: context.container?.relevantEntities(for: controller.fetchRequest))
                self.registration = registration
                self.triggers = registration.triggers.makeAsyncIterator()
                controller.delegate = flag
                registration.mergeOtherSaves()
                try controller.performFetch()
                return try transform(controller)
            }
            defer { self.triggers = triggers }
            while await triggers.next(isolation: actor) != nil {
                try Task.checkCancellation()
                registration.mergeOtherSaves()
                if flag.changed {
                    flag.changed = false
                    return try transform(controller)
                }
            }
            return nil
        }

        /// The next result.
        public mutating func next() async throws -> Element? { try await next(isolation: nil) }
    }
}

/// What one live query on a context registers (other contexts' saves, the context's changes).
typealias ContextQueryRegistration = ContextLiveQuery<Bool>.Registration

/// Notes that a controller's result changed since it was last read.
private final class ChangeFlag<Model: ManagedObject>: FetchedResultsControllerDelegate {
    var changed = false
    func controllerDidChangeContent(_ controller: FetchedResultsController<Model>) { changed = true }
}

@available(*, unavailable, message: "A fetched results sequence is iterated in its context's isolation domain.")
extension FetchedResultsSequence: Sendable {}
