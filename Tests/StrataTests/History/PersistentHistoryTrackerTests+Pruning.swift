import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The tracker's two pruning rules, a lagging reader's expired token, and the data-stack kit's
/// tracker scenario: another container's insertions end up registered in the view context
/// (with the tracker suite's stores and helpers).
extension PersistentHistoryTrackerTests {
    @Test func theKitsRuleDeletesWhatEveryAuthorReadAtOnce() async throws {
        let app = try open()
        let widget = try open()
        // A week's age: Strata's default rule would keep all of it.
        let appTracker = PersistentHistoryTracker(
            container: app, currentAuthor: "app", remoteChangePollingInterval: nil, pruningRule: .mergedByEveryAuthorOrOld)
        let widgetTracker = PersistentHistoryTracker(
            container: widget, currentAuthor: "widget", remoteChangePollingInterval: nil,
            pruningRule: .mergedByEveryAuthorOrOld)
        try await appTracker.processNewTransactions()
        try await widgetTracker.processNewTransactions()
        try await saveMovie("One", in: widget, author: "widget")
        try await saveMovie("Two", in: app, author: "app")
        try await appTracker.processNewTransactions()
        #expect(try app.fetchHistory().count == 2)  // the widget has not read "Two"
        try await widgetTracker.processNewTransactions()  // now everyone has: gone in this pass
        #expect(try app.fetchHistory().isEmpty)

        // Strata's default keeps what everyone read until it is a week old.
        let defaultTracker = PersistentHistoryTracker(container: app, currentAuthor: "app", remoteChangePollingInterval: nil)
        try await saveMovie("Three", in: widget, author: "widget")
        try await widgetTracker.processNewTransactions()
        try await defaultTracker.processNewTransactions()
        #expect(try await defaultTracker.pruneHistory() == 0)
        #expect(try app.fetchHistory().count == 1)
    }

    @Test @MainActor func theKitsRuleDeletesOldHistoryEvenUnreadAndTheLaggingReaderRecovers() async throws {
        let app = try open()
        let widget = try open()
        let appTracker = PersistentHistoryTracker(
            container: app, currentAuthor: "app", maxTransactionAge: 0, remoteChangePollingInterval: nil,
            pruningRule: .mergedByEveryAuthorOrOld)
        let widgetTracker = PersistentHistoryTracker(
            container: widget, currentAuthor: "widget", remoteChangePollingInterval: nil)
        try await widgetTracker.processNewTransactions()
        try await appTracker.processNewTransactions()
        widget.viewContext.automaticallyMergesChangesFromContainer = false  // only the tracker merges
        let heatID = try await saveMovie("Heat", in: app, author: "app")
        let heat = try #require(try widget.viewContext.existingObject(with: heatID) as? Movie)
        #expect(heat.title == "Heat")

        // The app changes Heat and prunes by age, before the widget read either transaction.
        try await app.performBackgroundTask(author: "app") { context in
            try #require(try context.existingObject(with: heatID) as? Movie).title = "Heat (1995)"
            try context.save()
        }
        try await appTracker.processNewTransactions()
        #expect(try app.fetchHistory().isEmpty)

        // The widget's position is expired: it refreshes everything and goes on.
        let position = try #require(try widget.stores[0].lastMergedHistoryTokens()["widget"])
        let expired = #expect(throws: StrataError.self) { try widget.fetchHistory(HistoryFetchRequest(after: position)) }
        #expect(expired?.code == .historyTokenExpired)
        try await widgetTracker.processNewTransactions()
        #expect((await widgetTracker.lastError as? StrataError)?.code == .historyTokenExpired)
        #expect(heat.title == "Heat (1995)")
        try await saveMovie("Ronin", in: app, author: "app")
        #expect(try await widgetTracker.processNewTransactions().count == 1)
    }

    /// The data-stack kit's `testPersistentHistoryTrackerBackgroundContext`, with Strata's
    /// calls: a background context of one container inserts; both view contexts, retaining
    /// their registered objects, hold the new objects once their trackers ran.
    @Test @MainActor func insertionsMergedByTheTrackerAreRegisteredInTheViewContexts() async throws {
        let stack1 = try open()
        let stack2 = try open()
        let vc1 = stack1.viewContext
        let vc2 = stack2.viewContext
        vc1.transactionAuthor = "viewContext1"
        vc2.transactionAuthor = "viewContext2"
        vc1.automaticallyMergesChangesFromContainer = false
        vc2.automaticallyMergesChangesFromContainer = false
        vc1.retainsRegisteredObjects = true
        vc2.retainsRegisteredObjects = true
        let tracker1 = PersistentHistoryTracker(container: stack1, currentAuthor: "viewContext1", remoteChangePollingInterval: nil)
        let tracker2 = PersistentHistoryTracker(container: stack2, currentAuthor: "viewContext2", remoteChangePollingInterval: nil)

        let objID1 = try await saveMovie("A", in: stack2, author: "backgroundContext")
        let objID2 = try await saveMovie("B", in: stack2, author: "backgroundContext")
        // Where the kit sleeps a second, wait for the trackers' passes.
        try await tracker1.processNewTransactions()
        try await tracker2.processNewTransactions()
        // Turns later (past the view contexts' own processing), still registered.
        for _ in 0..<10 { await Task.yield() }
        vc1.processPendingChanges()
        #expect(vc1.registeredObject(for: objID1) != nil)
        #expect(vc1.registeredObject(for: objID2) != nil)
        #expect(vc2.registeredObject(for: objID1) != nil)
        #expect(vc2.registeredObject(for: objID2) != nil)
        #expect((vc1.registeredObject(for: objID2) as? Movie)?.title == "B")
    }
}
