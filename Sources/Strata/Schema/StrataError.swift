import Foundation

/// An error thrown by Strata.
///
/// Every error carries a stable ``code`` that callers can match on, a human-readable
/// ``message`` that says what happened and how to fix it, and as much context as is known:
/// the entity, the property, the object ID, a position in a file, and the underlying error.
/// Errors that gather several problems (an invalid schema, a failed validation) list them in
/// ``details``, each a `StrataError` of its own.
///
/// ```swift
/// do {
///     try object.setValue("ten", forKey: "year")
/// } catch let error as StrataError where error.code == .typeMismatch {
///     print(error.message)   // "Movie.year is an Integer 16 attribute; got a value of type String."
/// }
/// ```
public struct StrataError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier for a kind of error.
    ///
    /// Codes are compared by their raw value, which never changes once released.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable string value of the code.
        public let rawValue: String

        /// Creates a code from its raw value.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A readable rendering, for logs, messages and tools.
        public var description: String { rawValue }
    }

    /// What kind of error this is.
    public var code: Code
    /// What happened, in what context, and how to fix it.
    public var message: String
    /// The entity involved, if any.
    public var entityName: String?
    /// The attribute or relationship involved, if any.
    public var propertyName: String?
    /// The object involved, if any.
    public var objectID: ObjectID?
    /// The 1-based line in a file or string where the problem was found, if any.
    public var line: Int?
    /// The 0-based character offset in a string (a predicate format string, say) where the
    /// problem was found, if any.
    public var offset: Int?
    /// The file involved, if any.
    public var fileURL: URL?
    /// The SQL statement that failed, if any, as prepared: its values are bound parameters and
    /// never part of the text (values can be private data).
    public var sql: String?
    /// The individual problems, for errors that gather several (``Code/invalidSchema``,
    /// ``Code/validationFailed``).
    public var details: [StrataError]
    /// The error that caused this one, if any.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        entityName: String? = nil,
        propertyName: String? = nil,
        objectID: ObjectID? = nil,
        line: Int? = nil,
        offset: Int? = nil,
        fileURL: URL? = nil,
        sql: String? = nil,
        details: [StrataError] = [],
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entityName
        self.propertyName = propertyName
        self.objectID = objectID
        self.line = line
        self.offset = offset
        self.fileURL = fileURL
        self.sql = sql
        self.details = details
        self.underlyingError = underlyingError
    }

    /// A readable rendering, for logs, messages and tools.
    public var description: String {
        var text = "[\(code.rawValue)] \(message)"
        if let sql { text += "\n  in SQL: \(sql)" }
        for detail in details {
            text += "\n  - " + detail.description.replacingOccurrences(of: "\n", with: "\n    ")
        }
        if let underlyingError {
            text += "\n  caused by: \(underlyingError)"
        }
        return text
    }
}

extension StrataError: LocalizedError {
    /// The error's full description, for `localizedDescription`.
    public var errorDescription: String? { description }
}

extension StrataError.Code {
    // MARK: Schema

    /// A schema failed validation; ``StrataError/details`` lists every problem.
    public static let invalidSchema = Self(rawValue: "invalidSchema")
    /// Two entities, or two properties of one entity (inherited ones included), share a name.
    public static let duplicateName = Self(rawValue: "duplicateName")
    /// Names differ only in letter case where a store would take them for one: entities, the
    /// columns of one table (the attributes and to-one relationships of an entity and of the
    /// entities that share its table), the join tables of one entity's to-many relationships, or
    /// one entity's indexes. SQLite compares names ignoring the case of ASCII letters.
    public static let identifierCollision = Self(rawValue: "identifierCollision")
    /// A name is reserved by Strata or SQLite, or is not a valid identifier.
    public static let reservedName = Self(rawValue: "reservedName")
    /// An entity names a parent entity that does not exist.
    public static let unknownSuperentity = Self(rawValue: "unknownSuperentity")
    /// Entities inherit from each other in a cycle.
    public static let inheritanceCycle = Self(rawValue: "inheritanceCycle")
    /// A relationship's destination entity does not exist.
    public static let unknownDestination = Self(rawValue: "unknownDestination")
    /// A relationship names an inverse that does not exist in its destination.
    public static let missingInverse = Self(rawValue: "missingInverse")
    /// A relationship and its inverse do not point back at each other.
    public static let mismatchedInverse = Self(rawValue: "mismatchedInverse")
    /// A uniqueness constraint or index names a property that does not exist or cannot be used.
    public static let unknownConstraintProperty = Self(rawValue: "unknownConstraintProperty")
    /// A default value does not match its attribute's type.
    public static let invalidDefaultValue = Self(rawValue: "invalidDefaultValue")
    /// A validation rule is inconsistent (minimum above maximum, a bad regular expression, a
    /// rule that does not apply to the attribute's type).
    public static let invalidValidationRule = Self(rawValue: "invalidValidationRule")
    /// A configuration lists an entity that does not exist.
    public static let unknownConfigurationEntity = Self(rawValue: "unknownConfigurationEntity")
    /// A serialized schema could not be decoded.
    public static let corruptSchema = Self(rawValue: "corruptSchema")

    // MARK: Model files

    /// A model file is not well-formed XML or not a Core Data model.
    public static let malformedModelFile = Self(rawValue: "malformedModelFile")
    /// A model file or bundle could not be read.
    public static let modelFileNotFound = Self(rawValue: "modelFileNotFound")

    // MARK: Objects

    /// An entity name names no entity of the schema or of the store (a fetch request for
    /// `"Moive"`, say); the message suggests the closest name when there is one.
    public static let unknownEntity = Self(rawValue: "unknownEntity")
    /// A key names no attribute or relationship of the entity.
    public static let unknownKey = Self(rawValue: "unknownKey")
    /// A value has the wrong type for the attribute or relationship.
    public static let typeMismatch = Self(rawValue: "typeMismatch")
    /// A number does not fit the attribute's type.
    public static let valueOutOfRange = Self(rawValue: "valueOutOfRange")
    /// One or more validation rules failed; ``StrataError/details`` lists every failure.
    public static let validationFailed = Self(rawValue: "validationFailed")
    /// A value no store can keep exactly: a floating-point or decimal NaN, or a negative zero
    /// (SQLite stores it as zero). Refused at validation rather than changed on the way.
    public static let unrepresentableValue = Self(rawValue: "unrepresentableValue")
    /// A non-optional attribute or to-one relationship has no value.
    public static let missingValue = Self(rawValue: "missingValue")
    /// A value is below the attribute's minimum (value or length) or above its maximum.
    public static let valueTooSmall = Self(rawValue: "valueTooSmall")
    /// A value is above the attribute's maximum (value or length).
    public static let valueTooLarge = Self(rawValue: "valueTooLarge")
    /// A string does not match the attribute's regular expression.
    public static let patternMismatch = Self(rawValue: "patternMismatch")
    /// A to-many relationship holds fewer or more objects than its minimum or maximum count.
    public static let relationshipCountOutOfRange = Self(rawValue: "relationshipCountOutOfRange")
    /// An object ID or its URI representation names no object.
    public static let objectNotFound = Self(rawValue: "objectNotFound")
    /// An object was used with a context it does not belong to, or with an entity of another model.
    public static let wrongContext = Self(rawValue: "wrongContext")
    /// An object that was deleted was used.
    public static let objectDeleted = Self(rawValue: "objectDeleted")
    /// An abstract entity cannot have instances.
    public static let abstractEntity = Self(rawValue: "abstractEntity")

    // MARK: Stores

    /// The file is not a Strata store (another SQLite database, or not a database at all); it
    /// was not modified.
    public static let notAStore = Self(rawValue: "notAStore")
    /// The store file is damaged (truncated or corrupt); it was not modified.
    public static let corruptStore = Self(rawValue: "corruptStore")
    /// The store was written with another schema; ``StrataError/details`` lists the
    /// differences. Migrate the store or open it with its own schema.
    public static let incompatibleSchema = Self(rawValue: "incompatibleSchema")
    /// The store cannot be created or written at its location (read-only file or folder).
    public static let storeNotWritable = Self(rawValue: "storeNotWritable")
    /// The store is in use in a way that excludes the operation: a migration while a container
    /// has the store open, or opening a store while it migrates. Try again once the other
    /// side is done.
    public static let storeInUse = Self(rawValue: "storeInUse")
    /// The database reported an error; ``StrataError/underlyingError`` holds it.
    public static let storeError = Self(rawValue: "storeError")
    /// A row changed or disappeared since the object was read (optimistic locking).
    public static let optimisticLockingFailure = Self(rawValue: "optimisticLockingFailure")
    /// Saving would give two objects the same values for a uniqueness constraint.
    public static let constraintConflict = Self(rawValue: "constraintConflict")
    /// A deny delete rule refused a deletion while related objects exist.
    public static let deleteDenied = Self(rawValue: "deleteDenied")
    /// A predicate format string is malformed, or a predicate is used where it cannot apply;
    /// ``StrataError/offset`` gives the position in the string when there is one.
    public static let invalidPredicate = Self(rawValue: "invalidPredicate")
    /// A Foundation `#Predicate` uses a construct Strata cannot translate; the message names it.
    public static let unsupportedPredicate = Self(rawValue: "unsupportedPredicate")
    /// The container or store was closed.
    public static let storeClosed = Self(rawValue: "storeClosed")
    /// The context has no store for the object's entity.
    public static let noStore = Self(rawValue: "noStore")
    /// No open store has the name (and configuration) asked for
    /// (``PersistentContainer/removePersistentStore(named:configurationName:)``).
    public static let storeNotFound = Self(rawValue: "storeNotFound")
    /// A history token points before the oldest transaction the store still keeps: history
    /// after it was pruned, so a reader starting there would miss changes (Core Data's
    /// `NSPersistentHistoryTokenExpiredError`). Refetch what you show from the store, then go
    /// on from ``PersistentContainer/currentHistoryToken()``.
    public static let historyTokenExpired = Self(rawValue: "historyTokenExpired")
    /// Persistent history was asked of a store that does not track it (open the store with
    /// ``StoreDescription/isPersistentHistoryTrackingEnabled``), or a history token belongs to
    /// another store.
    public static let persistentHistoryUnavailable = Self(rawValue: "persistentHistoryUnavailable")
    /// A schema change a lightweight migration cannot infer (a type change, two entity
    /// hierarchies becoming one, a required attribute with no value for stored objects); the
    /// message names it. Migrate it in a custom stage.
    public static let unsupportedMigration = Self(rawValue: "unsupportedMigration")
    /// A migration could not run: no path of stages leads from the store's version to the
    /// target, the store matches no known version, or a stage's own code failed (its error is
    /// the underlying error). The store is left as it was.
    public static let migrationFailed = Self(rawValue: "migrationFailed")
}

extension StrataError {
    /// The messages of `errors` as one sentence run for a summary message: the first
    /// `limit`, then how many more there are (the full list stays in ``details``), so that a
    /// save refusing a million objects does not make a message of a million sentences.
    static func summary(of errors: [StrataError], limit: Int = 5) -> String {
        let shown = errors.prefix(limit).map(\.message).joined(separator: " ")
        guard errors.count > limit else { return shown }
        return shown + " … and \(errors.count - limit) more (see details)."
    }
}
