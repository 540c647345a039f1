import Foundation
import Testing

@testable import Strata
@testable import StrataCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `SchemaDiagram`: what each format shows, that names are escaped for it, and that the SVG and
/// Graphviz outputs are accepted by real renderers (`rsvg-convert` from librsvg2-bin, `dot` from
/// graphviz) where those are installed.
@Suite struct SchemaDiagramTests {
    /// The three formats, so that each expectation runs against all of them.
    enum Format: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case dot, mermaid, svg

        func render(_ schema: Schema) -> String {
            switch self {
            case .dot: SchemaDiagram.dot(schema)
            case .mermaid: SchemaDiagram.mermaid(schema)
            case .svg: SchemaDiagram.svg(schema)
            }
        }

        var testDescription: String { rawValue }
    }

    /// `Movie.director` and `Person.movies` are inverses; `Movie.reviews` (ordered, cascade) and
    /// `Review.movie` (required) too; `Movie.studio` has no inverse. `Car` inherits `wheels` from
    /// the abstract `Vehicle`.
    static func cinemaEntities() -> [EntityDescription] {
        [
            EntityDescription(
                name: "Movie",
                attributes: [
                    AttributeDescription(name: "title", type: .string, isOptional: true),
                    AttributeDescription(name: "year", type: .integer64, isIndexed: true),
                    AttributeDescription(name: "poster", type: .codable, isOptional: true, valueTypeName: "Poster"),
                ],
                relationships: [
                    RelationshipDescription(name: "director", destination: "Person", inverse: "movies"),
                    RelationshipDescription(
                        name: "reviews", destination: "Review", inverse: "movie", isToMany: true, isOrdered: true,
                        deleteRule: .cascade),
                    RelationshipDescription(name: "studio", destination: "Studio"),
                ],
                uniquenessConstraints: [["title"], ["title", "year"]]),
            EntityDescription(
                name: "Person",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "movies", destination: "Movie", inverse: "director", isToMany: true)
                ]),
            EntityDescription(
                name: "Review",
                attributes: [AttributeDescription(name: "stars", type: .integer16)],
                relationships: [
                    RelationshipDescription(name: "movie", destination: "Movie", inverse: "reviews", isOptional: false)
                ]),
            EntityDescription(name: "Studio", attributes: [AttributeDescription(name: "city", type: .string)]),
            EntityDescription(
                name: "Vehicle", isAbstract: true, attributes: [AttributeDescription(name: "wheels", type: .integer16)]),
            EntityDescription(
                name: "Car", superentity: "Vehicle", attributes: [AttributeDescription(name: "plate", type: .string)]),
        ]
    }

    static func makeCinemaSchema() throws -> Schema {
        try Schema(cinemaEntities())
    }

    /// Names no validated schema allows but a store's recorded schema could still carry: each
    /// needs escaping in at least one format.
    static func makeAwkwardSchema() -> Schema {
        Schema.lenient(
            [
                EntityDescription(
                    name: "A<B",
                    attributes: [
                        AttributeDescription(name: "x&y", type: .string),
                        AttributeDescription(name: "say\"hi\"", type: .string, isOptional: true),
                    ],
                    relationships: [
                        RelationshipDescription(name: "to<C>", destination: "Say\"Hi\"", inverse: "back\\ref")
                    ]),
                EntityDescription(
                    name: "Say\"Hi\"",
                    relationships: [RelationshipDescription(name: "back\\ref", destination: "A<B", inverse: "to<C>")]),
                EntityDescription(name: "Q&A", superentity: "A<B"),
            ], objectTypes: [:])
    }

    /// Ten entities in a grid of four columns, so that edges run between neighbours, across
    /// several columns and rows, from an entity to itself, and along inheritance chains.
    static func makeLargeSchema() throws -> Schema {
        func entity(
            _ name: String, parent: String? = nil, _ attributes: [String] = ["name"],
            _ relationships: [RelationshipDescription] = []
        ) -> EntityDescription {
            EntityDescription(
                name: name, superentity: parent,
                attributes: attributes.map { AttributeDescription(name: $0, type: .string, isOptional: true) },
                relationships: relationships)
        }
        return try Schema([
            entity(
                "Company", ["name", "founded", "country"],
                [
                    RelationshipDescription(
                        name: "staff", destination: "Employee", inverse: "employer", isToMany: true),
                    RelationshipDescription(name: "offices", destination: "Office", inverse: "company", isToMany: true),
                ]),
            entity(
                "Person", ["firstName", "lastName"],
                [
                    RelationshipDescription(name: "spouse", destination: "Person", inverse: "spouse"),
                    RelationshipDescription(name: "address", destination: "Address", inverse: "residents"),
                ]),
            entity(
                "Employee", parent: "Person", ["badge"],
                [
                    RelationshipDescription(name: "employer", destination: "Company", inverse: "staff"),
                    RelationshipDescription(name: "manager", destination: "Employee", inverse: "reports"),
                    RelationshipDescription(
                        name: "reports", destination: "Employee", inverse: "manager", isToMany: true),
                    RelationshipDescription(
                        name: "projects", destination: "Project", inverse: "members", isToMany: true),
                ]),
            entity("Manager", parent: "Employee", ["level"]),
            entity(
                "Project", ["code", "budget"],
                [
                    RelationshipDescription(
                        name: "members", destination: "Employee", inverse: "projects", isToMany: true),
                    RelationshipDescription(name: "tasks", destination: "Task", inverse: "project", isToMany: true),
                ]),
            entity(
                "Task", ["summary", "due"],
                [
                    RelationshipDescription(name: "project", destination: "Project", inverse: "tasks"),
                    RelationshipDescription(name: "tags", destination: "Tag"),
                ]),
            entity("Tag", ["label"]),
            entity(
                "Office", ["city"],
                [
                    RelationshipDescription(name: "company", destination: "Company", inverse: "offices"),
                    RelationshipDescription(name: "address", destination: "Address"),
                ]),
            entity(
                "Address", ["street", "city", "postcode"],
                [RelationshipDescription(name: "residents", destination: "Person", inverse: "address", isToMany: true)]),
            entity("Invoice", ["number", "total"], [RelationshipDescription(name: "project", destination: "Project")]),
        ])
    }

    // MARK: Content

    @Test(arguments: Format.allCases)
    func everyEntityAndAttributeAppears(format: Format) throws {
        let schema = try Self.makeCinemaSchema()
        let text = format.render(schema)
        for entity in schema.entities {
            #expect(text.contains(entity.name), "\(format) lacks entity \(entity.name)")
            for attribute in entity.declaration.attributes {
                #expect(text.contains(attribute.name), "\(format) lacks \(entity.name).\(attribute.name)")
            }
        }
    }

    @Test(arguments: Format.allCases)
    func inheritedAttributesShowOnlyOnTheSuperentity(format: Format) throws {
        let text = format.render(try Self.makeCinemaSchema())
        #expect(text.components(separatedBy: "wheels").count == 2, "\(format) shows `wheels` more than once")
    }

    @Test func attributesShowTypeOptionalityAndMarks() throws {
        let schema = try Self.makeCinemaSchema()
        for text in [SchemaDiagram.dot(schema), SchemaDiagram.svg(schema)] {
            #expect(text.contains("title: String? [unique]"))
            #expect(text.contains("year: Integer 64 [indexed]"))
            #expect(text.contains("poster: Codable&lt;Poster&gt;?"))
            #expect(text.contains("unique(title, year)"))
        }
        let mermaid = SchemaDiagram.mermaid(schema)
        #expect(mermaid.contains("String title UK \"optional\""))
        #expect(mermaid.contains("Integer64 year \"indexed\""))
        #expect(mermaid.contains("Codable poster \"Poster, optional\""))
        #expect(mermaid.contains("%% Movie is unique by (title, year)"))
    }

    /// A relationship and its inverse make one edge that names both; a relationship without an
    /// inverse makes a one-way edge.
    @Test(arguments: Format.allCases)
    func relationshipAndInverseAppearOnce(format: Format) throws {
        let text = format.render(try Self.makeCinemaSchema())
        let lines = text.split(separator: "\n")
        let directorLines = lines.filter { $0.contains("director") }
        #expect(directorLines.count == 1, "\(format): \(directorLines)")
        #expect(directorLines.allSatisfy { $0.contains("0..1") })
        #expect(lines.filter { $0.contains("movies") }.count == 1)
        #expect(text.contains("reviews") && text.contains("0..* {ordered, cascade}"))
        #expect(text.contains("studio"))
        switch format {
        case .dot:
            let edge = try #require(directorLines.first)
            #expect(edge.hasPrefix("    \"Movie\" -> \"Person\" [class=\"relationship\", dir=both"))
            #expect(edge.contains("arrowhead=teeodot") && edge.contains("arrowtail=crowodot"))
            #expect(edge.contains("headlabel=\"director\\n0..1\"") && edge.contains("taillabel=\"movies\\n0..*\""))
            #expect(text.contains("\"Movie\" -> \"Studio\" [class=\"relationship one-way\", arrowhead=vee"))
        case .mermaid:
            #expect(text.contains("\"Movie\" }o..o| \"Person\" : \"director 0..1 / movies 0..*\""))
            #expect(text.contains("\"Movie\" ||..o{ \"Review\" : \"reviews 0..* {ordered, cascade} / movie 1\""))
            #expect(text.contains("\"Movie\" }o..o| \"Studio\" : \"studio 0..1 (no inverse)\""))
        case .svg:
            let document = try XMLDocument(xmlString: text, options: [])
            #expect(try elements(named: "path", withClass: "relationship", in: document).count == 2)
            let oneWay = try elements(named: "path", withClass: "relationship one-way", in: document)
            #expect(oneWay.count == 1)
            #expect(attribute("marker-end", of: oneWay.first) == "url(#arrow)")
        }
    }

    @Test(arguments: Format.allCases)
    func inheritanceAppears(format: Format) throws {
        let text = format.render(try Self.makeCinemaSchema())
        switch format {
        case .dot:
            #expect(text.contains("\"Vehicle\" -> \"Car\" [class=\"inheritance\", dir=back, arrowtail=empty"))
            #expect(text.contains("<B><I>Vehicle</I></B> (abstract)"))
        case .mermaid:
            #expect(text.contains("\"Car\" |o--|| \"Vehicle\" : \"inherits\""))
            #expect(text.contains("%% Vehicle is abstract"))
        case .svg:
            let document = try XMLDocument(xmlString: text, options: [])
            let inheritance = try elements(named: "path", withClass: "inheritance", in: document)
            #expect(inheritance.count == 1)
            #expect(attribute("marker-end", of: inheritance.first) == "url(#inherits)")
            #expect(texts(in: document).contains("Vehicle (abstract)"))
        }
    }

    /// An entity that is its own inverse (`Person.spouse`) is one edge with one label.
    @Test(arguments: Format.allCases)
    func relationshipThatIsItsOwnInverseAppearsOnce(format: Format) throws {
        let text = format.render(try Self.makeLargeSchema())
        #expect(text.components(separatedBy: "spouse").count == 2, "\(format)")
    }

    // MARK: Escaping

    @Test func dotEscapesNames() {
        let dot = SchemaDiagram.dot(Self.makeAwkwardSchema())
        #expect(dot.contains("\"A<B\" [label=<<TABLE"))
        #expect(dot.contains("<B>A&lt;B</B>"))
        #expect(dot.contains("\"Say\\\"Hi\\\"\" [label=<"))
        #expect(dot.contains("<B>Say&quot;Hi&quot;</B>"))
        #expect(dot.contains("<B>Q&amp;A</B>"))
        #expect(dot.contains("x&amp;y: String"))
        #expect(dot.contains("say&quot;hi&quot;: String?"))
        #expect(dot.contains("\"back\\\\ref\\n0..1\""))
        #expect(!dot.contains("<B>A<B</B>"))
    }

    @Test func mermaidKeepsNamesWithinItsIdentifierRules() {
        let mermaid = SchemaDiagram.mermaid(Self.makeAwkwardSchema())
        #expect(mermaid.contains("\"A<B\" {"))
        #expect(mermaid.contains("String x_y \"named x&y\""))
        #expect(mermaid.contains("String say_hi_ \"optional, named say'hi'\""))
        #expect(mermaid.contains("\"Say_Hi_\""))
        #expect(mermaid.contains("\"Q&A\" |o--|| \"A<B\" : \"inherits\""))
        #expect(mermaid.contains("\"A<B\" |o..o| \"Say_Hi_\" : \"to<C> 0..1 / back\\ref 0..1\""))
        // Every quoted string closes on its own line.
        for line in mermaid.split(separator: "\n") {
            #expect(line.filter { $0 == "\"" }.count % 2 == 0, "unbalanced quotes: \(line)")
        }
    }

    @Test func mermaidAvoidsKeywordsAndKeyMarkers() {
        #expect(SchemaDiagram.mermaidAttributeName("pk") == "pk_")
        #expect(SchemaDiagram.mermaidAttributeName("UK") == "UK_")
        #expect(SchemaDiagram.mermaidAttributeName("pkg") == "pkg")
        #expect(SchemaDiagram.mermaidAttributeName("2nd") == "_2nd")
        #expect(SchemaDiagram.mermaidAttributeName("café") == "café")
        let schema = Schema.lenient(
            [EntityDescription(name: "Classroom"), EntityDescription(name: "one")], objectTypes: [:])
        let mermaid = SchemaDiagram.mermaid(schema)
        #expect(mermaid.contains("    \"Classroom\"\n"))
        #expect(mermaid.contains("    \"one\"\n"))
    }

    @Test func svgEscapesNames() throws {
        let svg = SchemaDiagram.svg(Self.makeAwkwardSchema())
        let document = try XMLDocument(xmlString: svg, options: [])
        let texts = texts(in: document)
        for expected in [
            "A<B", "Say\"Hi\"", "Q&A", "x&y: String", "say\"hi\": String?", "to<C> 0..1", "back\\ref 0..1",
        ] {
            #expect(texts.contains(expected), "no text \(expected) in \(texts)")
        }
    }

    // MARK: Documents

    @Test func svgIsAStandaloneDocument() throws {
        let svg = SchemaDiagram.svg(try Self.makeLargeSchema())
        let document = try XMLDocument(xmlString: svg, options: [])
        let root = try #require(document.rootElement())
        #expect(root.localName == "svg")
        #expect(root.uri == "http://www.w3.org/2000/svg")
        #expect(attribute("version", of: root) == "1.1")
        let width = try #require(attribute("width", of: root).flatMap(Double.init))
        let height = try #require(attribute("height", of: root).flatMap(Double.init))
        #expect(width > 0 && height > 0)
        #expect(attribute("viewBox", of: root) == "0 0 \(svgNumber(width)) \(svgNumber(height))")
        #expect(try elements(named: "g", withClass: "entity", in: document).count == 10)
    }

    /// Edges run in the gaps between boxes: no segment passes through a box it does not start
    /// or end at.
    @Test func svgEdgesGoAroundBoxes() throws {
        let document = try XMLDocument(xmlString: SchemaDiagram.svg(try Self.makeLargeSchema()), options: [])
        let boxes = try elements(named: "g", withClass: "entity", in: document).compactMap { group -> Frame? in
            let rect = group.children?.compactMap { $0 as? XMLElement }.first { $0.localName == "rect" }
            return rect.flatMap(Frame.init)
        }
        #expect(boxes.count == 10)
        let paths = try document.nodes(forXPath: "//*[local-name()='path'][@class]").compactMap { $0 as? XMLElement }
        // 2 inheritance edges, 7 relationships with inverses (one of them its own), 3 one-way.
        #expect(paths.count == 12)
        for path in paths {
            let points = try #require(attribute("d", of: path)).split(separator: " ").map { step in
                step.dropFirst().split(separator: ",").compactMap { Double($0) }
            }
            for (start, end) in zip(points, points.dropFirst()) where start.count == 2 && end.count == 2 {
                for box in boxes {
                    #expect(
                        !box.isCrossed(fromX: start[0], y: start[1], toX: end[0], y: end[1]),
                        "a segment of \(attribute("d", of: path) ?? "") crosses a box")
                }
            }
        }
    }

    @Test(arguments: Format.allCases)
    func outputIsDeterministic(format: Format) throws {
        let schema = try Self.makeCinemaSchema()
        let reordered = try Schema(Self.cinemaEntities().reversed())
        #expect(format.render(schema) == format.render(schema))
        #expect(format.render(schema) == format.render(reordered))
    }

    @Test(arguments: Format.allCases)
    func emptySchemaMakesAValidDiagram(format: Format) throws {
        let text = format.render(try Schema([EntityDescription]()))
        switch format {
        case .dot: #expect(text.contains("digraph Schema {") && text.hasSuffix("}\n"))
        case .mermaid: #expect(text.hasPrefix("erDiagram\n"))
        case .svg: #expect(try XMLDocument(xmlString: text, options: []).rootElement()?.localName == "svg")
        }
    }

    // MARK: Real renderers

    /// librsvg (`apt-get install librsvg2-bin`) renders every SVG the tests make.
    @Test func rsvgRendersTheSVG() throws {
        // scripts/test.sh installs the renderer; a run without it (a bare `swift test`) skips.
        guard let rsvg = try executable(named: "rsvg-convert") else { return }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schemas = [
            try Self.makeCinemaSchema(), try Self.makeLargeSchema(), Self.makeAwkwardSchema(),
            try Schema([EntityDescription]()),
        ]
        for (index, schema) in schemas.enumerated() {
            let input = folder.appendingPathComponent("diagram\(index).svg")
            let output = folder.appendingPathComponent("diagram\(index).png")
            try SchemaDiagram.svg(schema).write(to: input, atomically: true, encoding: .utf8)
            let result = try run(rsvg, ["--format", "png", "--output", output.path, input.path])
            #expect(result.status == 0, "rsvg-convert failed on diagram \(index): \(result.errorOutput)")
            let size = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int
            #expect((size ?? 0) > 0)
        }
    }

    /// Graphviz (`apt-get install graphviz`) lays out every dot file the tests make, without
    /// warnings (an unknown arrow shape or a bad HTML label only warns).
    @Test func graphvizRendersTheDot() throws {
        guard let dot = try executable(named: "dot") else { return }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schemas = [
            try Self.makeCinemaSchema(), try Self.makeLargeSchema(), Self.makeAwkwardSchema(),
            try Schema([EntityDescription]()),
        ]
        for (index, schema) in schemas.enumerated() {
            let input = folder.appendingPathComponent("diagram\(index).dot")
            let output = folder.appendingPathComponent("diagram\(index).svg")
            try SchemaDiagram.dot(schema).write(to: input, atomically: true, encoding: .utf8)
            let result = try run(dot, ["-Tsvg", "-o", output.path, input.path])
            #expect(result.status == 0, "dot failed on diagram \(index): \(result.errorOutput)")
            let complaints = result.errorOutput.split(separator: "\n").filter {
                $0.hasPrefix("Warning") || $0.hasPrefix("Error")
            }
            #expect(complaints.isEmpty, "dot complained about diagram \(index): \(complaints)")
            let size = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int
            #expect((size ?? 0) > 0)
        }
    }

    // MARK: Helpers

    /// A box of the SVG drawing.
    struct Frame {
        var x: Double, y: Double, width: Double, height: Double

        init?(_ rect: XMLElement) {
            func value(_ name: String) -> Double? { attribute(name, of: rect).flatMap(Double.init) }
            guard let x = value("x"), let y = value("y"), let width = value("width"), let height = value("height")
            else {
                return nil
            }
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        /// Whether an axis-parallel segment runs through the inside of the box (touching its
        /// border, as edges do where they end, does not count).
        func isCrossed(fromX x1: Double, y y1: Double, toX x2: Double, y y2: Double) -> Bool {
            let inset = 0.5
            let (left, right) = (min(x1, x2), max(x1, x2))
            let (top, bottom) = (min(y1, y2), max(y1, y2))
            return left < x + width - inset && right > x + inset && top < y + height - inset && bottom > y + inset
        }
    }

    func elements(named name: String, withClass cssClass: String, in document: XMLDocument) throws -> [XMLElement] {
        try document.nodes(forXPath: "//*[local-name()='\(name)'][@class='\(cssClass)']").compactMap {
            $0 as? XMLElement
        }
    }

    func texts(in document: XMLDocument) -> [String] {
        ((try? document.nodes(forXPath: "//*[local-name()='text']")) ?? []).compactMap(\.stringValue)
    }

    func svgNumber(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The tool `name` on the PATH; in CI (where scripts/test.sh installed it) its absence is a
    /// failure, so that the render checks can never pass unrun.
    func executable(named name: String) throws -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let found = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        if found == nil, ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("\(name) is missing; scripts/test.sh installs it.")
        }
        return found
    }

    func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "SchemaDiagramTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, errorOutput: String) {
        let child = Process()
        child.executableURL = executable
        child.arguments = arguments
        let errorPipe = Pipe()
        child.standardOutput = FileHandle.nullDevice
        child.standardError = errorPipe
        try child.run()
        let errorOutput = errorPipe.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        return (child.terminationStatus, String(decoding: errorOutput, as: UTF8.self))
    }
}

/// The value of `element`'s attribute `name`. FoundationXML's `attribute(forName:)` finds nothing
/// on elements in a default namespace, as every SVG element is, so this looks through them all.
private func attribute(_ name: String, of element: XMLElement?) -> String? {
    element?.attributes?.first { $0.name == name }?.stringValue
}
