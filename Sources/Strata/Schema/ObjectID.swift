import Foundation

/// A `Sendable` identifier of one managed object, valid across contexts.
///
/// A new object has a *temporary* ID until it is saved; saving assigns a *permanent* ID made
/// of the store's identifier and the row's primary key. IDs are the only way objects cross
/// isolation domains: pass the ID, then look the object up in the other context.
///
/// Every ID has a URI form, `strata://<store>/<Entity>/p<key>` (temporary IDs:
/// `strata://temporary/<Entity>/t<UUID>`), that survives archiving and can be turned back into
/// an ID with ``init(uriRepresentation:)``.
public struct ObjectID: Sendable, Hashable, Codable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case temporary(UUID)
        case permanent(Int64)
    }

    /// The name of the object's entity.
    public let entityName: String
    /// The identifier of the store that holds the object; `nil` for temporary IDs.
    public let storeIdentifier: String?
    let key: Key
    /// A hash of ``entityName``, computed once per ID, so that hashing an ID never hashes a
    /// string and IDs of different entities with the same primary key still hash apart (an
    /// identity map holding many entities' objects would otherwise probe long runs of equal
    /// hashes).
    package let entityNameHash: UInt64

    init(
        entityName: String, entityNameHash: UInt64? = nil, temporary uuid: UUID = TemporaryIDSource.shared.next()
    ) {
        self.entityName = entityName
        self.storeIdentifier = nil
        self.key = .temporary(uuid)
        self.entityNameHash = entityNameHash ?? Self.hash(ofEntityName: entityName)
    }

    /// A permanent ID. Pass `entityNameHash` (``Entity/nameHash``) on per-row paths, so that
    /// the name is not hashed again for every row.
    package init(entityName: String, entityNameHash: UInt64? = nil, storeIdentifier: String, primaryKey: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.key = .permanent(primaryKey)
        self.entityNameHash = entityNameHash ?? Self.hash(ofEntityName: entityName)
    }

    /// The name's own hash value: equal for names that compare equal, canonically equivalent
    /// Unicode spellings included (a byte hash would tell "Café" in NFC and NFD apart, while
    /// `==` does not). Seeded per process, which is all `Hashable` needs.
    package static func hash(ofEntityName name: String) -> UInt64 {
        UInt64(bitPattern: Int64(name.hashValue))
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The row's primary key in its store, for permanent IDs.
    public var primaryKey: Int64? {
        if case .permanent(let value) = key { return value }
        return nil
    }

    /// The URI form of the ID.
    public var uriRepresentation: URL {
        var components = URLComponents()
        components.scheme = "strata"
        switch key {
        case .temporary(let uuid):
            components.host = "temporary"
            components.path = "/\(entityName)/t\(uuid.uuidString)"
        case .permanent(let primaryKey):
            components.host = storeIdentifier
            components.path = "/\(entityName)/p\(primaryKey)"
        }
        // Entity names are identifiers and store identifiers UUID strings, so this always succeeds.
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Creates an ID from its URI form; `nil` when `uri` is not a Strata object URI.
    public init?(uriRepresentation uri: URL) {
        guard uri.scheme == "strata", let host = uri.host, !host.isEmpty else { return nil }
        let parts = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, let tag = parts[1].first else { return nil }
        let entityName = String(parts[0])
        let rest = String(parts[1].dropFirst())
        switch (host, tag) {
        case ("temporary", "t"):
            guard let uuid = UUID(uuidString: rest) else { return nil }
            self.init(entityName: entityName, temporary: uuid)
        case (_, "p"):
            guard host != "temporary", let primaryKey = Int64(rest) else { return nil }
            self.init(entityName: entityName, storeIdentifier: host, primaryKey: primaryKey)
        default:
            return nil
        }
    }

    /// A readable rendering, for logs, messages and tools.
    public var description: String { uriRepresentation.absoluteString }
}

extension ObjectID {
    /// Whether two IDs name the same object. The key and the name's hash are compared first:
    /// they differ between almost any two IDs and are the cheapest parts.
    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.key == rhs.key && lhs.entityNameHash == rhs.entityNameHash && lhs.entityName == rhs.entityName
            && lhs.storeIdentifier == rhs.storeIdentifier
    }

    /// Hashes one word made of the key and the entity name's precomputed hash (or a temporary
    /// ID's UUID, unique on its own): contexts hash an ID for every object they register, so
    /// no string is hashed here.
    public func hash(into hasher: inout Hasher) {
        switch key {
        case .permanent(let primaryKey): hasher.combine(UInt64(bitPattern: primaryKey) &+ entityNameHash)
        case .temporary(let uuid): hasher.combine(uuid)
        }
    }

    /// Encodes the ID as its URI string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation.absoluteString)
    }

    /// Decodes an ID from its URI string.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the string is not a Strata object URI.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = URL(string: text), let objectID = ObjectID(uriRepresentation: url) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a Strata object ID URI.")
        }
        self = objectID
    }
}

/// Makes the UUIDs of temporary IDs: a random prefix drawn once per process and a counter.
/// Unique within the process (and, with 64 random bits, across processes in practice), and far
/// cheaper than a random UUID per new object.
final class TemporaryIDSource: Sendable {
    static let shared = TemporaryIDSource()

    private let prefix: UInt64
    private let counter = LockedBox<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        prefix = generator.next()
    }

    func next() -> UUID {
        let count = counter.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        var bytes = (prefix.bigEndian, count.bigEndian)
        return withUnsafeBytes(of: &bytes) { raw in
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            return UUID(uuid: uuid)
        }
    }
}
