import Foundation
import Testing

@testable import Strata

/// A `ContextChanges` made from a store commit reads, compares and edits like one made from
/// sets of IDs: the commit travels to streams and merging contexts as the store made it, and
/// nobody can tell the difference.
@Suite struct ContextChangesTests {
    let store = "S1"

    func movie(_ key: Int64) -> ObjectID {
        ObjectID(entityName: "Movie", storeIdentifier: store, primaryKey: key)
    }

    /// A commit the way a store reports one large insert: the new rows' keys, not their IDs.
    func insertCommit(keys: [Int64], updated: [ObjectID] = []) -> StoreCommit {
        StoreCommit(
            storeIdentifier: store, insertedEntityName: "Movie", entityNameHash: movie(0).entityNameHash, insertedKeys: keys,
            updatedObjectIDs: updated, author: "importer", contextName: "bulk", timestamp: Date(), historyToken: nil)
    }

    @Test func changesFromACommitEqualTheSameChangesListed() {
        let fromCommit = ContextChanges(insertCommit(keys: [1, 2, 3], updated: [movie(9)]))
        let listed = ContextChanges(
            name: .didSave, insertedObjectIDs: [movie(3), movie(1), movie(2)], updatedObjectIDs: [movie(9)],
            author: "importer", contextName: "bulk")
        #expect(fromCommit == listed)
        #expect(fromCommit.hashValue == listed.hashValue)
        #expect(Set([fromCommit, listed]).count == 1)
        #expect(fromCommit.insertedObjectIDs == [movie(1), movie(2), movie(3)])
        #expect(fromCommit.deletedObjectIDs.isEmpty && !fromCommit.isEmpty)
        #expect(fromCommit.changedEntityNames == ["Movie"] && listed.changedEntityNames == ["Movie"])
        #expect(fromCommit != ContextChanges(insertCommit(keys: [1, 2])))
    }

    @Test func editingChangesFromACommitKeepsTheOtherIDs() {
        var changes = ContextChanges(insertCommit(keys: [1, 2], updated: [movie(9)]))
        changes.deletedObjectIDs = [movie(7)]
        #expect(changes.insertedObjectIDs == [movie(1), movie(2)])
        #expect(changes.updatedObjectIDs == [movie(9)])
        #expect(changes.deletedObjectIDs == [movie(7)])
        changes.insertedObjectIDs.remove(movie(1))
        #expect(changes.insertedObjectIDs == [movie(2)])
        #expect(changes.commit == nil)  // no longer what the store committed
    }

    @Test func aCommitOfNoObjectsIsEmptyUnlessItIsAnUnknownRemoteChange() {
        let nothing = ContextChanges(insertCommit(keys: []))
        #expect(nothing.isEmpty && !nothing.isRemoteChange)
        let unknown = ContextChanges(
            StoreCommit(
                storeIdentifier: store, insertedObjectIDs: [], updatedObjectIDs: [], deletedObjectIDs: [], author: nil,
                contextName: nil, isRemote: true))
        #expect(unknown.isRemoteChange && !unknown.isEmpty)
    }

    /// A history transaction reads as the commit it recorded: an object both updated and
    /// deleted in it counts as deleted, in the change summary and in the commit a store
    /// reports for another connection's transaction alike.
    @Test func aTransactionsChangesAreTheCommitItRecorded() {
        let token = HistoryToken(storeIdentifier: store, transactionNumber: 4)
        let transaction = HistoryTransaction(
            token: token, timestamp: Date(), author: "sync", contextName: "remote",
            changes: [
                HistoryChange(changeID: 1, changedObjectID: movie(1), changeType: .insert),
                HistoryChange(changeID: 2, changedObjectID: movie(2), changeType: .update),
                HistoryChange(changeID: 3, changedObjectID: movie(2), changeType: .delete),
                HistoryChange(changeID: 4, changedObjectID: movie(3), changeType: .update),
            ])
        let changes = transaction.objectIDNotification()
        #expect(
            changes
                == ContextChanges(
                    name: .didSave, insertedObjectIDs: [movie(1)], updatedObjectIDs: [movie(3)],
                    deletedObjectIDs: [movie(2)], author: "sync", contextName: "remote"))
        let remote = StoreCommit(transaction, isRemote: true)
        #expect(remote.updatedObjectIDs == [movie(3)] && remote.deletedObjectIDs == [movie(2)])
        #expect(remote.historyToken == token && remote.isRemote && !remote.changedObjectsAreUnknown)
        // Fetched without its changes, a transaction names no objects; from another
        // connection, that is a change of unknown objects.
        let bare = HistoryTransaction(token: token, timestamp: Date(), author: nil, contextName: nil, changes: nil)
        #expect(bare.objectIDNotification().isEmpty)
        #expect(StoreCommit(bare, isRemote: true).changedObjectsAreUnknown)
    }
}
