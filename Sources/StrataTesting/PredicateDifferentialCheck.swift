import Foundation
import Strata

/// Runs predicates two ways — compiled to SQL against a saved store, and evaluated in memory
/// against unsaved twins of the same objects — and tells whether both give the same objects or
/// the same typed error.
///
/// The store holds ``DifferentialModel``'s fixed rows, saved once when the check is made; each
/// predicate is fetched from it by a fresh context, so SQLite does the work. The twins are the
/// same rows inserted, in reverse order and never saved, into a context without a store, whose
/// fetches the context evaluates in memory as it does for any unsaved object. Results are
/// compared as sets of the objects' `key`s; errors by their ``StrataError/code``.
///
/// ```swift
/// let check = try PredicateDifferentialCheck()
/// for seed in 0..<1_000 as Range<UInt64> {
///     let outcome = check.check(GeneratedPredicate(seed: seed))
///     if !outcome.agrees { print(outcome) }
/// }
/// ```
///
/// A check is not `Sendable`: it holds contexts. Make one per test (or per fuzzing process) and
/// use it in one isolation domain. Making one costs a store file in a temporary folder, closed
/// and removed when the check is released. The store's connections keep every statement they
/// prepared, about 5 KB per distinct predicate: for millions of predicates, make a new check
/// now and then.
public final class PredicateDifferentialCheck {
    /// What one way of running a predicate gave.
    public enum Result: Hashable, Sendable, CustomStringConvertible {
        /// The `key`s of the objects fetched, in ascending order.
        case objects([Int])
        /// A ``StrataError`` with this code.
        case error(StrataError.Code)
        /// An error that is not a ``StrataError`` (always a finding), as text.
        case unexpectedError(String)

        /// The keys, or the error, as text.
        public var description: String {
            switch self {
            case .objects(let keys): "objects \(keys)"
            case .error(let code): "error \(code)"
            case .unexpectedError(let text): "unexpected error \(text)"
            }
        }
    }

    /// The results of one predicate run both ways.
    public struct Outcome: CustomStringConvertible {
        /// The predicate.
        public var predicate: GeneratedPredicate
        /// Whether the format string parsed (if not, both results are the parser's error).
        public var parsed: Bool
        /// What the SQL store returned.
        public var sql: Result
        /// What in-memory evaluation of the unsaved twins returned.
        public var memory: Result
        /// The message of the first error, for reports.
        public var errorMessage: String?

        /// Whether both ways gave the same objects or the same typed error.
        public var agrees: Bool {
            if case .unexpectedError = sql { return false }
            if case .unexpectedError = memory { return false }
            return sql == memory
        }

        /// The predicate and both results, ready to paste into a regression test.
        public var description: String {
            var text = "\(predicate)\n  SQL:    \(sql)\n  memory: \(memory)"
            if let errorMessage { text += "\n  error: \(errorMessage)" }
            return text
        }
    }

    private let directory: TemporaryDirectory
    private let container: PersistentContainer
    private let twins: ObjectContext

    /// Makes the store (an SQLite file in a new temporary folder) and the twins.
    ///
    /// - Throws: ``StrataError`` when the store cannot be created or saved.
    public convenience init() throws {
        let directory = try TemporaryDirectory()
        try self.init(storeDescription: .sqlite(directory.file("Differential.sqlite")), directory: directory)
    }

    /// Makes the store from `storeDescription` (an empty store of any kind: PostgreSQL, say)
    /// and the twins, so that the same predicates run against that store.
    ///
    /// ```swift
    /// let check = try PredicateDifferentialCheck(storeDescription: .postgres(configuration))
    /// ```
    ///
    /// - Throws: ``StrataError`` when the store cannot be created or saved.
    public convenience init(storeDescription: StoreDescription) throws {
        try self.init(storeDescription: storeDescription, directory: TemporaryDirectory())
    }

    private init(storeDescription: StoreDescription, directory: TemporaryDirectory) throws {
        self.directory = directory
        container = try PersistentContainer(
            name: "Differential", entities: DifferentialModel.types, storeDescriptions: [storeDescription])
        let context = container.newBackgroundContext()
        DifferentialModel.populate(context)
        try context.save()
        // Related objects hold each other (and their context, and it the container): without a
        // reset, the store would outlive the check.
        context.reset()
        twins = ObjectContext(schema: container.schema)
        DifferentialModel.populate(twins, reversed: true)
    }

    deinit {
        twins.reset()
        try? container.close()
    }

    /// Parses a predicate and runs it both ways.
    ///
    /// - Parameter predicate: The predicate and the entity to fetch.
    /// - Returns: Both results; ``Outcome/agrees`` says whether they agree.
    public func check(_ predicate: GeneratedPredicate) -> Outcome {
        let tree: QueryPredicate
        do {
            tree = try QueryPredicate(format: predicate.format, argumentArray: predicate.arguments)
        } catch {
            let result = Self.result(of: error)
            return Outcome(
                predicate: predicate, parsed: false, sql: result, memory: result, errorMessage: Self.message(of: error))
        }
        var messages: [String] = []
        let context = container.newBackgroundContext()
        let sql = run(tree, predicate.root, in: context, messages: &messages)
        context.reset()
        let memory = run(tree, predicate.root, in: twins, messages: &messages)
        return Outcome(predicate: predicate, parsed: true, sql: sql, memory: memory, errorMessage: messages.first)
    }

    /// Runs a format string both ways.
    ///
    /// - Parameters:
    ///   - root: The entity to fetch.
    ///   - format: The format string.
    ///   - arguments: One argument per format specifier.
    /// - Returns: Both results.
    public func check(_ root: DifferentialModel.Root, _ format: String, _ arguments: any PredicateArgument...)
        -> Outcome
    {
        check(GeneratedPredicate(root, format: format, arguments: arguments))
    }

    private func run(
        _ tree: QueryPredicate, _ root: DifferentialModel.Root, in context: ObjectContext, messages: inout [String]
    ) -> Result {
        do {
            let objects: [ManagedObject]
            switch root {
            case .item:
                objects = try context.fetch(FetchRequest<DifferentialModel.Item>(predicate: FetchPredicate(tree)))
            case .owner:
                objects = try context.fetch(FetchRequest<DifferentialModel.Owner>(predicate: FetchPredicate(tree)))
            }
            return .objects(objects.compactMap(DifferentialModel.key).sorted())
        } catch {
            messages.append(Self.message(of: error))
            return Self.result(of: error)
        }
    }

    private static func result(of error: any Error) -> Result {
        if let error = error as? StrataError { return .error(error.code) }
        return .unexpectedError(String(describing: error))
    }

    private static func message(of error: any Error) -> String {
        (error as? StrataError)?.message ?? String(describing: error)
    }
}
