import Foundation
import StrataTesting
import Testing

@testable import Strata

@Entity final class PersistLogin: ManagedObject {
    var phoneNumber: String = ""
    var countryCode: String = ""
    var token: String = ""
    var nick: String = ""
}

/// The Rx kit's sample value, ported line by line.
struct LoginData: PersistableValue, Sendable, Equatable {
    typealias Model = PersistLogin

    var countryCode: String
    var phoneNumber: String
    var token: String
    var nick: String = ""

    static var primaryAttributeName: String { "phoneNumber" }
    var identity: String { phoneNumber }

    init(countryCode: String = "+886", phoneNumber: String, token: String, nick: String = "") {
        self.countryCode = countryCode
        self.phoneNumber = phoneNumber
        self.token = token
        self.nick = nick
    }

    init(entity: PersistLogin) {
        countryCode = entity.countryCode
        phoneNumber = entity.phoneNumber
        token = entity.token
        nick = entity.nick
    }

    func update(_ entity: PersistLogin) {
        entity.countryCode = countryCode
        entity.phoneNumber = phoneNumber
        entity.token = token
        entity.nick = nick
    }
}

@Suite(.timeLimit(.minutes(10))) struct PersistableValueTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer
    let commits = LockedBox(0)
    let observation: StoreObservation

    init() throws {
        directory = try TemporaryDirectory()
        container = try PersistentContainer(
            name: "Logins", entities: [PersistLogin.self],
            storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Logins.sqlite"))])
        let commits = commits
        observation = container.addCommitObserver { _ in commits.withLock { $0 += 1 } }
    }

    func storedLogins() throws -> [LoginData] {
        try container.newBackgroundContext().fetch(FetchRequest<PersistLogin>(sortDescriptors: [.ascending(\.phoneNumber)]))
            .map(LoginData.init(entity:))
    }

    @Test func upsertInsertsThenUpdatesTheSameObjectNeverADuplicate() throws {
        let context = container.newBackgroundContext()
        try context.upsert(LoginData(phoneNumber: "0912", token: "first"))
        // Unsaved objects are found too: a second upsert before saving updates the same one.
        try context.upsert(LoginData(phoneNumber: "0912", token: "second"))
        try context.save()
        #expect(try storedLogins().map(\.token) == ["second"])

        let later = container.newBackgroundContext()
        try later.upsert(LoginData(phoneNumber: "0912", token: "third"))
        try later.upsert(LoginData(phoneNumber: "0933", token: "other"))
        try later.save()
        #expect(try storedLogins().map(\.phoneNumber) == ["0912", "0933"])
        #expect(try storedLogins().map(\.token) == ["third", "other"])
    }

    @Test func deleteRemovesTheObjectAndSavesAndIgnoresAnAbsentIdentity() throws {
        let context = container.newBackgroundContext()
        try context.upsert(LoginData(phoneNumber: "0912", token: "t"))
        try context.upsert(LoginData(phoneNumber: "0933", token: "t"))
        try context.save()
        let before = commits.withLock { $0 }

        try context.delete(LoginData(phoneNumber: "0000", token: "absent"))
        #expect(commits.withLock { $0 } == before)  // nothing to delete: no save

        try context.delete(LoginData(phoneNumber: "0912", token: "ignored"))
        #expect(commits.withLock { $0 } == before + 1)
        #expect(try storedLogins().map(\.phoneNumber) == ["0933"])
    }

    @Test func aCustomPredicateIdentifiesTheObject() throws {
        struct ByNick: PersistableValue {
            var nick: String
            var token: String
            static var primaryAttributeName: String { "nick" }
            var identity: String { nick }
            init(nick: String, token: String) {
                self.nick = nick
                self.token = token
            }
            init(entity: PersistLogin) {
                nick = entity.nick
                token = entity.token
            }
            func update(_ entity: PersistLogin) {
                entity.nick = nick
                entity.token = token
            }
            func predicate() -> FetchPredicate<PersistLogin> { \.nick == nick.lowercased() }
        }
        let context = container.newBackgroundContext()
        try context.upsert(LoginData(phoneNumber: "0912", token: "t", nick: "amy"))
        try context.upsert(ByNick(nick: "AMY", token: "updated"))
        try context.save()
        #expect(try storedLogins().map(\.token) == ["updated"])
        #expect(try storedLogins().map(\.nick) == ["AMY"])
    }

    @Test func performUpdateSavesChildAndParentOnlyWhenSomethingChanged() throws {
        let context = container.newBackgroundContext()
        try context.performUpdate { _ in }
        #expect(commits.withLock { $0 } == 0)

        try context.performUpdate { child in try child.upsert(LoginData(phoneNumber: "0912", token: "t")) }
        #expect(commits.withLock { $0 } == 1)
        #expect(!context.hasChanges)
        #expect(try storedLogins().map(\.phoneNumber) == ["0912"])

        // Writing the same values again changes nothing: no save.
        try context.performUpdate { child in try child.upsert(LoginData(phoneNumber: "0912", token: "t")) }
        #expect(commits.withLock { $0 } == 1)

        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try context.performUpdate { child in
                try child.upsert(LoginData(phoneNumber: "0999", token: "t"))
                throw Refused()
            }
        }
        #expect(!context.hasChanges)
        #expect(try storedLogins().map(\.phoneNumber) == ["0912"])
    }

    @Test @MainActor func entitiesYieldsTheValuesThenEachChangeSortedByThePrimaryAttribute() async throws {
        let context = container.viewContext
        try context.upsert(LoginData(phoneNumber: "0933", token: "t"))
        try context.save()
        var logins = context.entities(LoginData.self).makeAsyncIterator()
        #expect(try await logins.next(isolation: #isolation)?.map(\.phoneNumber) == ["0933"])

        // Another context's save reaches the view context's controller.
        try await container.performBackgroundTask { other in
            try other.upsert(LoginData(phoneNumber: "0912", token: "t"))
            try other.save()
        }
        #expect(try await logins.next(isolation: #isolation)?.map(\.phoneNumber) == ["0912", "0933"])

        // The view context's own change, once processed.
        try context.upsert(LoginData(phoneNumber: "0933", token: "changed"))
        context.processPendingChanges()
        #expect(try await logins.next(isolation: #isolation)?.map(\.token) == ["t", "changed"])
    }

    @Test @MainActor func entitiesFiltersAndSorts() async throws {
        let context = container.viewContext
        for (number, nick) in [("01", "b"), ("02", "a"), ("03", "")] {
            try context.upsert(LoginData(phoneNumber: number, token: "t", nick: nick))
        }
        try context.save()
        var logins = context.entities(LoginData.self, where: \.nick != "", sortedBy: [.ascending(\.nick)])
            .makeAsyncIterator()
        #expect(try await logins.next(isolation: #isolation)?.map(\.phoneNumber) == ["02", "01"])
    }

    @Test @MainActor func sectionsFollowTheSectionKey() async throws {
        let context = container.viewContext
        for (number, country) in [("01", "+1"), ("02", "+886"), ("03", "+1")] {
            try context.upsert(LoginData(countryCode: country, phoneNumber: number, token: "t"))
        }
        try context.save()
        let request = FetchRequest<PersistLogin>(sortDescriptors: [.ascending(\.countryCode), .ascending(\.phoneNumber)])
        var sections = context.sections(fetchRequest: request, sectionNameKeyPath: "countryCode").makeAsyncIterator()
        let first = try #require(try await sections.next(isolation: #isolation))
        #expect(first.map(\.name) == ["+1", "+886"])
        #expect(first.map(\.numberOfObjects) == [2, 1])

        try context.upsert(LoginData(countryCode: "+44", phoneNumber: "04", token: "t"))
        try context.save()
        let second = try #require(try await sections.next(isolation: #isolation))
        #expect(second.map(\.name) == ["+1", "+44", "+886"])
    }

    @Test @MainActor func endingTheIterationReleasesTheController() async throws {
        let context = container.viewContext
        let baseline = context.observerCount
        do {
            var logins = context.entities(LoginData.self).makeAsyncIterator()
            _ = try await logins.next(isolation: #isolation)
            #expect(context.observerCount > baseline)
        }
        #expect(context.observerCount == baseline)
    }
}

/// The Rx kit's own spelling: values whose model is `ManagedObject` itself, found by entity
/// name, in a model without classes.
struct UntypedLogin: PersistableValue, Equatable {
    typealias Model = ManagedObject

    var phoneNumber: String
    var token: String

    static var entityName: String { "Login" }
    static var primaryAttributeName: String { "phoneNumber" }
    var identity: String { phoneNumber }

    init(phoneNumber: String, token: String) {
        self.phoneNumber = phoneNumber
        self.token = token
    }

    init(entity: ManagedObject) throws {
        phoneNumber = try entity.value(forKey: "phoneNumber") as? String ?? ""
        token = try entity.value(forKey: "token") as? String ?? ""
    }

    func update(_ entity: ManagedObject) throws {
        try entity.setValue(phoneNumber, forKey: "phoneNumber")
        try entity.setValue(token, forKey: "token")
    }
}

@Suite(.timeLimit(.minutes(10))) struct UntypedPersistableValueTests {
    let directory: TemporaryDirectory
    let container: PersistentContainer

    init() throws {
        directory = try TemporaryDirectory()
        let schema = try Schema([
            EntityDescription(
                name: "Login",
                attributes: [
                    AttributeDescription(name: "phoneNumber", type: .string), AttributeDescription(name: "token", type: .string),
                ])
        ])
        container = try PersistentContainer(
            name: "Logins", schema: schema, storeDescriptions: [.sqlite(directory.url.appendingPathComponent("Logins.sqlite"))])
    }

    @Test @MainActor func upsertEntitiesAndDeleteWorkByEntityName() async throws {
        let context = container.viewContext
        try context.upsert(UntypedLogin(phoneNumber: "0912", token: "a"))
        try context.upsert(UntypedLogin(phoneNumber: "0933", token: "b"))
        try context.save()
        try context.upsert(UntypedLogin(phoneNumber: "0912", token: "c"))  // updates, no duplicate
        try context.save()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Login")) == 2)

        var logins = context.entities(UntypedLogin.self).makeAsyncIterator()
        #expect(
            try await logins.next(isolation: #isolation)
                == [UntypedLogin(phoneNumber: "0912", token: "c"), UntypedLogin(phoneNumber: "0933", token: "b")])
        try context.delete(UntypedLogin(phoneNumber: "0933", token: "b"))
        #expect(try await logins.next(isolation: #isolation)?.map(\.phoneNumber) == ["0912"])
        var sorted = context.entities(UntypedLogin.self, sortedBy: [FetchSortDescriptor(key: "token", ascending: false)])
            .makeAsyncIterator()
        #expect(try await sorted.next(isolation: #isolation)?.map(\.token) == ["c"])
    }
}
