import Foundation
import StrataTesting
import Testing

@Suite struct SaveLoopCommandTests {
    /// A negative count used to be read as an option `-5`, and the message said "Missing value".
    @Test(arguments: [["--batches", "-5"], ["--batches=-5"]])
    func negativeBatchCountIsRefusedWithItsRule(_ batches: [String]) async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("SaveLoop.sqlite")
        let result = try await runStrata(["save-loop", "--store", store.path] + batches)
        #expect(result.status != 0)
        #expect(result.errorOutput.contains("--batches must be 0 or more; got -5."), "\(result.errorOutput)")
        #expect(!result.errorOutput.contains("Missing value"))
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }

    @Test func zeroBatchesOpensTheStoreAndSavesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("SaveLoop.sqlite")
        let result = try await runStrata(["save-loop", "--store", store.path, "--batches", "0"])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(FileManager.default.fileExists(atPath: store.path))
    }
}
