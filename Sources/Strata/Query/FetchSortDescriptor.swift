import Foundation

/// How a sort descriptor compares strings.
public enum SortComparison: String, Sendable, Hashable, CaseIterable {
    /// By Unicode scalar values (SQLite's `BINARY`): "B" before "a", "a10" before "a9".
    case standard
    /// Case-folded first ("a" and "A" together), then by scalar values.
    case caseInsensitive
    /// As the Finder sorts: case- and diacritic-insensitive, numbers by value ("a9" before "a10").
    case localizedStandard
}

/// One sort key of a fetch: a key path, a direction and a string comparison.
///
/// The key is an attribute of the fetched entity or of an object reached through to-one
/// relationships (`"director.name"`). Objects with no value (`nil`, or an empty relationship on
/// the way) sort **before** every value in ascending order and after every value in descending
/// order, as in Core Data's SQLite store. Objects that tie on every key keep the order they were
/// saved in (inserted, unsaved objects after saved ones).
public struct QuerySortDescriptor: Sendable, Hashable {
    /// The dotted key path to sort by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: SortComparison

    /// Creates a sort descriptor for a key.
    public init(key: String, ascending: Bool = true, comparison: SortComparison = .standard) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }
}

/// A sort key for the objects of one model class.
///
/// ```swift
/// let newestFirst: [FetchSortDescriptor<Movie>] = [.descending(\.releaseDate), .ascending(\.title, comparison: .localizedStandard)]
/// let byDirector = FetchSortDescriptor<Movie>(key: "director.name")
/// ```
public struct FetchSortDescriptor<Model: EntityModel>: Sendable, Hashable {
    /// The untyped descriptor that stores receive.
    public var descriptor: QuerySortDescriptor

    /// The key the descriptor sorts by (`NSSortDescriptor.key`).
    public var key: String { descriptor.key }
    /// Whether smaller values come first (`NSSortDescriptor.ascending`).
    public var ascending: Bool { descriptor.ascending }

    /// Creates a sort descriptor from a key (a dotted key path through to-one relationships).
    public init(key: String, ascending: Bool = true, comparison: SortComparison = .standard) {
        descriptor = QuerySortDescriptor(key: key, ascending: ascending, comparison: comparison)
    }

    /// Creates a sort descriptor from a key path such as `\Movie.title` or `\Movie.director?.name`.
    public init<Value>(_ keyPath: KeyPath<Model, Value>, ascending: Bool = true, comparison: SortComparison = .standard)
    {
        self.init(key: KeyPathNames.name(of: keyPath, root: Model.self), ascending: ascending, comparison: comparison)
    }

    /// Smaller values first.
    public static func ascending<Value>(_ keyPath: KeyPath<Model, Value>, comparison: SortComparison = .standard)
        -> Self
    {
        Self(keyPath, ascending: true, comparison: comparison)
    }

    /// Larger values first.
    public static func descending<Value>(_ keyPath: KeyPath<Model, Value>, comparison: SortComparison = .standard)
        -> Self
    {
        Self(keyPath, ascending: false, comparison: comparison)
    }
}

/// Turns Swift key paths into the dotted names predicates and sort descriptors use.
enum KeyPathNames {
    /// `\Movie.title` → `"title"`, `\Movie.director?.name` → `"director.name"`.
    ///
    /// The `@Entity` table names single properties. A longer path is split into its
    /// components by the accessors its description names, each looked up in the table of the
    /// class the previous relationship leads to. A key path that names no stored property gives
    /// a name the schema does not have, which a fetch reports as ``StrataError/Code/unknownKey``.
    static func name(of keyPath: AnyKeyPath, root: any EntityModel.Type) -> String {
        if let name = root.propertyName(for: keyPath) { return name }
        let description = keyPath.debugDescription
        var type: (any EntityModel.Type)? = root
        var names: [String] = []
        for component in components(of: description) {
            guard let current = type, let name = accessorNames(of: current)[component] else { return description }
            names.append(name)
            let destination = current.entity.relationship(named: name)?.destinationEntityName
            type = destination.flatMap { name in current._relatedEntityModels.first { $0.entityDescription?.name == name }
            }
        }
        return names.isEmpty ? description : names.joined(separator: ".")
    }

    /// The accessor identities (`0x...` in `<computed 0x... (Type)>`) in a key path's
    /// description, or the plain names of stored properties.
    static func components(of description: String) -> [String] {
        guard let first = description.range(of: "<computed ") else {
            return description.split(separator: ".").dropFirst().map { String($0.filter { $0 != "?" && $0 != "!" }) }
        }
        var result: [String] = []
        var rest = description[first.lowerBound...]
        while let start = rest.range(of: "<computed ") {
            let afterStart = rest[start.upperBound...]
            result.append(String(afterStart.prefix { $0 != " " && $0 != ">" }))
            guard let end = afterStart.firstIndex(of: ">") else { break }
            rest = afterStart[afterStart.index(after: end)...]
        }
        return result
    }

    private static let cache = LockedBox<[ObjectIdentifier: [String: String]]>([:])

    /// Accessor identity → property name, for one class.
    static func accessorNames(of type: any EntityModel.Type) -> [String: String] {
        if let names = cache.withLock({ $0[ObjectIdentifier(type)] }) { return names }
        var names: [String: String] = [:]
        for (keyPath, name) in type._keyPathNames {
            for component in components(of: keyPath.debugDescription).suffix(1) { names[component] = name }
        }
        cache.withLock { $0[ObjectIdentifier(type)] = names }
        return names
    }
}
