import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgres

/// Large fetches arrive in runs: the context turns one run into objects while the next is
/// received. Order, completeness and the connection's state must not depend on it.
@Suite struct PostgresFetchTests {
    struct Stop: Error {}

    static func schema() throws -> Schema {
        try Schema([EntityDescription(name: "Note", attributes: [AttributeDescription(name: "n", type: .integer64, defaultValue: .integer(0))])])
    }

    /// A store of `count` notes numbered from 0, on a pool of one connection (so that a
    /// connection left busy by a fetch would stall the next one).
    func withNotes(_ count: Int, _ body: (PersistentContainer, PostgresStore) throws -> Void) async throws {
        try await offThePool {
            let database = try PostgresTestDatabase()
            var configuration = database.configuration
            configuration.pool.maximumConnections = 1
            configuration.pool.acquireTimeout = .seconds(20)
            let container = try PersistentContainer(name: "Notes", schema: try Self.schema(), storeDescriptions: [.postgres(configuration)])
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let entity = try #require(context.schema.entity(named: "Note"))
            for number in 0..<count {
                let note = ManagedObject(entity: entity)
                context.insert(note)
                try note.setValue(Int64(number), forKey: "n")
            }
            try context.save()
            try body(container, try #require(container.stores.first as? PostgresStore))
            withExtendedLifetime(database) {}
        }
    }

    static func descending() -> FetchRequest<ManagedObject> {
        FetchRequest<ManagedObject>(entityName: "Note", sortDescriptors: [FetchSortDescriptor(key: "n", ascending: false)])
    }

    @Test func aLargeFetchArrivesInRunsInItsOrder() async throws {
        let count = PostgresFetchDecoding.runLength * 3 + 17
        try await withNotes(count) { container, store in
            var runs: [[Int64]] = []
            try store.fetch(try FetchPlan(Self.descending(), in: store.schema)) { rows in
                runs.append(rows.map { if case .integer(let value) = $0.attributes[0] { value } else { -1 } })
            }
            #expect(runs.count > 1)
            #expect(runs.joined().elementsEqual((0..<Int64(count)).reversed()))

            let objects = try container.newBackgroundContext().fetch(Self.descending())
            #expect(try objects.map { try $0.value(forKey: "n") as? Int64 } == (0..<Int64(count)).reversed().map { $0 })
        }
    }

    @Test func anErrorWhileTakingARunIsRethrownAndTheConnectionServesTheNextFetch() async throws {
        try await withNotes(PostgresFetchDecoding.runLength * 2 + 1) { container, store in
            var taken = 0
            #expect(throws: Stop.self) {
                try store.fetch(try FetchPlan(Self.descending(), in: store.schema)) { _ in
                    taken += 1
                    throw Stop()
                }
            }
            #expect(taken == 1)
            // The pool's only connection finished the statement and is free again.
            let counted = try container.newBackgroundContext().count(for: Self.descending())
            let fetched = try store.fetch(try FetchPlan(Self.descending(), in: store.schema))
            #expect(counted == PostgresFetchDecoding.runLength * 2 + 1)
            #expect(fetched.count == PostgresFetchDecoding.runLength * 2 + 1)
        }
    }
}
