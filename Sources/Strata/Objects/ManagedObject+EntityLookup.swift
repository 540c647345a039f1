/// The stack kit's entity lookup by class: making objects, fetch requests and entity names from
/// the class alone.
extension ManagedObject {
    /// Creates a new object of the class's entity in `context`'s schema and inserts it (the stack
    /// kit's `init(insertingInto:)`), throwing where ``init(context:)`` traps.
    ///
    /// For example:
    ///
    /// ```swift
    /// let movie = try Movie(insertingInto: context)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/unknownEntity`` when the context's schema has no entity for
    ///   the class (or the class is not an `@Entity` class), ``StrataError/Code/abstractEntity``
    ///   for an abstract entity.
    public convenience init(insertingInto context: ObjectContext) throws {
        try self.init(context: context, insert: true)
    }

    /// Creates a new object of the class's entity in `context`'s schema, inserting it only when
    /// `insert` is `true` (the stack kit's `init(context:insert:)`); an object not inserted
    /// joins a context when inserted or related to an object of one.
    ///
    /// For example:
    ///
    /// ```swift
    /// let draft = try Movie(context: context, insert: false)   // in no context yet
    /// draft.title = "Heat"
    /// if !draft.title.isEmpty { context.insert(draft) }
    /// ```
    ///
    /// - Throws: As ``init(insertingInto:)``.
    public convenience init(context: ObjectContext, insert: Bool) throws {
        self.init(entity: try Self.insertableEntity(in: context))
        if insert { context.insert(self) }
    }

    /// The class's entity in `context`'s schema, if objects of it can be created there.
    static func insertableEntity(in context: ObjectContext) throws -> Entity {
        guard entityDescription != nil, let entity = context.schemaEntity(for: self.entity) else {
            throw StrataError(
                .unknownEntity,
                "The context's schema has no entity for \(self); declare it with @Entity and add it to the container's schema.")
        }
        guard !entity.isAbstract else {
            throw StrataError(
                .abstractEntity, "\(entity.name) is abstract: create an object of one of its subentities.", entityName: entity.name)
        }
        return entity
    }
}

extension EntityModel {
    /// The name of the class's entity (the kits' `entityName()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// Movie.entityName()   // "Movie"
    /// ```
    public static func entityName() -> String { entity.name }

    /// A fetch request for the class's objects, with no predicate and no sort (the stack kit's
    /// `makeFetchRequest()`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = Movie.makeFetchRequest()
    /// ```
    public static func makeFetchRequest() -> FetchRequest<Self> { FetchRequest<Self>() }
}
