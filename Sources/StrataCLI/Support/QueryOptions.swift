import ArgumentParser
import Foundation
import Strata

/// Which objects a command reads and how it shows them: shared by `query`, `watch` and the
/// shell.
struct QueryOptions: ParsableArguments {
    @Option(
        name: [.customLong("where"), .customShort("w")],
        help: ArgumentHelp(
            "A predicate in Core Data's format-string language, with key paths through relationships.",
            valueName: "predicate"))
    var predicate: String?

    @Option(
        name: [.customLong("sort"), .customShort("s")], parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "A key to sort by; -key for descending, key[c] to ignore case (repeat for ties).", valueName: "key"))
    var sortKeys: [String] = []

    @Option(name: [.customLong("limit"), .customShort("n")], help: "At most this many objects (or groups).")
    var limit: Int?

    @Option(help: "Skip this many objects (or groups) first.")
    var offset: Int?

    @Option(
        name: .customLong("select"),
        help: ArgumentHelp(
            "The key paths to show, comma-separated (default: the id, every attribute and to-one relationship).",
            valueName: "keys"))
    var selection: String?

    @Flag(help: "Print how many objects match.")
    var count = false

    @Option(help: ArgumentHelp("Print the sum of an attribute.", valueName: "key"))
    var sum: String?

    @Option(name: [.customLong("avg"), .customLong("average", withSingleDash: false)], help: ArgumentHelp("Print the average of an attribute.", valueName: "key"))
    var average: String?

    @Option(help: ArgumentHelp("Print the smallest value of an attribute.", valueName: "key"))
    var min: String?

    @Option(help: ArgumentHelp("Print the largest value of an attribute.", valueName: "key"))
    var max: String?

    @Option(
        name: .customLong("group-by"),
        help: ArgumentHelp("Group by this key path: one row per group with its aggregates (repeat for several).", valueName: "key"))
    var groupBy: [String] = []

    @Flag(help: "Leave out objects of subentities.")
    var excludingSubentities = false

    /// Whether the options ask for aggregates rather than objects.
    var isAggregate: Bool { count || sum != nil || average != nil || min != nil || max != nil || !groupBy.isEmpty }

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more.") }
        if let offset, offset < 0 { throw ValidationError("--offset must be 0 or more.") }
        if selection != nil && isAggregate && groupBy.isEmpty {
            throw ValidationError("--select shows objects; --count, --sum, --avg, --min and --max show totals. Choose one.")
        }
    }
}

/// A query the tool runs: options resolved against a store's schema, checked before anything
/// is read.
struct StoreQuery {
    let entity: Entity
    let plan: FetchPlan
    let options: QueryOptions
    let predicateText: String?

    /// Resolves `options` for `entityName` in `store`.
    ///
    /// - Throws: ``CommandFailure`` with the predicate and a caret under the problem, for bad
    ///   predicates, unknown keys and entities.
    init(entityName: String, options: QueryOptions, store: OpenedStore) throws {
        entity = try store.entity(named: entityName)
        self.options = options
        predicateText = options.predicate
        let predicate: QueryPredicate?
        do {
            predicate = try options.predicate.map { try QueryPredicate(format: $0) }
        } catch let error as StrataError {
            throw Self.predicateFailure(error, in: options.predicate ?? "")
        }
        let sorts = try options.sortKeys.map(Self.sortDescriptor)
        do {
            var request = StoreFetchRequest(
                entityName: entity.name, includesSubentities: !options.excludingSubentities, predicate: predicate,
                sortDescriptors: sorts)
            if !options.isAggregate || !options.groupBy.isEmpty {
                request.fetchLimit = options.limit
                request.fetchOffset = options.offset ?? 0
            }
            plan = try FetchPlan(request, in: store.schema)
        } catch let error as StrataError {
            throw Self.predicateFailure(error, in: options.predicate ?? "")
        }
    }

    /// `key`, `-key` (descending) and `key[c]` (ignoring case).
    static func sortDescriptor(_ text: String) throws -> QuerySortDescriptor {
        var key = Substring(text)
        var ascending = true
        if key.hasPrefix("-") {
            ascending = false
            key = key.dropFirst()
        } else if key.hasPrefix("+") {
            key = key.dropFirst()
        }
        var comparison = SortComparison.standard
        if key.hasSuffix("[c]") {
            comparison = .caseInsensitive
            key = key.dropLast(3)
        } else if key.hasSuffix("[l]") {
            comparison = .localizedStandard
            key = key.dropLast(3)
        }
        guard !key.isEmpty else { throw CommandFailure("'\(text)' is not a sort key; write key, -key or key[c].") }
        return QuerySortDescriptor(key: String(key), ascending: ascending, comparison: comparison)
    }

    /// The aggregate columns the options ask for, named as they are shown.
    var aggregateColumns: [FetchedProperty] {
        var columns: [FetchedProperty] = []
        if options.count || (!options.groupBy.isEmpty && options.sum == nil && options.average == nil && options.min == nil && options.max == nil) {
            columns.append(.count(as: "count"))
        }
        if let key = options.sum { columns.append(.sum(key, as: "sum(\(key))")) }
        if let key = options.average { columns.append(.average(key, as: "avg(\(key))")) }
        if let key = options.min { columns.append(.min(key, as: "min(\(key))")) }
        if let key = options.max { columns.append(.max(key, as: "max(\(key))")) }
        return columns
    }

    /// Runs the query, handing `writer` its columns and rows.
    ///
    /// - Returns: The number of rows written.
    @discardableResult
    func run(on store: OpenedStore, into writer: inout some RecordWriter) throws -> Int {
        do {
            return try runUnchecked(on: store, into: &writer)
        } catch let error as StrataError {
            throw Self.predicateFailure(error, in: predicateText ?? "")
        }
    }

    private func runUnchecked(on store: OpenedStore, into writer: inout some RecordWriter) throws -> Int {
        let persistentStore = store.store
        if options.isAggregate {
            if options.count && options.groupBy.isEmpty && aggregateColumns.count == 1 {
                try writer.begin(columns: ["count"])
                try writer.write([.integer(Int64(try persistentStore.count(plan)))])
                try writer.finish()
                return 1
            }
            let aggregates = aggregateColumns
            return try writeValues(
                names: options.groupBy + aggregates.map(\.name),
                request: StoreValuesRequest(
                    plan: plan, columns: options.groupBy.map { .property($0) } + aggregates.map(\.column),
                    groupBy: options.groupBy),
                of: persistentStore, into: &writer)
        }
        if let selection = options.selection {
            let keys = selection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return try writeValues(
                names: keys, request: StoreValuesRequest(plan: plan, columns: keys.map { .property($0) }),
                of: persistentStore, into: &writer)
        }
        var columns = RowColumns(entity: entity, schema: store.schema)
        try writer.begin(columns: columns.names)
        var count = 0
        try persistentStore.fetch(plan) { rows in
            for row in rows { try writer.write(columns.values(of: row)) }
            count += rows.count
        }
        try writer.finish()
        return count
    }

    /// Writes the rows of a values request under `names`; returns how many.
    private func writeValues(
        names: [String], request: StoreValuesRequest, of store: any PersistentStore, into writer: inout some RecordWriter
    ) throws -> Int {
        let rows = try store.fetchValues(request)
        try writer.begin(columns: names)
        for row in rows { try writer.write(row.map { $0 }) }
        try writer.finish()
        return rows.count
    }

    /// A failure for a predicate error: one line with the offset of the problem (the error's, or
    /// where an unknown key appears); on a terminal, the predicate follows with a caret under it.
    static func predicateFailure(_ error: StrataError, in predicate: String) -> any Error {
        var offset = error.offset
        if offset == nil, error.code == .unknownKey, let name = error.propertyName,
            let range = predicate.range(of: name)
        {
            offset = predicate.distance(from: predicate.startIndex, to: range.lowerBound)
        }
        guard let offset, !predicate.isEmpty, !predicate.contains("\n") else { return error }
        var message = oneLine(error)
        if !message.contains("offset") { message += " (at offset \(offset))" }
        guard OutputChannel.standardError.isTerminal else { return CommandFailure(message) }
        let caret = String(repeating: " ", count: Swift.max(0, Swift.min(offset, predicate.count))) + "^"
        return CommandFailure("\(message)\n    \(predicate)\n    \(caret)")
    }
}
