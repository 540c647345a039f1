import Foundation
import Strata
import Testing

/// The Rx kit (RxCoreData-style): a manager, `Persistable` values that upsert and delete
/// themselves by a primary attribute, fetch requests as live streams, `performUpdate`.
enum RxGuide {
    // sample: Declaring a Persistable value
    @Entity final class Login: ManagedObject {
        var countryCode: String = ""
        var phoneNumber: String = ""
        var token: String = ""
        var refreshToken: String = ""
        var uName: String = ""
        var nick: String = ""
    }

    struct LoginData: Equatable {
        typealias Model = Login  // the kit's `typealias T = NSManagedObject`
        var countryCode = ""
        var phoneNumber = ""
        var token = ""
        var refreshToken = ""
        var uName = ""
        var nick = ""
    }
    // end sample
}

// sample: Declaring a Persistable value (conformance)
extension RxGuide.LoginData: PersistableValue {
    static var primaryAttributeName: String { "phoneNumber" }
    var identity: String { phoneNumber }

    init(entity: Model) {
        countryCode = entity.countryCode
        phoneNumber = entity.phoneNumber
        token = entity.token
        refreshToken = entity.refreshToken
        uName = entity.uName
        nick = entity.nick
    }

    func update(_ entity: Model) {
        entity.countryCode = countryCode
        entity.phoneNumber = phoneNumber
        entity.token = token
        entity.refreshToken = refreshToken
        entity.uName = uName
        entity.nick = nick
    }
}
// end sample

extension RxGuide {
    /// A container with the sample's entity in an in-memory store.
    static func makeContainer() throws -> PersistentContainer {
        try PersistentContainer(name: "Model", entities: [Login.self], storeDescriptions: [.inMemory])
    }

    /// The stored logins' phone numbers and tokens, read by a fresh context.
    static func stored(in container: PersistentContainer) throws -> [String: String] {
        let logins = try container.newBackgroundContext().fetch(Login.self)
        return Dictionary(uniqueKeysWithValues: logins.map { ($0.phoneNumber, $0.token) })
    }

    @Suite(.timeLimit(.minutes(10))) struct Samples {
        @Test @MainActor func settingUpTheManager() throws {
            try PortingGuide.withTemporaryDirectory { directory in
                // sample: Setting up the manager
                let storeURL = directory.appendingPathComponent("RxCoreData.sqlite")
                let container = try PersistentContainer(
                    name: "Model", entities: [Login.self], storeDescriptions: [.sqlite(storeURL)])
                let managedObjectContext = container.viewContext
                // end sample
                try managedObjectContext.upsert(LoginData(phoneNumber: "0912", token: "t"))
                try managedObjectContext.save()
                try container.close()
                #expect(FileManager.default.fileExists(atPath: storeURL.path))

                let reopened = try PersistentContainer(
                    name: "Model", entities: [Login.self], storeDescriptions: [.sqlite(storeURL)])
                #expect(try stored(in: reopened) == ["0912": "t"])
                try reopened.close()
            }
        }

        @Test func declaringAPersistableValue() throws {
            let container = try makeContainer()
            let context = container.newBackgroundContext()
            let login: Login = try context.insertObject()
            login.phoneNumber = "0912"
            login.token = "t"
            let other: Login = try context.insertObject()
            other.phoneNumber = "0933"

            let value = LoginData(entity: login)
            #expect(LoginData.entityName == "Login")
            #expect(value == LoginData(phoneNumber: "0912", token: "t"))
            #expect(value.identity == "0912")
            // The default predicate finds the object by the primary attribute.
            let found = try context.fetch(FetchRequest(predicate: value.predicate()))
            #expect(found.map(\.phoneNumber) == ["0912"])

            LoginData(phoneNumber: "0912", token: "new", nick: "amy").update(login)
            #expect(login.token == "new" && login.nick == "amy")
        }

        @Test @MainActor func fetchingValuesOnce() throws {
            let container = try makeContainer()
            let context = container.viewContext
            try context.upsert(LoginData(phoneNumber: "0933", token: "b"))
            try context.upsert(LoginData(phoneNumber: "0912", token: "a"))
            try context.save()

            // sample: Fetching values once
            let request = FetchRequest<Login>(sortDescriptors: [.ascending(\.phoneNumber)])
            let loginData = try context.fetch(request).map(LoginData.init(entity:)).first ?? LoginData()
            // end sample
            #expect(loginData == LoginData(phoneNumber: "0912", token: "a"))

            // With nothing stored, the default value.
            let empty = try makeContainer().newBackgroundContext()
            #expect(try empty.fetch(request).map(LoginData.init(entity:)).first ?? LoginData() == LoginData())
        }

        @Test @MainActor func fetchingObjectsThroughAController() throws {
            let container = try makeContainer()
            let context = container.viewContext
            for number in ["0933", "0912"] { try context.upsert(LoginData(phoneNumber: number)) }
            try context.save()

            // sample: Fetching objects through a controller
            let request = FetchRequest<Login>(sortDescriptors: [.ascending(\.phoneNumber)])
            let controller = FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: nil)
            try controller.performFetch()  // throws instead of printing and returning []
            let entities = controller.fetchedObjects
            let fetched = try context.fetch(request)  // the kit's fetchData(_:)
            // end sample
            #expect(entities.map(\.phoneNumber) == ["0912", "0933"])
            #expect(fetched.map(\.objectID) == entities.map(\.objectID))
        }

        @Test @MainActor func observingValues() async throws {
            let container = try makeContainer()
            let context = container.viewContext
            try context.upsert(LoginData(countryCode: "+886", phoneNumber: "0912"))
            try context.upsert(LoginData(countryCode: "+1", phoneNumber: "0999"))
            try context.save()
            var received: [[String]] = []

            // sample: Observing values
            let logins = context.entities(
                LoginData.self, where: \.countryCode == "+886", sortedBy: [.descending(\.phoneNumber)])
            for try await current in logins {
                received.append(current.map(\.phoneNumber))  // bind `current` to the UI here
                if received.count == 2 { break }  // leaving the loop disposes of the query
                // A save in another context: the view context merges it, and the loop runs again.
                try await container.performBackgroundTask { background in
                    try background.upsert(LoginData(countryCode: "+886", phoneNumber: "0933"))
                    try background.save()
                }
            }
            // end sample
            #expect(received == [["0912"], ["0933", "0912"]])

            // The kit's format-string predicate works too.
            let byFormat = try FetchPredicate<Login>(format: "%K == %@", "countryCode", "+886")
            var values = context.entities(LoginData.self, where: byFormat).makeAsyncIterator()
            #expect(try await values.next(isolation: #isolation)?.map(\.phoneNumber) == ["0912", "0933"])
        }

        @Test @MainActor func observingObjects() async throws {
            let container = try makeContainer()
            let context = container.viewContext
            try context.upsert(LoginData(phoneNumber: "0912", token: "a"))
            try context.save()
            var tokens: [[String]] = []

            // sample: Observing objects
            let request = FetchRequest<Login>(sortDescriptors: [.ascending(\.phoneNumber)])
            for try await entities in context.entities(fetchRequest: request) {
                tokens.append(entities.map(\.token))  // [Login], objects of `context`
                if tokens.count == 2 { break }
                entities[0].token = "b"
                try context.save()  // the context's own changes count too
            }
            // end sample
            #expect(tokens == [["a"], ["b"]])
        }

        @Test @MainActor func observingSections() async throws {
            let container = try makeContainer()
            let context = container.viewContext
            for (country, number) in [("+886", "0912"), ("+1", "0999"), ("+886", "0933")] {
                try context.upsert(LoginData(countryCode: country, phoneNumber: number))
            }
            try context.save()
            var received: [[String: Int]] = []

            // sample: Observing sections
            let request = FetchRequest<Login>(sortDescriptors: [.ascending(\.countryCode), .ascending(\.phoneNumber)])
            for try await sections in context.sections(fetchRequest: request, sectionNameKeyPath: "countryCode") {
                received.append(Dictionary(uniqueKeysWithValues: sections.map { ($0.name, $0.numberOfObjects) }))
                if received.count == 2 { break }
                try context.upsert(LoginData(countryCode: "+44", phoneNumber: "0777"))
                try context.save()
            }
            // end sample
            #expect(received == [["+1": 1, "+886": 2], ["+1": 1, "+44": 1, "+886": 2]])
        }

        @Test @MainActor func creatingOrUpdatingAValue() throws {
            let container = try makeContainer()
            let context = container.viewContext

            // sample: Creating or updating a value
            var loginData = LoginData(countryCode: "+886", phoneNumber: "0912", token: "first")
            try context.upsert(loginData)  // no object has this phone number: inserts one
            loginData.token = "second"
            try context.upsert(loginData)  // finds the same (unsaved) object: updates it
            try context.save()  // upsert never saves by itself
            // end sample
            #expect(try stored(in: container) == ["0912": "second"])

            // Writing the values the object already has is no change.
            try context.upsert(loginData)
            #expect(!context.hasChanges)
        }

        @Test @MainActor func deletingAValue() throws {
            let container = try makeContainer()
            let context = container.viewContext
            let loginData = LoginData(phoneNumber: "0912", token: "t")
            try context.upsert(loginData)
            try context.upsert(LoginData(phoneNumber: "0933", token: "t"))
            try context.save()

            // sample: Deleting a value
            try context.delete(loginData)  // finds its object, deletes it and saves
            try context.delete(LoginData(phoneNumber: "0000"))  // no object: nothing to do
            // end sample
            #expect(try stored(in: container) == ["0933": "t"])
            #expect(!context.hasChanges)
        }

        @Test @MainActor func performingAnUpdate() throws {
            let container = try makeContainer()
            let context = container.viewContext

            // sample: Performing an update
            try context.performUpdate { child in
                try child.upsert(LoginData(phoneNumber: "0912", token: "t"))
            }  // saved the child, then `context`, since something changed
            // end sample
            #expect(try stored(in: container) == ["0912": "t"])
            #expect(!context.hasChanges)

            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try context.performUpdate { child in
                    try child.upsert(LoginData(phoneNumber: "0933", token: "t"))
                    throw Refused()
                }
            }
            #expect(!context.hasChanges)
            #expect(try stored(in: container) == ["0912": "t"])
        }
    }
}
