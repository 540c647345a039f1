import Foundation

/// A validated set of entities: the model a container, context and store work with.
///
/// Creating a schema checks the whole model at once and reports every problem in one
/// ``StrataError`` with code ``StrataError/Code/invalidSchema``: duplicate or reserved names,
/// names that differ only in letter case where SQL would take them for one (entities, the
/// columns of one table, join tables, indexes), unknown or cyclic parents, unknown
/// relationship destinations, missing or mismatched inverses, constraints and indexes on
/// unknown properties, default values of the wrong type and inconsistent validation rules.
/// Each problem is one entry in ``StrataError/details``, naming the entity and property.
///
/// A schema resolves what declarations leave implicit: inherited properties, and inverses
/// named on one side only (or on neither side, when two relationships are the only ones between
/// their entities).
///
/// ```swift
/// let schema = try Schema([movie, review], configurations: ["Cloud": ["Movie"]])
/// print(schema.versionHash)   // stable across declaration order
/// ```
///
/// Schemas are immutable and `Sendable`. Their ``serializedRepresentation()`` is what stores
/// keep in their metadata, so that a store can be read without the app's code.
public final class Schema: Sendable, CustomStringConvertible {
    /// The entities, in declaration order.
    public let entities: [Entity]
    /// Named subsets of entities (configuration name → entity names). Stores can be assigned
    /// per configuration; every entity is also in the implicit ``defaultConfigurationName``.
    public let configurations: [String: [String]]
    /// An optional label for this version of the model (Xcode's "model version identifier").
    public let versionIdentifier: String?
    /// A hash of everything that affects how objects are stored; the same model declared in a
    /// different order has the same hash.
    public let versionHash: String
    /// Things that are allowed but probably unintended, such as relationships without an inverse.
    public let warnings: [String]

    private let entitiesByName: [String: Entity]

    /// The name of the configuration that holds every entity.
    public static let defaultConfigurationName = "Default"

    /// Creates and validates a schema from entity declarations.
    ///
    /// - Parameters:
    ///   - entities: The entity declarations, in any order.
    ///   - configurations: Named subsets of entities.
    ///   - versionIdentifier: An optional label for this model version.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidSchema``, listing every
    ///   problem in ``StrataError/details``.
    public convenience init(
        _ entities: [EntityDescription],
        configurations: [String: [String]] = [:],
        versionIdentifier: String? = nil
    ) throws {
        try self.init(entities, configurations: configurations, versionIdentifier: versionIdentifier, objectTypes: [:])
    }

    convenience init(
        _ descriptions: [EntityDescription],
        configurations: [String: [String]],
        versionIdentifier: String?,
        objectTypes: [String: AnyClass],
        infersInverses: Bool = true
    ) throws {
        var resolver = SchemaResolver(
            descriptions, configurations: configurations, objectTypes: objectTypes, infersInverses: infersInverses)
        let resolution = resolver.resolve()
        if !resolution.problems.isEmpty {
            let count = resolution.problems.count
            let messages = resolution.problems.map { (problem: StrataError) in problem.message }
            throw StrataError(
                .invalidSchema,
                "The schema has \(count) problem\(count == 1 ? "" : "s"): " + messages.joined(separator: " "),
                details: resolution.problems)
        }
        self.init(resolution: resolution, configurations: configurations, versionIdentifier: versionIdentifier)
    }

    /// Builds a schema without rejecting problems; used for the per-class default entities of
    /// `@Entity` types, which must exist even when the wider model is still being written.
    static func lenient(_ descriptions: [EntityDescription], objectTypes: [String: AnyClass]) -> Schema {
        var resolver = SchemaResolver(descriptions, configurations: [:], objectTypes: objectTypes)
        let resolution = resolver.resolve()
        return Schema(resolution: resolution, configurations: [:], versionIdentifier: nil)
    }

    private init(resolution: SchemaResolver.Resolution, configurations: [String: [String]], versionIdentifier: String?) {
        self.entities = resolution.entities
        // Member order carries no meaning; sorting it keeps descriptions and the serialized form
        // independent of declaration order.
        self.configurations = configurations.mapValues { $0.sorted() }
        self.versionIdentifier = versionIdentifier
        self.warnings = resolution.warnings
        self.entitiesByName = Dictionary(
            resolution.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.versionHash = VersionHasher.schemaHash(entityHashes: resolution.entities.map { ($0.name, $0.versionHash) })
    }

    /// The entity named `name`.
    public func entity(named name: String) -> Entity? { entitiesByName[name] }

    /// The entity named `name`, or an ``StrataError/Code/unknownEntity`` error that suggests
    /// the closest name the schema has.
    func existingEntity(named name: String) throws -> Entity {
        if let entity = entitiesByName[name] { return entity }
        throw StrataError(
            .unknownEntity, "The schema has no entity named '\(name)'." + didYouMean(name, in: entities.map(\.name)),
            entityName: name)
    }

    /// The entity named `name`.
    public subscript(entityName name: String) -> Entity? { entitiesByName[name] }

    /// The entity declarations this schema was built from.
    public var entityDescriptions: [EntityDescription] { entities.map(\.declaration) }

    /// The entities of a configuration (all entities for ``defaultConfigurationName`` or an
    /// unknown name).
    public func entities(inConfiguration name: String) -> [Entity] {
        guard let names = configurations[name] else { return entities }
        let members = Set(names)
        return entities.filter { members.contains($0.name) }
    }

    /// A readable rendering, for logs, messages and tools.
    public var description: String {
        var text = "schema \(versionIdentifier.map { "\($0) " } ?? "")(\(versionHash.prefix(12)))\n"
        text += entities.map(\.description).joined(separator: "\n")
        for (name, members) in configurations.sorted(by: { $0.key < $1.key }) {
            text += "\nconfiguration \(name): \(members.sorted().joined(separator: ", "))"
        }
        return text
    }
}

extension AttributeValue {
    /// Orders two values of the same kind (numbers, strings, dates, UUIDs, Booleans); `nil`
    /// when they cannot be compared.
    public static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return order(a, b)
        case (.double(let a), .double(let b)): return order(a, b)
        case (.float(let a), .float(let b)): return order(a, b)
        case (.decimal(let a), .decimal(let b)): return order(a, b)
        case (.string(let a), .string(let b)): return order(a, b)
        case (.date(let a), .date(let b)): return order(a, b)
        case (.boolean(let a), .boolean(let b)): return order(a ? 1 : 0, b ? 1 : 0)
        case (.uuid(let a), .uuid(let b)): return order(a.uuidString, b.uuidString)
        default:
            guard let a = lhs.numericValue, let b = rhs.numericValue else { return nil }
            return order(a, b)
        }
    }

    var numericValue: Decimal? {
        switch self {
        case .integer(let value): Decimal(value)
        case .double(let value): Decimal(value)
        case .float(let value): Decimal(Double(value))
        case .decimal(let value): value
        default: nil
        }
    }
}
