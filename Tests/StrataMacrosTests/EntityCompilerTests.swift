import Foundation
import Testing

/// `@Entity`'s errors as the compiler shows them: small files that use Strata are type-checked
/// by `swiftc` against the Strata module and macro plugin that this build made, and must fail
/// as a compile fails — the macro's diagnostic and at most a few errors more — never with a
/// compiler crash.
///
/// The Swift 6.3 compiler used to crash (assertion `isConcrete()`) on a subclass of a class
/// whose `@Entity` reported an error, before showing any diagnostic: the macro then emitted
/// none of the conformances it declares.
@Suite("@Entity errors in the compiler", .timeLimit(.minutes(10)))
struct EntityCompilerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var source: String
        /// Text each error the macro reports contains.
        var diagnostics: [String]
        /// The most errors the compiler may report in all, the macro's included.
        var maximumErrors: Int
        var testDescription: String { name }
    }

    static let notFinal =
        "@Entity class 'Person' must be final; mark it @Entity(.inheritable) or @Entity(.abstract) if other entities inherit from it."

    static let cases = [
        // A literal port of Core Data's `class Student: Person`. The subclass inherits its
        // parent's snapshot conformance, so its own snapshot adds a few errors.
        Case(
            name: "a parent that is not final, and its subclass",
            source: """
                import Strata

                @Entity class Person: ManagedObject { var name: String = "" }
                @Entity final class Student: Person { var school: String = "" }
                """,
            diagnostics: [notFinal], maximumErrors: 5),
        Case(
            name: "a class that is not final, not subclassed",
            source: """
                import Strata

                @Entity class Person: ManagedObject { var name: String = "" }
                """,
            diagnostics: [notFinal], maximumErrors: 1),
        Case(
            name: "an inheritable parent with a property error, and its subclass",
            source: """
                import Strata

                @Entity(.inheritable) class Person: ManagedObject { let name: String = "" }
                @Entity final class Student: Person { var school: String = "" }
                """,
            diagnostics: ["'name' is a 'let'; @Entity properties must be 'var'"], maximumErrors: 1),
        Case(
            name: "a parent that is not final and has a property error, and its subclass",
            source: """
                import Strata

                @Entity class Person: ManagedObject { var flags: UInt8 = 0 }
                @Entity final class Student: Person { var school: String = "" }
                """,
            diagnostics: [notFinal, "'flags' has the type UInt8, which Strata cannot store."], maximumErrors: 6),
    ]

    @Test(arguments: cases)
    func reportsTheDiagnosticWithoutCrashing(_ example: Case) async throws {
        let compiler = try #require(
            SwiftCompiler.locate(),
            "No Strata module and macro plugin next to the tests, or no swiftc: build with `swift build --build-tests`."
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-compile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("main.swift")
        try example.source.write(to: file, atomically: true, encoding: .utf8)

        let result = try await compiler.typeCheck(file, moduleCache: folder.appendingPathComponent("ModuleCache"))
        let crashed = ["Stack dump", "Assertion failed", "Please submit a bug report", "#0 0x"].filter {
            result.output.contains($0)
        }
        #expect(crashed.isEmpty, "swiftc crashed:\n\(result.output)")
        #expect(result.exitedNormally && result.status == 1, "swiftc ended with \(result.status):\n\(result.output)")
        for diagnostic in example.diagnostics {
            #expect(result.output.contains(diagnostic), "no '\(diagnostic)' in:\n\(result.output)")
        }
        let errors = result.output.split(separator: "\n").filter { $0.contains(": error: ") }
        #expect(errors.count <= example.maximumErrors, "\(errors.count) errors:\n\(errors.joined(separator: "\n"))")
    }
}

/// `swiftc`, with what it needs to compile against the Strata module of the build the tests
/// run from.
struct SwiftCompiler {
    var executable: URL
    /// The folder of `Strata.swiftmodule`.
    var modules: URL
    /// The macro plugin, `StrataMacros-tool`.
    var plugin: URL
    /// The C modules' maps of the build's dependencies (`GRDBSQLite`, `CCryptoBoringSSL`, …).
    var moduleMaps: [URL]

    /// The compiler from `PATH` and the modules of the products folder the test binary is in;
    /// `nil` when either is missing.
    static func locate() -> SwiftCompiler? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard
            let executable = path.split(separator: ":").map({
                URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc")
            })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { return nil }
        // Linux: the test binary is `<products>/<Package>PackageTests.xctest`; macOS: a bundle
        // of that name in the products folder, run by a runner elsewhere.
        var candidates: [URL] = []
        if let binary = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(binary.deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        for products in candidates {
            let plugin = products.appendingPathComponent("StrataMacros-tool")
            // The tests are built against the host's copy of the modules (`Modules-tool`) when
            // the package has macros; `Modules` where the build makes one copy only.
            let modules = ["Modules-tool", "Modules"].map { products.appendingPathComponent($0) }.first {
                FileManager.default.fileExists(atPath: $0.appendingPathComponent("Strata.swiftmodule").path)
            }
            guard let modules, FileManager.default.isExecutableFile(atPath: plugin.path) else { continue }
            let checkouts = products.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "checkouts")
            return SwiftCompiler(
                executable: executable, modules: modules, plugin: plugin,
                moduleMaps: moduleMaps(in: checkouts))
        }
        return nil
    }

    /// Every `module.modulemap` in the `Sources` of the checked-out dependencies.
    static func moduleMaps(in checkouts: URL) -> [URL] {
        let packages =
            (try? FileManager.default.contentsOfDirectory(at: checkouts, includingPropertiesForKeys: nil)) ?? []
        return packages.flatMap { package -> [URL] in
            guard
                let files = FileManager.default.enumerator(
                    at: package.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)
            else { return [] }
            return files.compactMap { $0 as? URL }.filter { $0.lastPathComponent == "module.modulemap" }
        }
    }

    /// Type-checks `file` as a program of its own; returns how `swiftc` ended and everything it
    /// wrote.
    ///
    /// Waits without holding a thread: a type-check takes minutes on a loaded machine, and a
    /// cooperative thread blocked that long stalls every other test of the process.
    func typeCheck(_ file: URL, moduleCache: URL) async throws -> (exitedNormally: Bool, status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments =
            [
                "-typecheck", "-swift-version", "6", "-diagnostic-style", "llvm", "-I", modules.path,
                "-module-cache-path", moduleCache.path,
                "-load-plugin-executable", plugin.path + "#StrataMacros", file.path,
            ] + moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0.path] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let (ended, end) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in end.finish() }
        try process.run()
        // Ends when swiftc and everything it started have exited (the pipe's last writer closes).
        let reading = output.fileHandleForReading
        let data = await withCheckedContinuation { (done: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread { done.resume(returning: reading.readDataToEndOfFile()) }
        }
        for await _ in ended {}
        return (process.terminationReason == .exit, process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
