import Foundation
import Testing

@testable import Strata

/// Subentities (`Car` and `Bike` inherit from the abstract `Vehicle`): shared attributes,
/// the resolved schema, and value snapshots with inherited properties.
@Suite struct ManagedObjectInheritanceTests {
    @Test func subentitiesShareTheParentsAttributesFirst() throws {
        #expect(Car.entity.attributes.map(\.name) == ["wheels", "maker", "seats"])
        #expect(Bike.entity.attributes.map(\.name) == ["wheels", "maker", "isElectric"])
        #expect(Car.entity.superentity?.name == "Vehicle")
        #expect(Car.entity.attribute(named: "wheels")?.type == .integer64)
        #expect(Bike.entity.attribute(named: "isElectric")?.type == .boolean)
    }

    @Test func schemaOfTheSubclassesHasTheAbstractParent() throws {
        let schema = try Schema([Car.self, Bike.self])
        let vehicle = try #require(schema.entity(named: "Vehicle"))
        #expect(vehicle.isAbstract)
        #expect(Set(vehicle.subentityNames) == ["Car", "Bike"])
        #expect(vehicle.kindNames == ["Vehicle", "Car", "Bike"])
        #expect(vehicle.attributes.map(\.name) == ["wheels", "maker"])
        let car = try #require(schema.entity(named: "Car"))
        let bike = try #require(schema.entity(named: "Bike"))
        #expect(car.superentity === vehicle)
        #expect(bike.superentity === vehicle)
        #expect(car.isKind(of: vehicle))
        #expect(!car.isKind(of: bike))
        #expect(car.rootEntity === vehicle)
        #expect(car.subentityNames.isEmpty)
        #expect(Set(schema.entities.map(\.name)) == ["Vehicle", "Car", "Bike"])
    }

    @Test func inheritedAttributesAreReadAndWrittenOnTheSubclass() throws {
        let car = Car()
        let bike = Bike()
        #expect(car.wheels == 4)
        #expect(bike.wheels == 4)
        car.maker = "Volvo"
        car.wheels = 6
        bike.maker = "Brompton"
        bike.wheels = 2
        bike.isElectric = true
        #expect(car.maker == "Volvo")
        #expect(car.wheels == 6)
        #expect(car.seats == 5)
        #expect(bike.maker == "Brompton")
        #expect(bike.wheels == 2)
        #expect(bike.isElectric)
        #expect(try car.value(forKey: "maker") as? String == "Volvo")
        #expect(try car.value(forKey: "wheels") as? Int64 == 6)
        #expect(try bike.value(forKey: "isElectric") as? Bool == true)

        try car.setValue("Saab", forKey: "maker")
        try car.setValue(7, forKey: "seats")
        #expect(car.maker == "Saab")
        #expect(car.seats == 7)
        #expect(throws: StrataError.self) { try car.setValue(true, forKey: "isElectric") }
    }

    @Test func vehicleAsTheDeclaredTypeReadsTheSubclassesValues() throws {
        let vehicles: [Vehicle] = [Car(), Bike()]
        for (index, vehicle) in vehicles.enumerated() {
            vehicle.maker = "Maker \(index)"
            vehicle.wheels = index + 2
        }
        #expect(vehicles.map(\.maker) == ["Maker 0", "Maker 1"])
        #expect(vehicles.map(\.wheels) == [2, 3])
        #expect(vehicles.map(\.entity.name) == ["Car", "Bike"])
    }

    @Test func valueExposesInheritedPropertiesByDynamicMemberLookup() throws {
        let car = Car()
        car.maker = "Volvo"
        car.wheels = 4
        car.seats = 7
        var value = car.value
        #expect(value.objectID == car.objectID)
        #expect(value.maker == "Volvo")
        #expect(value.wheels == 4)
        #expect(value.seats == 7)
        #expect(value.inherited.maker == "Volvo")

        value.maker = "Saab"
        #expect(value.inherited.maker == "Saab")
        value.inherited.wheels = 3
        #expect(value.wheels == 3)
    }

    @Test func updateFromValueWritesInheritedValues() throws {
        let car = Car()
        var value = car.value
        value.maker = "Saab"
        value.wheels = 3
        value.seats = 2
        try car.update(from: value)
        #expect(car.maker == "Saab")
        #expect(car.wheels == 3)
        #expect(car.seats == 2)
        #expect(car.value == value)

        let bike = Bike()
        var bikeValue = bike.value
        bikeValue.isElectric = true
        bikeValue.maker = "Riese"
        try bike.update(from: bikeValue)
        #expect(bike.isElectric)
        #expect(bike.maker == "Riese")
        #expect(bike.wheels == 4)
    }

    @Test func updateFromValueOnlyWritesWhatChanged() throws {
        let car = Car()
        car.maker = "Volvo"
        car.commitValues()
        var value = car.value
        try car.update(from: value)
        #expect(!car.hasChanges)
        value.wheels = 8
        try car.update(from: value)
        #expect(Array(car.changedValues().keys) == ["wheels"])
    }

    @Test func subclassObjectsLiveInOneContext() throws {
        let context = ObjectContext(schema: try Schema([Car.self, Bike.self]))
        let car = Car(context: context)
        let bike = Bike(context: context)
        #expect(context.insertedObjects == [car, bike])
        #expect(car.entity === context.schema.entity(named: "Car"))
        #expect(car.objectID.entityName == "Car")
        #expect(try context.existingObject(with: bike.objectID) === bike)
    }

    @Test func inheritedRulesAreValidated() throws {
        let car = Car()
        car.seats = 4
        #expect(car.validationFailures().isEmpty)
        let value = car.value
        let decoded = try JSONDecoder().decode(Car.Value.self, from: JSONEncoder().encode(value))
        #expect(decoded == value)
        #expect(decoded.maker == "")
    }
}

/// A subclass that names its parent with the module's name, as a port of
/// `final class Truck: Kit.Vehicle` does.
@Entity final class QualifiedTruck: StrataTests.Vehicle {
    var payload: Double = 0
}

@Suite struct QualifiedSuperclassTests {
    @Test func aParentNamedWithItsModuleIsTheSuperentity() throws {
        #expect(QualifiedTruck.entity.superentity?.name == "Vehicle")
        #expect(QualifiedTruck.entity.attributes.map(\.name) == ["wheels", "maker", "payload"])
        let schema = try Schema([Car.self, QualifiedTruck.self])
        #expect(schema.entity(named: "Vehicle")?.kindNames.contains("QualifiedTruck") == true)
        let truck = QualifiedTruck()
        truck.maker = "Volvo"
        truck.payload = 12.5
        #expect(truck.value.maker == "Volvo")
        #expect(truck.value.payload == 12.5)
        #expect(QualifiedTruck.propertyName(for: \QualifiedTruck.maker) == "maker")
    }
}
