import Dispatch
import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Closing a container while other threads read its store: reads in flight finish, later ones
/// fail with `storeClosed`, and nothing crashes (a read could once pick a reader GRDB had just
/// closed). The readers are plain threads, so that the test never ties up Swift's cooperative
/// pool, which other suites share.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CloseWhileReadingTests {
    @Test(arguments: 0..<8) func readsRacingACloseEndCleanly(round: Int) throws {
        let directory = try TemporaryDirectory()
        let container = try PersistentContainer(
            name: "Race", entities: [Movie.self], storeDescriptions: [.sqlite(directory.file("Race.sqlite"))])
        let context = container.newBackgroundContext()
        for index in 0..<50 { Movie(context: context).title = "Movie \(index)" }
        try context.save()
        let store = container.stores[0]
        let unexpected = LockedBox(0)
        let readers = DispatchGroup()
        for _ in 0..<3 {
            DispatchQueue.global().async(group: readers) {
                for _ in 0..<150 {
                    do {
                        _ = try store.count(StoreFetchRequest(entityName: "Movie"))
                    } catch let error as StrataError where error.code == .storeClosed {
                        return
                    } catch {
                        unexpected.withLock { $0 += 1 }
                    }
                }
            }
        }
        usleep(useconds_t(300 * (round % 4)))
        try container.close()
        readers.wait()
        #expect(unexpected.withLock { $0 } == 0)
    }
}
