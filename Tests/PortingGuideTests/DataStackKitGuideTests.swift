import Foundation
import Strata
import StrataTesting
import Testing

/// The model of the data-stack kit's samples.
enum DataStackGuide {
    @Entity final class Town: ManagedObject {
        var id: Int = 0
        var name: String = ""
        @Relationship(inverse: "town") var people: Set<Person> = []
    }

    @Entity final class Person: ManagedObject {
        var firstName: String = ""
        var lastName: String = ""
        var name: String = ""
        var age: Int = 0
        @Relationship(inverse: "people") var town: Town?
        @Relationship(inverse: "friends") var friends: Set<Person> = []
    }

    /// Two versions of the model for the migration samples.
    enum Versions: String, ModelVersion {
        case v1 = "Model"
        case v2 = "Model2"

        var modelVersion: Schema {
            get throws {
                var attributes = [AttributeDescription(name: "name", type: .string, defaultValue: "")]
                if self == .v2 { attributes.append(AttributeDescription(name: "nickname", type: .string, isOptional: true)) }
                return try Schema([EntityDescription(name: "Person", attributes: attributes)])
            }
        }

        static func migrationStages() -> [MigrationStage<Versions>] {
            [
                v1.migrationStage(
                    toVersion: .v2, label: "Custom Migration: V1 to V2",
                    preMigration: { _ in }, postMigration: { context in
                        for person in try context.fetch(entityName: "Person") {
                            try person.setValue("nick", forKey: "nickname")
                        }
                    })
            ]
        }
    }
}

// sample: Transaction authors
extension TransactionAuthor {
    static let iOSViewContext: TransactionAuthor = "iOSViewContext"
    static let cloudDataImport: TransactionAuthor = "cloudDataImport"
    static let networkSync: TransactionAuthor = "networkSync"
}
// end sample

extension DataStackGuide.Person: Updatable {}

// sample: The Persistable protocol
struct ImportablePerson: Identifiable, Importable {
    var id: Int
    var firstName: String
    var lastName: String
    var age: Int
    var townID: Int

    typealias ImporterData = [Int: DataStackGuide.Town]

    // Once per import operation: every town the batch names, in one fetch.
    static func generateImporterData(objects: [Self], context: ObjectContext) throws -> ImporterData {
        let towns = try context.fetch(
            DataStackGuide.Town.self, where: (\DataStackGuide.Town.id).in(objects.map(\.townID)))
        return Dictionary(towns.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    // Then, for each item in the import operation:
    func importIntoContext(_ context: ObjectContext, importerData: inout ImporterData) -> PersistenceResult {
        let person = DataStackGuide.Person(context: context)
        person.firstName = firstName
        person.lastName = lastName
        person.age = age
        person.town = importerData[townID]
        return .insert(person.objectID)
    }
}
// end sample

/// The data-stack kit (RCDataKit) samples of the porting guide.
@Suite(.serialized) @MainActor struct DataStackKitGuideTests {
    typealias Person = DataStackGuide.Person
    typealias Town = DataStackGuide.Town

    let schema: Schema

    init() throws {
        schema = try Schema([Person.self, Town.self])
    }

    @Test func theDataStackProtocol() throws {
        let myStack: any DataStack = try PreviewStack(schema)
        // sample: The DataStack protocol
        // The view context: named "ViewContext", saving as myStack.mainContextAuthor.
        let viewContext = myStack.viewContext
        // A background context whose transaction author is cloudDataImport.
        let bgContext = myStack.backgroundContext(author: .cloudDataImport)
        // end sample
        #expect(viewContext.name == "ViewContext")
        #expect(viewContext.transactionAuthor == myStack.mainContextAuthor)
        #expect(bgContext.transactionAuthor == .cloudDataImport)
    }

    @Test func defaultStacks() throws {
        try PortingGuide.withTemporaryDirectory { folder in
            let storeURL = folder.appendingPathComponent("People.sqlite")
            // sample: Default DataStack implementations
            let basic = try BasicDataStack(schema, name: "People", storeURL: storeURL, mainAuthor: .iOSViewContext)
            let preview = try PreviewStack(schema)   // in memory
            let testing = try TestingStack(schema, testName: "defaultStacks")   // a fresh file per test
            defer { try? testing.destroy() }
            // end sample
            #expect(basic.container.stores.first?.url == storeURL)
            #expect(preview.container.stores.first?.url == nil)
            #expect(testing.directoryLocation.lastPathComponent == "defaultStacks")
        }
    }

    @Test func modelFiles() throws {
        // sample: ModelManager and ModelFileManager
        enum TestModelFile {
            static let modelName = "Movies"
            static let model: Schema = {
                do { return try Schema.named(modelName, in: .module) } catch { preconditionFailure("\(error)") }
            }()
        }
        let stack = try PreviewStack(TestModelFile.model, name: TestModelFile.modelName)
        // end sample
        #expect(stack.container.schema.entity(named: "Movie") != nil)
    }

    @Test func modelVersionsAndStagedMigrations() throws {
        try PortingGuide.withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("People.sqlite")
            let old = try BasicDataStack(try DataStackGuide.Versions.v1.modelVersion, name: "People", storeURL: url, mainAuthor: "app")
            let context = old.backgroundContext(author: "seed")
            let person = ManagedObject(entity: try #require(context.schema.entity(named: "Person")))
            context.insert(person)
            try person.setValue("Ann", forKey: "name")
            try context.save()
            try old.container.close()

            // sample: The ModelVersion protocol
            // Migrates the store to the current version (v2) through the stages, then opens it.
            let stack = try BasicDataStack(
                storeURL: url, versionKey: DataStackGuide.Versions.self, mainAuthor: .iOSViewContext)
            // Or migrate without a stack:
            // try DataStackGuide.Versions.migrationManager().migrateStore(at: url)
            // end sample
            let migrated = try stack.backgroundContext(author: "check").fetch(entityName: "Person")
            #expect(try migrated.map { try $0.value(forKey: "nickname") as? String } == ["nick"])
        }
    }

    @Test func persistentHistoryTracking() async throws {
        let folder = try TemporaryDirectory()
        do {
            let url = folder.url.appendingPathComponent("People.sqlite")
            // sample: The PersistentHistoryTracker actor
            // Before loading the store, turn history on in its description:
            let myPersistentContainer = try PersistentContainer(
                name: "People", schema: schema, storeDescriptions: [.sqlite(url, persistentHistoryTracking: true)])
            // Add a tracker to the container, and start or stop it as needed.
            let tracker = PersistentHistoryTracker(container: myPersistentContainer, currentAuthor: .iOSViewContext)
            await tracker.startMonitoring()
            // end sample
            #expect(await tracker.isMonitoring)
            await tracker.stopMonitoring()
            try myPersistentContainer.close()

            // sample: History tracking in BasicDataStack
            let stack = try BasicDataStack(
                schema, name: "People", storeURL: url, mainAuthor: .iOSViewContext,
                persistentHistoryOptions: .init())
            await stack.historyTracker?.startMonitoring()
            // end sample
            #expect(await stack.historyTracker?.isMonitoring == true)
        }
    }

    @Test func typedObjectIDs() async throws {
        let stack = try PreviewStack(schema)
        let viewContextPerson = Person(context: stack.viewContext)
        viewContextPerson.name = "Ann"
        try stack.viewContext.save()
        // sample: Typed object IDs
        let personId = viewContextPerson.typedObjectID   // TypedObjectID<Person>, Sendable
        let name = try await stack.container.performBackgroundTask { backgroundContext in
            // The same person, loaded in the background context:
            let backgroundContextPerson = try backgroundContext.existingObject(with: personId)
            return backgroundContextPerson.name
        }
        // end sample
        #expect(name == "Ann")
    }

    @Test func updatable() throws {
        let stack = try PreviewStack(schema)
        let rc = Person(context: stack.viewContext)
        let dan = Person(context: stack.viewContext)
        rc.age = 14
        try stack.viewContext.save()
        // sample: The Updatable protocol
        // extension Person: Updatable {}
        rc.update(\.age, value: 15)                     // now 15
        rc.updateIfAvailable(\.age, value: nil)         // still 15, not nil
        rc.update(\.age, value: 16, minimumChange: 2)   // still 15: only 2-year steps count
        rc.add(\.friends, relation: dan)                // dan is now a friend (and rc is dan's)
        rc.add(\.friends, relation: nil as Person?)     // nothing happens
        rc.remove(\.friends, relation: dan)             // dan's not a friend anymore
        // end sample
        #expect(rc.age == 15)
        #expect(rc.friends.isEmpty && dan.friends.isEmpty)
    }

    @Test func persistable() throws {
        let stack = try PreviewStack(schema)
        let context = stack.viewContext
        let town = Town(context: context)
        town.id = 7
        town.name = "Springfield"
        let importablePeople = [
            ImportablePerson(id: 1, firstName: "Homer", lastName: "Simpson", age: 39, townID: 7),
            ImportablePerson(id: 2, firstName: "Ned", lastName: "Flanders", age: 60, townID: 7),
        ]
        // sample: Importing Persistable values
        let arrayResults: [PersistenceResult] = try context.importPersistableObjects(importablePeople)
        // Results can also be keyed by the items' identifiers.
        let dictionaryResults: [ImportablePerson.ID: PersistenceResult] = try context.importPersistableObjects(importablePeople)
        // end sample
        #expect(arrayResults.allSatisfy { $0.objectID != nil })
        #expect(dictionaryResults.keys.sorted() == [1, 2])
        #expect(town.people.count == 4)  // imported twice
    }

    @Test func contextHelpers() throws {
        let stack = try PreviewStack(schema)
        let context = stack.viewContext
        let ann = Person(context: context)
        ann.age = 30
        let bob = Person(context: context)
        bob.age = 12
        try context.save()
        let personID = ann.objectID
        let (ID1, ID2) = (ann.objectID, bob.objectID)
        let someNSPredicate: FetchPredicate<Person> = \.age < 18
        // sample: Context helpers
        try context.saveIfNeeded()   // saves only when something changed; returns whether it did
        let somePerson = try context.existing(Person.self, withID: personID)
        let somePeople = try context.existing(Person.self, withIDs: [ID1, ID2])
        try context.removeInstances(of: Person.self, matching: someNSPredicate)
        // end sample
        #expect(somePerson === ann)
        #expect(somePeople.count == 2)
        #expect(bob.isDeleted)
    }

    @Test func fetchRequestHelpers() throws {
        let stack = try PreviewStack(schema)
        let context = stack.viewContext
        for (last, age) in [("Smith", 40), ("Doe", 15), ("Doe", 30)] {
            let person = Person(context: context)
            person.lastName = last
            person.age = age
        }
        let somePredicate: FetchPredicate<Person> = \.age >= 18
        // sample: Fetch request helpers
        let sortDescriptors: [FetchSortDescriptor<Person>] = [
            .ascending(\Person.lastName),
            .descending(\Person.age),
        ]
        let fetchRequest = FetchRequest<Person>(entityName: "Person")
            .sorted(sortDescriptors)
            .where(somePredicate)
        // end sample
        #expect(try context.fetch(fetchRequest).map(\.age) == [30, 40])
    }

    @Test func predicateHelpers() throws {
        let stack = try PreviewStack(schema)
        let context = stack.viewContext
        for (name, age) in [("Fred", 14), ("fréd", 1001), ("Ann", 17), ("Bob", 30)] {
            let person = Person(context: context)
            person.name = name
            person.age = age
        }
        // sample: Predicate helpers
        let predicate1 = try FetchPredicate<Person>(format: "age >= 13")
        let predicate2 = try FetchPredicate<Person>(format: "age < 20")
        let isTeenager = predicate1 && predicate2
        let isNotTeenager = !isTeenager
        let alsoIsNotTeenager = !predicate1 || !predicate2

        // Key paths of model classes make simple predicates.
        let isOlderThanDirt = \Person.age > 1000
        let notFred = \Person.name != "Fred"

        // Or wrap the key path in parentheses for more.
        let isTeen = (\Person.age).between(13...19)
        let isOddTeen = (\Person.age).in([11, 13, 15, 17, 19])

        // String properties take comparison options.
        let definitelyNotFred = (\Person.name).notEqual(to: "Fred", options: .caseAndDiacriticInsensitive)
        // end sample
        func count(_ predicate: FetchPredicate<Person>) throws -> Int { try context.fetch(FetchRequest(predicate: predicate)).count }
        #expect(try count(isTeenager) == 2)
        #expect(try count(isNotTeenager) == 2)
        #expect(try count(alsoIsNotTeenager) == 2)
        #expect(try count(isOlderThanDirt) == 1)
        #expect(try count(notFred) == 3)
        #expect(try count(isTeen) == 2)
        #expect(try count(isOddTeen) == 1)
        #expect(try count(definitelyNotFred) == 2)
    }
}
