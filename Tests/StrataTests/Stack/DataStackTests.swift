import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Two versions of a notes model for the versioned stack.
enum NoteVersions: String, ModelVersion {
    case v1 = "Notes"
    case v2 = "Notes2"

    var modelVersion: Schema {
        get throws {
            var attributes = [AttributeDescription(name: "text", type: .string, defaultValue: "")]
            if self == .v2 { attributes.append(AttributeDescription(name: "pinned", type: .boolean, defaultValue: false)) }
            return try Schema([EntityDescription(name: "Note", attributes: attributes)])
        }
    }
}

extension TransactionAuthor {
    static let iOSViewContext: TransactionAuthor = "iOSViewContext"
    static let cloudDataImport: TransactionAuthor = "cloudDataImport"
}

/// The data-stack kit's stacks: basic (SQLite file, optionally versioned and tracking history),
/// preview (in memory) and testing (a fresh file per test).
@Suite(.timeLimit(.minutes(10))) struct DataStackTests {
    let directory: TemporaryDirectory
    var url: URL { directory.url.appendingPathComponent("Notes.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
    }

    static func insertNote(_ text: String, in context: ObjectContext) throws -> ManagedObject {
        let note = ManagedObject(entity: try #require(context.schema.entity(named: "Note")))
        context.insert(note)
        try note.setValue(text, forKey: "text")
        return note
    }

    /// Waits for `condition`; the limit only catches a hang.
    func eventually(_ condition: @MainActor () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            if try await MainActor.run(body: condition) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try await MainActor.run(body: condition)
    }

    /// `close()` lets the store go, so that a migration (or a test's next step) can have it.
    @Test @MainActor func closingAStackLetsTheStoreBeMigratedAndOpenedAgain() async throws {
        let stack = try BasicDataStack(
            storeURL: url, versionKey: NoteVersions.self, currentVersion: .v1, mainAuthor: .iOSViewContext,
            persistentHistoryOptions: .init(remoteChangePollingInterval: nil))
        _ = try Self.insertNote("kept", in: stack.viewContext)
        try stack.viewContext.save()
        // Open, it holds the store: a migration is refused.
        let refused = #expect(throws: StrataError.self) { try NoteVersions.migrationManager().migrateStore(at: url) }
        #expect(refused?.code == .storeInUse)
        try stack.close()
        try stack.close()  // again: nothing
        let saveAfterClose = #expect(throws: StrataError.self) {
            _ = try Self.insertNote("late", in: stack.viewContext)
            try stack.viewContext.save()
        }
        #expect(saveAfterClose?.code == .storeClosed)

        let migrated = try BasicDataStack(storeURL: url, versionKey: NoteVersions.self, mainAuthor: .iOSViewContext)
        #expect(try NoteVersions.versionsForStore(at: url) == [.v2])
        #expect(try migrated.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Note")).count == 1)
    }

    @Test @MainActor func contextsCarryTheStacksAuthorsAndNames() throws {
        let stack = try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Notes", storeURL: url, mainAuthor: .iOSViewContext)
        #expect(stack.viewContext.name == "ViewContext")
        #expect(stack.viewContext.transactionAuthor == .iOSViewContext)
        #expect(stack.viewContext === stack.container.viewContext)
        let background = stack.backgroundContext(author: .cloudDataImport)
        #expect(background.name == "cloudDataImport")
        #expect(background.transactionAuthor == .cloudDataImport)
        #expect(background !== stack.backgroundContext(author: .cloudDataImport))
        #expect(stack.container.stores.first?.url == url)
    }

    @Test func aBackgroundContextWithTheMainAuthorIsRefused() async {
        await #expect(processExitsWith: .failure) {
            let stack = try PreviewStack(try NoteVersions.v1.modelVersion)
            _ = stack.backgroundContext(author: stack.mainContextAuthor)
        }
    }

    @Test @MainActor func withoutHistoryTheViewContextMergesBackgroundSaves() async throws {
        let stack = try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Notes", storeURL: url, mainAuthor: .iOSViewContext)
        #expect(stack.historyTracker == nil)
        #expect(stack.viewContext.automaticallyMergesChangesFromContainer)
        let shown = try stack.viewContext.fetch(entityName: "Note")
        #expect(shown.isEmpty)
        let background = stack.backgroundContext(author: .cloudDataImport)
        let note = try Self.insertNote("from the cloud", in: background)
        try background.save()
        // The view context hears of the save by itself: its fetched objects are refreshed.
        _ = try #require(shown.first == nil ? try stack.viewContext.fetch(entityName: "Note").first : nil)
        let id = note.objectID
        try note.setValue("edited in the background", forKey: "text")
        try background.save()
        #expect(try await eventually { (try stack.viewContext.existingObject(with: id).value(forKey: "text") as? String) == "edited in the background" })
        #expect(stack.container.stores.allSatisfy { !$0.isPersistentHistoryTrackingEnabled })
    }

    @Test @MainActor func historyOptionsRecordHistoryAndStartATrackerForTheMainAuthor() async throws {
        let stack = try BasicDataStack(
            try NoteVersions.v1.modelVersion, name: "Notes", storeURL: url, mainAuthor: .iOSViewContext,
            persistentHistoryOptions: .init(maxTransactionAge: 60, remoteChangePollingInterval: nil))
        let tracker = try #require(stack.historyTracker)
        #expect(tracker.currentAuthor == .iOSViewContext)
        #expect(await tracker.maxTransactionAge == 60)
        #expect(!stack.viewContext.automaticallyMergesChangesFromContainer)  // the tracker merges
        var started = await tracker.isMonitoring
        for _ in 0..<100 where !started {
            try await Task.sleep(for: .milliseconds(10))
            started = await tracker.isMonitoring
        }
        #expect(started)  // started by the stack
        await tracker.startMonitoring()  // as the kit's README does: already running, nothing more
        #expect(await tracker.isMonitoring)
        #expect(stack.container.stores.allSatisfy { $0.isPersistentHistoryTrackingEnabled })

        let background = stack.backgroundContext(author: .cloudDataImport)
        let note = try Self.insertNote("tracked", in: background)
        try background.save()
        let id = note.objectID
        #expect(try stack.container.fetchHistory().map(\.author) == ["cloudDataImport"])
        // The tracker merges it into the view context, which holds the note without fetching.
        let shown = try stack.viewContext.fetch(entityName: "Note")
        #expect(shown.count == 1)
        try note.setValue("edited", forKey: "text")
        try background.save()
        #expect(try await eventually { (try stack.viewContext.existingObject(with: id).value(forKey: "text") as? String) == "edited" })
    }

    @Test func theVersionedStackMigratesAStoreToTheCurrentVersion() async throws {
        let old = try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Notes", storeURL: url, mainAuthor: "app")
        let context = old.backgroundContext(author: "writer")
        _ = try Self.insertNote("written at v1", in: context)
        try context.save()
        try old.container.close()
        #expect(try NoteVersions.versionsForStore(at: url) == [.v1])

        let stack = try BasicDataStack(storeURL: url, versionKey: NoteVersions.self, mainAuthor: "app")
        #expect(try NoteVersions.versionsForStore(at: url) == [.v2])
        #expect(stack.container.name == "NoteVersions")
        let notes = try stack.backgroundContext(author: "reader").fetch(entityName: "Note")
        #expect(try notes.map { try $0.value(forKey: "text") as? String } == ["written at v1"])
        #expect(try notes.map { try $0.value(forKey: "pinned") as? Bool } == [false])
    }

    @Test func anOlderVersionOpensItsStoreWithoutMigrating() async throws {
        let old = try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Notes", storeURL: url, mainAuthor: "app")
        try old.container.close()
        let reader = try BasicDataStack(storeURL: url, versionKey: NoteVersions.self, currentVersion: .v1, mainAuthor: "app")
        #expect(reader.container.schema.entity(named: "Note")?.attribute(named: "pinned") == nil)
        try reader.container.close()
        #expect(try NoteVersions.versionsForStore(at: url) == [.v1])

        // A store already at v2 is not opened as v1.
        _ = try BasicDataStack(storeURL: url, versionKey: NoteVersions.self, mainAuthor: "app").container.close()
        #expect(throws: StrataError.self) {
            try BasicDataStack(storeURL: url, versionKey: NoteVersions.self, currentVersion: .v1, mainAuthor: "app")
        }
        #expect(try NoteVersions.versionsForStore(at: url) == [.v2])
    }

    @Test func theVersionedStackCreatesAMissingStoreAtTheCurrentVersionAndTracksHistory() async throws {
        let stack = try BasicDataStack(
            storeURL: url, versionKey: NoteVersions.self, mainAuthor: "app",
            persistentHistoryOptions: .init(remoteChangePollingInterval: nil))
        #expect(try NoteVersions.versionsForStore(at: url) == [.v2])
        let tracker = try #require(stack.historyTracker)  // the kit forgets it here
        await tracker.startMonitoring()
        #expect(await tracker.isMonitoring)
    }

    @Test @MainActor func aPreviewStackLivesInMemoryAndCanStartFromAStoresContents() throws {
        let empty = try PreviewStack(try NoteVersions.v1.modelVersion)
        #expect(empty.container.stores.map(\.url) == [nil])
        #expect(empty.mainContextAuthor == PreviewStack.Authors.viewContext)
        _ = try Self.insertNote("preview", in: empty.viewContext)
        try empty.viewContext.save()

        let seed = try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Seed", storeURL: url, mainAuthor: "app")
        let context = seed.backgroundContext(author: "seed")
        _ = try Self.insertNote("seeded", in: context)
        try context.save()
        try seed.container.close()
        let seeded = try PreviewStack(try NoteVersions.v1.modelVersion, contentsOf: url)
        let background = seeded.backgroundContext(author: PreviewStack.Authors.backgroundContext)
        #expect(try background.fetch(entityName: "Note").map { try $0.value(forKey: "text") as? String } == ["seeded"])
        _ = try Self.insertNote("not in the file", in: background)
        try background.save()
        #expect(try BasicDataStack(try NoteVersions.v1.modelVersion, name: "Seed", storeURL: url, mainAuthor: "app")
            .backgroundContext(author: "check").count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 1)
    }

    @Test func aTestingStackStartsEmptyEveryTimeInAFolderNamedAfterTheTest() throws {
        let name = "testingStack-\(UUID().uuidString)"
        let first = try TestingStack(try NoteVersions.v1.modelVersion, testName: name)
        #expect(first.directoryLocation.lastPathComponent == name)
        #expect(first.directoryLocation.deletingLastPathComponent().lastPathComponent == "DataStackTesting")
        #expect(first.container.stores.first?.url == first.storeURL)
        let context = first.backgroundContext(author: "test")
        _ = try Self.insertNote("left over", in: context)
        try context.save()
        try first.container.close()
        #expect(FileManager.default.fileExists(atPath: first.storeURL.path))

        let second = try TestingStack(try NoteVersions.v1.modelVersion, testName: name)
        #expect(!FileManager.default.fileExists(atPath: first.storeURL.path))
        #expect(try second.backgroundContext(author: "test").count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 0)
        try second.destroy()
        #expect(!FileManager.default.fileExists(atPath: second.directoryLocation.path))
        #expect(second.container.isClosed)
    }

    @Test func aTestNameNeverLeavesTheTestingFolder() throws {
        let stack = try TestingStack(try NoteVersions.v1.modelVersion, testName: "../escape-\(UUID().uuidString)")
        defer { try? stack.destroy() }
        #expect(stack.directoryLocation.deletingLastPathComponent().lastPathComponent == "DataStackTesting")
    }
}
