import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata schema` as text and JSON, for stores and for versioned Xcode model bundles.
@Suite(.timeLimit(.minutes(10))) struct SchemaCommandTests {
    private static func makeStore(in directory: TemporaryDirectory) throws -> (url: URL, versionHash: String) {
        let url = directory.file("Schema.sqlite")
        let container = try PersistentContainer(
            name: "Schema", entities: [Movie.self, Director.self, Critic.self], storeDescriptions: [.sqlite(url)])
        let hash = container.schema.versionHash
        try container.close()
        return (url, hash)
    }

    /// A model bundle `Model.xcdatamodeld` with `versions`, each with one entity `Note` and one
    /// attribute named `text` plus the version's name (`textModel`, `textModel2` …), and
    /// `.xccurrentversion` naming `current`.
    private static func makeModelBundle(
        in directory: TemporaryDirectory, versions: [String], current: String
    ) throws -> URL {
        let bundle = directory.file("Model.xcdatamodeld")
        for version in versions {
            let folder = bundle.appendingPathComponent(version + ".xcdatamodel", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" representedClassName="Note"><attribute name="text\(version)" attributeType="String"/></entity>
                </model>
                """
            try Data(contents.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(current).xcdatamodel</string></dict></plist>
            """
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    private func strata(_ arguments: [String]) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await offThePool { try runStrata(arguments) }
    }

    /// The lines of text output that start a version ("# …").
    private func headings(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("# ") }.map(String.init)
    }

    @Test func printsAStoresEntities() async throws {
        let directory = try TemporaryDirectory()
        let (store, hash) = try Self.makeStore(in: directory)
        let before = try Data(contentsOf: store)
        let result = try await strata(["schema", store.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
        let text = result.output
        #expect(headings(text) == ["# \(store.path)"], "\(text)")
        for line in [
            "entity Movie", "entity Director : Person", "entity Critic : Person", "entity Person (abstract)", "entity Review",
            "  title: String = \"\"", "  director -> Person (to-one, inverse directed, nullify)",
        ] {
            #expect(text.split(separator: "\n").contains(Substring(line)), "no line “\(line)” in\n\(text)")
        }
        #expect(text.contains(String(hash.prefix(12))), "\(text)")
        // A store has one schema: nothing is marked current.
        #expect(!text.contains("(current)"))
        #expect(!text.contains("\u{1B}"))
        #expect(try Data(contentsOf: store) == before, "schema wrote to the store")
    }

    @Test func jsonParsesAndMatchesTheStore() async throws {
        let directory = try TemporaryDirectory()
        let (store, hash) = try Self.makeStore(in: directory)
        for flags in [["--json"], ["--format", "json"]] {
            let result = try await strata(["schema", store.path] + flags)
            #expect(result.status == 0, "\(result.errorOutput)")
            let parsed = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
            let object = try #require(parsed as? [String: Any], "\(result.output.prefix(300))")
            #expect(object["versionHash"] as? String == hash)
            let entities = try #require(object["entities"] as? [[String: Any]])
            #expect(
                Set(entities.compactMap { $0["name"] as? String }) == ["Critic", "Director", "Movie", "Person", "Review"])
            let person = entities.first { $0["name"] as? String == "Person" }
            #expect(person?["isAbstract"] as? Bool == true)
            // It is the serialized schema: Strata reads it back to the same schema.
            let decoded = try Schema(serializedRepresentation: Data(result.output.utf8))
            #expect(decoded.versionHash == hash)
        }
    }

    @Test func marksOnlyTheCurrentVersion() async throws {
        let directory = try TemporaryDirectory()
        let bundle = try Self.makeModelBundle(
            in: directory, versions: ["Model", "Model2", "Model3", "Model4"], current: "Model4")
        let result = try await strata(["schema", bundle.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(
            headings(result.output) == ["# Model", "# Model2", "# Model3", "# Model4 (current)"], "\(result.output)")
        #expect(result.output.components(separatedBy: "(current)").count == 2, "\(result.output)")
        // Each version's own schema follows its heading.
        for version in ["Model", "Model2", "Model3", "Model4"] {
            #expect(result.output.contains("  text\(version): String"), "\(result.output)")
        }
    }

    /// The bug this guards against: matching the current version by prefix marked `Model` (a
    /// prefix of `Model4`) current too; here the current version is the first.
    @Test func marksTheCurrentVersionByItsWholeName() async throws {
        let directory = try TemporaryDirectory()
        let bundle = try Self.makeModelBundle(
            in: directory, versions: ["Model", "Model2", "Model3", "Model4"], current: "Model")
        let result = try await strata(["schema", bundle.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(headings(result.output) == ["# Model (current)", "# Model2", "# Model3", "# Model4"], "\(result.output)")
    }

    @Test func jsonShowsTheCurrentVersionOrTheOneNamed() async throws {
        let directory = try TemporaryDirectory()
        let bundle = try Self.makeModelBundle(
            in: directory, versions: ["Model", "Model2", "Model3", "Model4"], current: "Model4")
        /// The attribute names of the entity `Note` in a JSON schema.
        func attributes(_ json: String) throws -> [String] {
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8))
            let entities = try #require((parsed as? [String: Any])?["entities"] as? [[String: Any]], "\(json.prefix(300))")
            let note = try #require(entities.first { $0["name"] as? String == "Note" })
            return (note["attributes"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        let current = try await strata(["schema", bundle.path, "--json"])
        #expect(current.status == 0, "\(current.errorOutput)")
        #expect(try attributes(current.output) == ["textModel4"])
        let named = try await strata(["schema", bundle.path, "--format", "json", "--version", "Model"])
        #expect(named.status == 0, "\(named.errorOutput)")
        #expect(try attributes(named.output) == ["textModel"])
        // Text of one version: no headings.
        let text = try await strata(["schema", bundle.path, "--version", "Model2"])
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(text.output.contains("textModel2") && !text.output.contains("textModel4"), "\(text.output)")
        #expect(headings(text.output).isEmpty, "\(text.output)")

        let missing = try await strata(["schema", bundle.path, "--version", "Model5"])
        #expect(missing.status == 1)
        #expect(missing.output.isEmpty)
        #expect(missing.errorOutput.split(separator: "\n").count == 1, "\(missing.errorOutput)")
        #expect(missing.errorOutput.hasPrefix("strata: error: "), "\(missing.errorOutput)")
        #expect(missing.errorOutput.contains("Model5"), "\(missing.errorOutput)")
    }

    @Test func aSingleModelHasNoCurrentMarker() async throws {
        let directory = try TemporaryDirectory()
        let bundle = try Self.makeModelBundle(in: directory, versions: ["Model"], current: "Model")
        let result = try await strata(["schema", bundle.appendingPathComponent("Model.xcdatamodel").path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(headings(result.output) == ["# Model"], "\(result.output)")
    }

    @Test func outputWritesTheFile() async throws {
        let directory = try TemporaryDirectory()
        let (store, hash) = try Self.makeStore(in: directory)
        let file = directory.file("schema.json")
        let result = try await strata(["schema", store.path, "--json", "--output", file.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.isEmpty, "\(result.output.prefix(200))")
        let decoded = try Schema(serializedRepresentation: Data(contentsOf: file))
        #expect(decoded.versionHash == hash)
    }

    /// The diagram of a store, as a person makes one: an SVG file that renders, naming every
    /// entity; Graphviz and Mermaid text naming them too.
    @Test func diagramsOfAStoreNameEveryEntity() async throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.makeStore(in: directory)
        let entities = ["Movie", "Review", "Person", "Director", "Critic"]
        let svg = directory.file("movies.svg")
        let drawn = try await strata(["schema", store.path, "--format", "svg", "-o", svg.path])
        #expect(drawn.status == 0, "\(drawn.errorOutput)")
        let text = try String(contentsOf: svg, encoding: .utf8)
        #expect(text.hasPrefix("<?xml") || text.hasPrefix("<svg"), "\(text.prefix(80))")
        for entity in entities { #expect(text.contains(">\(entity)<") || text.contains(">\(entity) "), "\(entity)") }
        let png = directory.file("movies.png")
        let rendered = try await offThePool { () throws -> Int32? in
            let renderer = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
            guard FileManager.default.isExecutableFile(atPath: renderer.path) else {
                if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("rsvg-convert is missing") }
                return nil
            }
            let process = Process()
            process.executableURL = renderer
            process.arguments = [svg.path, "-o", png.path]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        if let rendered {
            #expect(rendered == 0)
            #expect((try? Data(contentsOf: png).count) ?? 0 > 1_000)
        }
        for format in ["dot", "mermaid"] {
            let result = try await strata(["schema", store.path, "--format", format])
            #expect(result.status == 0, "\(result.errorOutput)")
            for entity in entities { #expect(result.output.contains(entity), "\(format) \(entity)") }
        }
    }
}
