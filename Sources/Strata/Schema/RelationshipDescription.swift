/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Remove the deleted object from the related objects' inverse relationship.
    case nullify
    /// Delete the related objects too.
    case cascade
    /// Refuse the deletion (a validation error) while related objects exist.
    case deny
    /// Do nothing; the related objects keep pointing at the deleted object.
    case noAction

    /// The name Xcode writes in a model file's `deletionRule` attribute.
    public var xcodeName: String {
        switch self {
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        case .noAction: "No Action"
        }
    }

    /// Creates a delete rule from the name Xcode writes in model files.
    public init?(xcodeName: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = match
    }
}

/// The declaration of one relationship of an entity.
///
/// ```swift
/// let reviews = RelationshipDescription(
///     name: "reviews", destination: "Review", inverse: "movie",
///     isToMany: true, deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Hashable, Codable {
    /// The relationship's name, unique among the entity's properties (inherited ones included).
    public var name: String
    /// The name of the entity at the other end.
    public var destinationEntityName: String
    /// The name of the relationship in the destination that points back, if any.
    ///
    /// When neither side names its inverse, ``Schema`` pairs two relationships that are each
    /// the only one between the two entities.
    public var inverseName: String?
    /// Whether the relationship holds many objects.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its objects in order.
    public var isOrdered: Bool
    /// Whether a to-one relationship may be `nil` (to-many relationships may always be empty
    /// unless ``minimumCount`` says otherwise).
    public var isOptional: Bool
    /// The fewest related objects a to-many relationship may hold (0 for no minimum).
    public var minimumCount: Int
    /// The most related objects a to-many relationship may hold (0 for no maximum).
    public var maximumCount: Int
    /// What happens to related objects when the source object is deleted.
    public var deleteRule: DeleteRule
    /// Whether the relationship lives only in memory.
    public var isTransient: Bool
    /// The relationship's name in the previous schema version.
    public var renamingIdentifier: String?

    /// Creates a relationship description.
    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        isToMany: Bool = false,
        isOrdered: Bool = false,
        isOptional: Bool = true,
        minimumCount: Int = 0,
        maximumCount: Int = 0,
        deleteRule: DeleteRule = .nullify,
        isTransient: Bool = false,
        renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.deleteRule = deleteRule
        self.isTransient = isTransient
        self.renamingIdentifier = renamingIdentifier
    }

    /// The relationship's kind in words, for messages and tools: "to-one", "to-many" or
    /// "ordered to-many".
    public var kindName: String {
        isToMany ? (isOrdered ? "ordered to-many" : "to-many") : "to-one"
    }
}
