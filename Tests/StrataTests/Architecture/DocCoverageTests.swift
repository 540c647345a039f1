import Foundation
import StrataTesting
import Testing

/// `scripts/doc-coverage.py`, which `scripts/test.sh` runs before every build, keeps the main
/// API documented with an example on every public function. These tests make sure the gate
/// itself can fail.
@Suite struct DocCoverageTests {
    /// Runs the script with both requirements at 100% on a folder holding `source`, and
    /// returns its exit status.
    static func check(_ source: String) throws -> Int32 {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("API")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try source.write(to: folder.appendingPathComponent("API.swift"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", LayerCheckTests.repository.appendingPathComponent("scripts/doc-coverage.py").path,
            "--require-documented", "100", "--require-examples", "100", folder.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func theMainAPIPasses() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "scripts/doc-coverage.py", "--require-documented", "100", "--require-examples", "100"]
            + ["Query", "Objects", "History", "Repository", "Stack", "Migration", "Observation"].map { "Sources/Strata/\($0)" }
            + ["Sources/StrataPostgres"]
        process.currentDirectoryURL = LayerCheckTests.repository
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func anUndocumentedPublicFunctionFails() throws {
        #expect(try Self.check("public struct Shelf {\n    public func sort() {}\n}\n") == 1)
    }

    @Test func aFunctionWithoutAnExampleFails() throws {
        #expect(try Self.check("/// A shelf.\npublic struct Shelf {\n    /// Sorts the shelf.\n    public func sort() {}\n}\n") == 1)
    }

    @Test func aDocumentedFunctionWithAnExamplePasses() throws {
        let source = """
            /// A shelf.
            public struct Shelf {
                /// Sorts the shelf.
                ///
                /// For example:
                ///
                /// ```swift
                /// shelf.sort()
                /// ```
                public func sort() {}
                /// Internal helpers need nothing.
                func tidy() {}
            }

            """
        #expect(try Self.check(source) == 0)
    }
}
