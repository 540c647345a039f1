import Foundation
import StrataTesting
import Testing

@testable import Strata

/// Closing a container while other threads read its store: reads in flight finish, later ones
/// fail with `storeClosed`, and nothing crashes (a read could once pick a reader GRDB had just
/// closed).
@Suite(.timeLimit(.minutes(1))) struct CloseWhileReadingTests {
    @Test(arguments: 0..<20) func readsRacingACloseEndCleanly(round: Int) async throws {
        let directory = try TemporaryDirectory()
        let container = try PersistentContainer(
            name: "Race", entities: [Movie.self], storeDescriptions: [.sqlite(directory.file("Race.sqlite"))])
        let context = container.newBackgroundContext()
        for index in 0..<50 { Movie(context: context).title = "Movie \(index)" }
        try context.save()
        let store = container.stores[0]
        let unexpected = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var unexpected = 0
                    for _ in 0..<200 {
                        do {
                            _ = try store.count(StoreFetchRequest(entityName: "Movie"))
                        } catch let error as StrataError where error.code == .storeClosed {
                            break
                        } catch {
                            unexpected += 1
                        }
                    }
                    return unexpected
                }
            }
            try await Task.sleep(for: .microseconds(200 * (round % 5)))
            try container.close()
            return try await group.reduce(0, +)
        }
        #expect(unexpected == 0)
    }
}
