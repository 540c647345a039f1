import Foundation
import StrataTesting
import Testing

@testable import Strata

extension Person: DefaultSortable {
    static var defaultSortDescriptors: [FetchSortDescriptor<Person>] {
        [.ascending(\.name, comparison: .caseInsensitive)]
    }
}

/// Subentities, affected stores, default sort orders and child contexts.
@Suite struct FetchRequestOptionsTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try StoreKind.sqliteFile.makeContainer(
            [Car.self, Bike.self, Person.self, Movie.self], in: directory)
        let context = container.newBackgroundContext()
        for (maker, wheels) in [("Volvo", 4), ("Fiat", 4), ("Reliant", 3)] {
            let car = Car(context: context)
            car.maker = maker
            car.wheels = wheels
        }
        for maker in ["Brompton", "Trek"] {
            let bike = Bike(context: context)
            bike.maker = maker
            bike.wheels = 2
            bike.isElectric = maker == "Trek"
        }
        for name in ["bob", "Ann", "carl"] { Person(context: context).name = name }
        try context.save()
    }

    @Test func subentitiesAreIncludedUnlessExcluded() throws {
        let context = container.newBackgroundContext()
        let all = try context.fetch(
            FetchRequest<Vehicle>(predicate: \.wheels < 4, sortDescriptors: [.ascending(\.maker)]))
        #expect(all.map(\.maker) == ["Brompton", "Reliant", "Trek"])
        #expect(all.map { $0.entity.name } == ["Bike", "Car", "Bike"])
        let electric = try context.fetch(FetchRequest<Bike>(predicate: \.isElectric == true))
        #expect(electric.map(\.maker) == ["Trek"])
        var onlyVehicles = FetchRequest<Vehicle>()
        onlyVehicles.includesSubentities = false
        #expect(try context.fetch(onlyVehicles).isEmpty)  // Vehicle is abstract
        #expect(try context.count(for: onlyVehicles) == 0)
        // A key of a subentity is not a key of its parent.
        let wrong = FetchRequest<Vehicle>(predicate: FetchPredicate(.comparison(.keyPath("seats"), .equalTo, 5)))
        do { _ = try context.fetch(wrong) } catch let error as StrataError { #expect(error.code == .unknownKey) }
        // Unsaved changes respect subentities too.
        let bike = Bike(context: context)
        bike.maker = "Gazelle"
        bike.wheels = 2
        #expect(try context.fetch(FetchRequest<Vehicle>(predicate: \.wheels == 2)).count == 3)
        #expect(try context.fetch(FetchRequest<Car>(predicate: \.wheels < 4)).map(\.maker) == ["Reliant"])
    }

    @Test func affectedStoresLimitTheSearch() throws {
        let context = container.newBackgroundContext()
        let store = try #require(container.store(forEntityNamed: "Car"))
        var request = FetchRequest<Car>()
        request.affectedStores = [store.identifier]
        #expect(try context.fetch(request).count == 3)
        request.affectedStores = ["another-store"]
        #expect(try context.fetch(request).isEmpty)
        #expect(try context.count(for: request) == 0)
    }

    @Test func defaultSortDescriptorsGiveASortedRequest() throws {
        let context = container.newBackgroundContext()
        #expect(try context.fetch(Person.sortedFetchRequest).map(\.name) == ["Ann", "bob", "carl"])
        #expect(
            try context.fetch(
                Person.sortedFetchRequest(where: (\Person.name).beginsWith("b", options: .caseInsensitive))
            ).map(\.name) == ["bob"])
    }

    @Test func childContextsSeeTheirOwnAndTheirParentsChanges() throws {
        let parent = container.newBackgroundContext()
        let ann = try #require(try parent.fetch(Person.self, where: \.name == "Ann").first)
        ann.name = "Anna"  // unsaved in the parent
        let child = ObjectContext(parent: parent)
        let dora = Person(context: child)
        dora.name = "Dora"  // unsaved in the child
        let request = Person.sortedFetchRequest(
            where: (\Person.name).beginsWith("a", options: .caseInsensitive) || \.name == "Dora")
        #expect(try child.fetch(request).map(\.name) == ["Anna", "Dora"])
        #expect(try parent.fetch(request).map(\.name) == ["Anna"])
        #expect(try child.count(for: request) == 2)
        let bob = try #require(try child.fetch(Person.self, where: \.name == "bob").first)
        child.delete(bob)
        #expect(try child.fetch(Person.sortedFetchRequest).map(\.name) == ["Anna", "carl", "Dora"])
    }
}
