import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Batched results read in primary-key order load each batch as one range of keys; they must
/// return exactly what a plain fetch returns, and cope with rows changed after the keys were read.
@Suite struct BatchedFetchResultsTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer([Vehicle.self, Car.self, Bike.self], in: directory)
        let context = container.newBackgroundContext()
        for index in 0..<60 {
            let vehicle: Vehicle = index.isMultiple(of: 3) ? Bike(context: context) : Car(context: context)
            vehicle.wheels = index % 5
            vehicle.maker = "maker \(index)"
        }
        try context.save()
        // Gaps in the keys, so that ranges hold rows that are not results.
        for vehicle in try context.fetch(Vehicle.self) where vehicle.wheels == 4 { context.delete(vehicle) }
        try context.save()
    }

    @Test(arguments: [1, 4, 7, 100])
    func batchesInKeyOrderMatchAPlainFetch(batchSize: Int) throws {
        let context = container.newBackgroundContext()
        for predicate: FetchPredicate<Vehicle>? in [nil, \.wheels >= 2, (\Vehicle.maker).contains("1")] {
            var request = FetchRequest<Vehicle>(predicate: predicate)
            request.fetchBatchSize = batchSize
            let expected = try context.fetch(request).map(\.objectID)
            let batched = try container.newBackgroundContext().fetchBatched(request)
            // A batch arrives loaded: every object of it is filled in, none left a fault.
            #expect(batched.allSatisfy { !$0.isFault })
            #expect(batched.map(\.objectID) == expected)
            #expect(batched.map(\.maker) == (try context.fetch(request)).map(\.maker))
        }
        var bikes = FetchRequest<Bike>()
        bikes.fetchBatchSize = batchSize
        let onlyBikes = try context.fetchBatched(bikes)
        #expect(onlyBikes.map(\.objectID) == (try context.fetch(bikes)).map(\.objectID))
        #expect(onlyBikes.allSatisfy { $0.entity.name == "Bike" })
    }

    @Test func rowsChangedAfterTheKeysWereReadStayInTheResult() throws {
        let context = container.newBackgroundContext()
        var request = FetchRequest<Vehicle>(predicate: \.wheels >= 2)
        request.fetchBatchSize = 5
        let batched = try context.fetchBatched(request)
        let ids = batched.map(\.objectID)
        #expect(ids.count > 10)
        // Elsewhere: one result no longer matches, one is deleted.
        let other = container.newBackgroundContext()
        let changed = try #require(try other.existingObject(with: ids[1]) as? Vehicle)
        changed.wheels = 0
        let deleted = try #require(try other.existingObject(with: ids[2]) as? Vehicle)
        other.delete(deleted)
        try other.save()

        let later = try container.newBackgroundContext().fetchBatched(request)
        #expect(later.map(\.objectID) == ids.filter { $0 != ids[1] && $0 != ids[2] })
        // The result read before the changes keeps its objects, in order, with current values.
        #expect(batched.count == ids.count)
        #expect(batched[1].objectID == ids[1])
        #expect(batched[1].wheels == 0)
        #expect(batched[2].objectID == ids[2])
        #expect(batched[3].objectID == ids[3])
    }
}
