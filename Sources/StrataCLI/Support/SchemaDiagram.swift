import Foundation
import Strata

/// Entity-relationship diagrams of a ``Schema``: entities with their attributes and types,
/// relationships with their cardinalities and inverses, and inheritance.
///
/// `strata schema STORE --format dot|mermaid|svg` prints one of three formats:
/// - ``dot(_:)``: Graphviz source, for `dot -Tsvg` or `dot -Tpng`, which lays out large models best;
/// - ``mermaid(_:)``: a Mermaid `erDiagram`, which GitHub and many wikis render inside Markdown;
/// - ``svg(_:)``: a finished drawing, for when neither tool is at hand.
///
/// All three show the same things:
/// - each entity once, with its own attributes only (inherited ones show on the superentity),
///   each with its type, `?` when optional, and `[unique, indexed, transient]` marks, followed by
///   the entity's uniqueness constraints over several properties;
/// - a relationship and its inverse as one edge, each end labelled with the name and cardinality
///   of the relationship that points at it: `director 0..1` next to `Person` and `movies 0..*` next
///   to `Movie` for `Movie.director` and its inverse `Person.movies`; ordered relationships and
///   delete rules other than nullify are noted in braces (`reviews 0..* {ordered, cascade}`);
/// - a relationship without an inverse as a one-way edge, labelled at its destination;
/// - inheritance as an edge of its own style, pointing at the superentity.
///
/// Entities, attributes and relationships are sorted by name, so the same schema gives the same
/// bytes however its entities were declared: diagrams can be committed and diffed.
///
/// ```swift
/// let schema = try Schema([movie, person])
/// try SchemaDiagram.svg(schema).write(toFile: "schema.svg", atomically: true, encoding: .utf8)
/// ```
enum SchemaDiagram {
    /// The schema as a Graphviz `digraph`.
    ///
    /// Entities are HTML-like table nodes; relationship ends carry crow's-foot arrows
    /// (`crow` for many, `tee` for one, `odot` for optional) and their names as head and tail
    /// labels. Inheritance edges run from the superentity to the subentity with a hollow arrow at
    /// the superentity, so that `dot` ranks superentities above their subentities. Edges carry
    /// a `class` (`relationship`, `relationship one-way`, `inheritance`) for styling the SVG
    /// Graphviz makes.
    ///
    /// - Parameter schema: The schema to draw.
    /// - Returns: Graphviz source; render it with `dot -Tsvg` or `dot -Tpng`.
    static func dot(_ schema: Schema) -> String {
        let model = Model(schema)
        var lines = [
            "// Entity-relationship diagram of a Strata schema; render with `dot -Tsvg` or `dot -Tpng`.",
            "digraph Schema {",
            "    graph [fontname=\"Helvetica\", nodesep=\"0.7\", ranksep=\"0.9\"];",
            "    node [shape=plain, fontname=\"Helvetica\", fontsize=\"11\"];",
            "    edge [fontname=\"Helvetica\", fontsize=\"9\", color=\"#4a5d7a\", labeldistance=\"1.8\"];",
        ]
        for entity in model.entities {
            lines.append("    \(dotQuoted(entity.name)) [label=<\(dotTable(for: entity))>];")
        }
        for generalization in model.generalizations {
            // Drawn from the superentity so that `dot` ranks it above its subentities; `dir=back`
            // puts the hollow arrow at the superentity all the same.
            lines.append(
                "    \(dotQuoted(generalization.superentity)) -> \(dotQuoted(generalization.subentity))"
                    + " [class=\"inheritance\", dir=back, arrowtail=empty, arrowsize=\"1.3\", color=\"#333333\"];")
        }
        for link in model.links {
            var attributes: [String]
            if let inverse = link.inverse {
                attributes = [
                    "class=\"relationship\"", "dir=both",
                    "arrowhead=\(dotArrow(for: link.forward))", "arrowtail=\(dotArrow(for: inverse))",
                    "headlabel=\(dotLabel(for: link.forward))", "taillabel=\(dotLabel(for: inverse))",
                ]
            } else if link.isOwnInverse {
                attributes = [
                    "class=\"relationship\"", "dir=both",
                    "arrowhead=\(dotArrow(for: link.forward))", "arrowtail=\(dotArrow(for: link.forward))",
                    "headlabel=\(dotLabel(for: link.forward))",
                ]
            } else {
                attributes = [
                    "class=\"relationship one-way\"", "arrowhead=vee", "headlabel=\(dotLabel(for: link.forward))",
                ]
            }
            let ends = "\(dotQuoted(link.source)) -> \(dotQuoted(link.destination))"
            lines.append("    \(ends) [\(attributes.joined(separator: ", "))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The schema as a Mermaid `erDiagram`.
    ///
    /// Entity names are always quoted, since Mermaid reads some bare words (`class`, `style`,
    /// `one`, `many`) as keywords even at the start of a longer name; characters Mermaid cannot
    /// quote (`"`, `%`, `\`, line breaks) become `_`. Attributes read `Type name`, with `UK` for
    /// a single-attribute uniqueness constraint and a comment for the rest (`"optional, indexed"`).
    /// Relationships are dotted lines with crow's-foot ends, labelled `forward / inverse` with both
    /// cardinalities. Mermaid's `erDiagram` has no inheritance, so a subentity is joined to its
    /// superentity by a solid (identifying) line labelled `inherits`, each subentity being exactly
    /// one instance of its superentity; abstract entities and constraints over several properties
    /// are `%%` comments.
    ///
    /// - Parameter schema: The schema to draw.
    /// - Returns: Mermaid source, starting with `erDiagram`.
    static func mermaid(_ schema: Schema) -> String {
        let model = Model(schema)
        let names = mermaidEntityNames(for: model.entities)
        func name(_ entityName: String) -> String { "\"" + (names[entityName] ?? "_") + "\"" }
        var lines = [
            "erDiagram",
            "    %% Entity-relationship diagram of a Strata schema. Attributes read \"Type name\";",
            "    %% relationships are dotted; a solid \"inherits\" line joins a subentity to its superentity.",
        ]
        for entity in model.entities {
            if entity.isAbstract { lines.append("    %% \(mermaidComment(entity.name)) is abstract") }
            for constraint in compositeUniquenessConstraints(of: entity) {
                let properties = mermaidComment(constraint.joined(separator: ", "))
                lines.append("    %% \(mermaidComment(entity.name)) is unique by (\(properties))")
            }
            let attributes = ownAttributes(of: entity)
            guard !attributes.isEmpty else {
                lines.append("    \(name(entity.name))")
                continue
            }
            lines.append("    \(name(entity.name)) {")
            for attribute in attributes { lines.append("        " + mermaidAttribute(attribute, of: entity)) }
            lines.append("    }")
        }
        for generalization in model.generalizations {
            lines.append(
                "    \(name(generalization.subentity)) |o--|| \(name(generalization.superentity)) : \"inherits\"")
        }
        for link in model.links {
            // Mermaid's left marker says how many sources one destination has (the inverse's
            // cardinality), the right one how many destinations one source has (the forward one's).
            let label: String
            let left: String
            if let inverse = link.inverse {
                label = endLabel(for: link.forward) + " / " + endLabel(for: inverse)
                left = (isToManyEnd(inverse) ? "}" : "|") + (isRequiredEnd(inverse) ? "|" : "o")
            } else if link.isOwnInverse {
                label = endLabel(for: link.forward) + " (its own inverse)"
                left = (isToManyEnd(link.forward) ? "}" : "|") + (isRequiredEnd(link.forward) ? "|" : "o")
            } else {
                // Without an inverse nothing limits how many sources share one destination.
                label = endLabel(for: link.forward) + " (no inverse)"
                left = "}o"
            }
            let right = (isRequiredEnd(link.forward) ? "|" : "o") + (isToManyEnd(link.forward) ? "{" : "|")
            lines.append(
                "    \(name(link.source)) \(left)..\(right) \(name(link.destination)) : \"\(mermaidComment(label))\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The schema as a standalone SVG 1.1 drawing, made without external tools.
    ///
    /// Entities are boxes in a grid, row by row: each inheritance tree together (a superentity
    /// before its subentities), and trees one after the other along their relationships, so that
    /// related boxes tend to be neighbours.
    /// A box has a filled title row (italic for abstract entities) and one row per own attribute;
    /// its size comes from its text, estimated for a 12-pixel monospace font at 7.2 pixels a
    /// character. Edges are orthogonal lines that run in the gaps between boxes, never across one:
    /// relationships with crow's feet at to-many ends and open arrows at the destination of
    /// one-way relationships, inheritance with a hollow triangle at the superentity. Each
    /// relationship end is labelled next to the box it enters.
    ///
    /// Paths carry a `class` (`relationship`, `relationship one-way`, `inheritance`) and boxes
    /// the class `entity`, for styling and tests.
    ///
    /// - Parameter schema: The schema to draw.
    /// - Returns: An SVG document with `xmlns`, `width`, `height` and `viewBox`.
    static func svg(_ schema: Schema) -> String {
        SVGDrawing(model: Model(schema)).render()
    }
}

// MARK: - What every format draws

extension SchemaDiagram {
    /// The entities, relationship edges and inheritance edges of a schema, in drawing order.
    struct Model {
        /// The schema's entities, sorted by name.
        let entities: [Entity]
        /// One edge per relationship and its inverse.
        let links: [Link]
        /// One edge per entity with a superentity.
        let generalizations: [Generalization]

        init(_ schema: Schema) {
            entities = schema.entities.sorted { $0.name < $1.name }
            generalizations = entities.compactMap { entity in
                entity.superentity.map { Generalization(subentity: entity.name, superentity: $0.name) }
            }
            // A relationship and its inverse make one edge: the first of the two in name order
            // draws it and marks the other as drawn.
            var links: [Link] = []
            var drawn: Set<PropertyKey> = []
            for entity in entities {
                for relationship in SchemaDiagram.ownRelationships(of: entity) {
                    let key = PropertyKey(entity: entity.name, property: relationship.name)
                    // A destination outside the schema (a schema built without validation) has
                    // no box to point at.
                    guard drawn.insert(key).inserted,
                        let destination = schema.entity(named: relationship.destinationEntityName)
                    else { continue }
                    var link = Link(
                        source: entity.name, forward: relationship, destination: destination.name, inverse: nil,
                        isOwnInverse: false)
                    if let inverseName = relationship.inverseName,
                        let inverse = destination.relationship(named: inverseName)
                    {
                        let owner = SchemaDiagram.declaringEntity(ofRelationship: inverseName, from: destination)
                        let inverseKey = PropertyKey(entity: owner.name, property: inverseName)
                        if inverseKey == key {
                            link.isOwnInverse = true
                        } else if drawn.insert(inverseKey).inserted {
                            link.inverse = inverse
                        }
                    }
                    links.append(link)
                }
            }
            self.links = links
        }
    }

    /// A relationship edge: a relationship and, when it has one, its inverse.
    struct Link {
        /// The entity that declares ``forward``.
        var source: String
        /// The relationship drawn from ``source`` to ``destination``.
        var forward: RelationshipDescription
        /// The entity ``forward`` points at.
        var destination: String
        /// The relationship that points back, drawn on the same edge; `nil` for a one-way
        /// relationship, or when ``forward`` is its own inverse.
        var inverse: RelationshipDescription?
        /// Whether ``forward`` is its own inverse (`Person.spouse`), so that one label serves both ends.
        var isOwnInverse: Bool
    }

    /// An inheritance edge.
    struct Generalization {
        /// The inheriting entity.
        var subentity: String
        /// The entity it inherits from.
        var superentity: String
    }

    /// A property of an entity, to remember which relationships an edge already shows.
    struct PropertyKey: Hashable {
        var entity: String
        var property: String
    }

    /// The entity's own attributes, sorted by name; inherited ones show on the superentity.
    static func ownAttributes(of entity: Entity) -> [AttributeDescription] {
        entity.declaration.attributes.sorted { $0.name < $1.name }
    }

    /// The entity's own relationships with inverses resolved, sorted by name. (The declaration's
    /// relationships lack inverses the schema inferred; ``Entity/relationships`` lists inherited
    /// ones first.)
    static func ownRelationships(of entity: Entity) -> [RelationshipDescription] {
        entity.relationships.dropFirst(entity.superentity?.relationships.count ?? 0).sorted { $0.name < $1.name }
    }

    /// The entity, `entity` or one of its ancestors, that declares the relationship `name`, so
    /// that an inherited inverse is found where its edge starts.
    static func declaringEntity(ofRelationship name: String, from entity: Entity) -> Entity {
        var declaring = entity
        while let parent = declaring.superentity, parent.relationship(named: name) != nil { declaring = parent }
        return declaring
    }

    /// Uniqueness constraints over more than one property, which no attribute row can mark.
    static func compositeUniquenessConstraints(of entity: Entity) -> [[String]] {
        entity.declaration.uniquenessConstraints.filter { $0.count > 1 }
    }

    /// The attribute's type as people read it: the Xcode name, or `Codable<Type>`.
    static func typeName(of attribute: AttributeDescription) -> String {
        attribute.type == .codable ? "Codable<\(attribute.valueTypeName ?? "JSON")>" : attribute.type.description
    }

    /// What an attribute row notes besides name and type.
    static func marks(of attribute: AttributeDescription, in entity: Entity) -> [String] {
        var marks: [String] = []
        if entity.declaration.uniquenessConstraints.contains([attribute.name]) { marks.append("unique") }
        if attribute.isIndexed { marks.append("indexed") }
        if attribute.isTransient { marks.append("transient") }
        return marks
    }

    /// An attribute row: `title: String? [unique, indexed]`.
    static func attributeLine(_ attribute: AttributeDescription, in entity: Entity) -> String {
        let marks = marks(of: attribute, in: entity)
        return "\(attribute.name): \(typeName(of: attribute))\(attribute.isOptional ? "?" : "")"
            + (marks.isEmpty ? "" : " [\(marks.joined(separator: ", "))]")
    }

    /// The row for a uniqueness constraint over several properties.
    static func constraintLine(_ constraint: [String]) -> String {
        "unique(\(constraint.joined(separator: ", ")))"
    }

    /// UML-style cardinality: `0..1`, `1`, `0..*`, `1..*`, `2..5`.
    static func cardinality(of relationship: RelationshipDescription) -> String {
        guard relationship.isToMany else { return relationship.isOptional ? "0..1" : "1" }
        let lower = max(relationship.minimumCount, 0)
        guard relationship.maximumCount > 0 else { return "\(lower)..*" }
        return lower == relationship.maximumCount ? "\(lower)" : "\(lower)..\(relationship.maximumCount)"
    }

    /// The label of the edge end a relationship points at: `movies 0..* {ordered, cascade}`.
    static func endLabel(for relationship: RelationshipDescription) -> String {
        "\(relationship.name) \(endDetails(for: relationship))"
    }

    /// A relationship's cardinality, then whether it is ordered and its delete rule unless that
    /// is the usual nullify: `0..* {ordered, cascade}`.
    static func endDetails(for relationship: RelationshipDescription) -> String {
        var notes: [String] = []
        if relationship.isOrdered { notes.append("ordered") }
        if relationship.deleteRule != .nullify { notes.append(relationship.deleteRule.xcodeName.lowercased()) }
        return cardinality(of: relationship) + (notes.isEmpty ? "" : " {\(notes.joined(separator: ", "))}")
    }

    /// Whether the end a relationship points at can hold more than one object (crow's foot).
    static func isToManyEnd(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany && relationship.maximumCount != 1
    }

    /// Whether the end a relationship points at must hold at least one object.
    static func isRequiredEnd(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany ? relationship.minimumCount > 0 : !relationship.isOptional
    }

    /// `text` with XML's special characters escaped, for SVG and Graphviz HTML-like labels.
    /// Characters XML 1.0 cannot carry at all (control characters) become U+FFFD, and line
    /// breaks spaces, so that no name can break the document.
    static func xmlEscaped(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\t", "\n", "\r": result += " "
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    result.unicodeScalars.append("\u{FFFD}")
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}

// MARK: - Graphviz

extension SchemaDiagram {
    /// `text` as a Graphviz quoted string (node IDs, edge labels).
    static func dotQuoted(_ text: String) -> String {
        "\"" + dotEscaped(text) + "\""
    }

    /// `text` for the inside of a Graphviz quoted string: backslashes are doubled so that a name
    /// cannot spell an escape such as `\N` in a label.
    static func dotEscaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n", "\r", "\t": result += " "
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A relationship end's label on two lines: name, then cardinality and notes.
    static func dotLabel(for relationship: RelationshipDescription) -> String {
        "\"\(dotEscaped(relationship.name))\\n\(dotEscaped(endDetails(for: relationship)))\""
    }

    /// Crow's-foot notation: the shape next to the box is the most (`crow` many, `tee` one), the
    /// one after it the least (`odot` none, `tee` one).
    static func dotArrow(for relationship: RelationshipDescription) -> String {
        (isToManyEnd(relationship) ? "crow" : "tee") + (isRequiredEnd(relationship) ? "tee" : "odot")
    }

    /// An entity's HTML-like label: a filled title row, then one row per own attribute and one
    /// per uniqueness constraint over several properties.
    static func dotTable(for entity: Entity) -> String {
        var title = "<B>\(xmlEscaped(entity.name))</B>"
        if entity.isAbstract { title = "<B><I>\(xmlEscaped(entity.name))</I></B> (abstract)" }
        var rows = [
            "<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"4\" COLOR=\"#3b5b8c\">",
            "<TR><TD BGCOLOR=\"#3b5b8c\"><FONT COLOR=\"#ffffff\">\(title)</FONT></TD></TR>",
        ]
        for attribute in ownAttributes(of: entity) {
            rows.append("<TR><TD ALIGN=\"LEFT\">\(xmlEscaped(attributeLine(attribute, in: entity)))</TD></TR>")
        }
        for constraint in compositeUniquenessConstraints(of: entity) {
            rows.append("<TR><TD ALIGN=\"LEFT\"><I>\(xmlEscaped(constraintLine(constraint)))</I></TD></TR>")
        }
        rows.append("</TABLE>")
        return rows.joined()
    }
}

// MARK: - Mermaid

extension SchemaDiagram {
    /// The name each entity has in Mermaid: its own, with the characters a quoted Mermaid name
    /// cannot hold replaced, and made unique again when two names end up alike.
    static func mermaidEntityNames(for entities: [Entity]) -> [String: String] {
        let forbidden: Set<Unicode.Scalar> = ["\"", "%", "\\", "\n", "\r", "\u{0B}", "\u{08}"]
        var names: [String: String] = [:]
        var taken: Set<String> = []
        for entity in entities {
            var base = String(
                String.UnicodeScalarView(entity.name.unicodeScalars.map { forbidden.contains($0) ? "_" : $0 }))
            if base.isEmpty { base = "_" }
            var candidate = base
            var suffix = 2
            while taken.contains(candidate) {
                candidate = "\(base)_\(suffix)"
                suffix += 1
            }
            taken.insert(candidate)
            names[entity.name] = candidate
        }
        return names
    }

    /// An attribute line in an entity block: `Integer64 year UK "indexed"`.
    static func mermaidAttribute(_ attribute: AttributeDescription, of entity: Entity) -> String {
        // Types must be one word; codable attributes name their Swift type in the comment.
        let type =
            attribute.type == .codable ? "Codable" : attribute.type.xcodeName.replacingOccurrences(of: " ", with: "")
        var notes: [String] = []
        if attribute.type == .codable, let valueTypeName = attribute.valueTypeName { notes.append(valueTypeName) }
        if attribute.isOptional { notes.append("optional") }
        if attribute.isIndexed { notes.append("indexed") }
        if attribute.isTransient { notes.append("transient") }
        let name = mermaidAttributeName(attribute.name)
        if name != attribute.name { notes.append("named " + attribute.name) }
        var line = "\(type) \(name)"
        if entity.declaration.uniquenessConstraints.contains([attribute.name]) { line += " UK" }
        if !notes.isEmpty { line += " \"\(mermaidComment(notes.joined(separator: ", ")))\"" }
        return line
    }

    /// An attribute name as one Mermaid attribute word: letters, digits, `_`, and characters
    /// from U+00C0 up, which Mermaid accepts; anything else becomes `_`. Names Mermaid would read
    /// as key markers (`PK`, `FK`, `UK`, in any case) get a trailing `_`.
    static func mermaidAttributeName(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            let isASCIIWordCharacter =
                scalar.isASCII && (scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
            scalars.append(isASCIIWordCharacter || (0xC0...0xFFFF).contains(scalar.value) ? scalar : "_")
        }
        var result = String(scalars)
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) { result = "_" + result }
        if result.isEmpty || ["pk", "fk", "uk"].contains(result.lowercased()) { result += "_" }
        return result
    }

    /// `text` for a quoted Mermaid label or comment, which ends at the first `"`; `~` pairs would
    /// read as generic types inside an entity block, and line breaks end the statement.
    static func mermaidComment(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    switch scalar {
                    case "\"": "'"
                    case "~": "-"
                    case "\n", "\r", "\u{0B}", "\u{08}": " "
                    default: scalar
                    }
                }))
    }
}

// MARK: - SVG

extension SchemaDiagram {
    /// Sizes of the SVG drawing, in pixels. Text widths are estimates: without a renderer there
    /// are no font metrics, and monospace fonts keep the estimate close.
    fileprivate enum Metrics {
        static let fontSize = 12.0
        static let characterWidth = 7.2
        static let labelFontSize = 10.0
        static let labelCharacterWidth = 6.0
        static let headerHeight = 24.0
        static let rowHeight = 18.0
        static let horizontalPadding = 8.0
        static let bottomPadding = 6.0
        static let minimumBoxWidth = 80.0
        /// The vertical distance between two edges leaving one side of a box: room for a label
        /// above each, clear of the markers of its neighbours.
        static let attachmentSpacing = 22.0
        /// The distance between two edges running side by side in a gap.
        static let laneSpacing = 10.0
        static let margin = 16.0
        static let minimumColumnGap = 48.0
        static let minimumRowGap = 36.0
        /// Space between a label and the box or line it belongs to.
        static let labelGap = 4.0

        static func textWidth(_ text: String) -> Double { Double(text.count) * characterWidth }
        static func labelWidth(_ text: String) -> Double { Double(text.count) * labelCharacterWidth }
    }

    fileprivate enum Side { case left, right }

    /// The kinds of edge, which differ in style and markers.
    fileprivate enum EdgeKind {
        case relationship
        case oneWay
        case inheritance

        var cssClass: String {
            switch self {
            case .relationship: "relationship"
            case .oneWay: "relationship one-way"
            case .inheritance: "inheritance"
            }
        }
    }

    /// One entity's box.
    fileprivate struct Box {
        let entity: Entity
        let title: String
        /// Attribute rows, then constraint rows (drawn as notes).
        let rows: [(text: String, isNote: Bool)]
        let width: Double
        let contentHeight: Double
        var height = 0.0
        var row = 0
        var column = 0
        var x = 0.0
        var y = 0.0
    }

    /// One edge between two boxes, and how it is routed through the gaps of the grid.
    fileprivate struct Edge {
        let kind: EdgeKind
        let from: Int
        let to: Int
        let fromLabel: String?
        let toLabel: String?
        let startMarker: String?
        let endMarker: String?
        var fromSide = Side.right
        var toSide = Side.right
        /// The gap between columns (0 left of the first) where the edge leaves `from`.
        var firstGap = 0
        /// For edges between columns that are not neighbours: the gap where the edge enters `to`,
        /// and the gap between rows (0 above the first) it crosses in.
        var lastGap: Int?
        var rowGap: Int?
        var firstLane = 0
        var lastLane = 0
        var rowLane = 0
        /// Where the edge meets its boxes, set once attachments are spread along the sides.
        var fromY = 0.0
        var toY = 0.0
    }

    /// A place where an edge meets a box side.
    fileprivate struct Attachment {
        let edge: Int
        let isStart: Bool
        let otherRow: Int
        let otherColumn: Int
    }

    /// Lays out and writes the SVG drawing.
    fileprivate struct SVGDrawing {
        var boxes: [Box] = []
        var edges: [Edge] = []
        var columnCount = 0
        var rowCount = 0
        var columnWidths: [Double] = []
        var rowHeights: [Double] = []
        var columnX: [Double] = []
        var rowY: [Double] = []
        /// Where the lanes of each gap between columns, and between rows, start.
        var columnGapLaneStart: [Double] = []
        var rowGapLaneStart: [Double] = []
        /// How many edges run in each gap between columns, and in each gap between rows.
        var columnGapLaneCounts: [Int] = []
        var rowGapLaneCounts: [Int] = []
        var width = 0.0
        var height = 0.0

        init(model: Model) {
            placeBoxes(model)
            guard !boxes.isEmpty else { return }
            makeEdges(model)
            route()
            measure()
            attach()
        }

        // MARK: Layout

        /// Makes a box per entity and puts the boxes in a grid, row by row.
        ///
        /// Each inheritance tree stays together, a superentity before its subentities. Trees
        /// follow each other breadth-first along their relationships, starting from the most
        /// related one, so that related entities tend to be neighbours and their edges short.
        private mutating func placeBoxes(_ model: Model) {
            var children: [String: [Entity]] = [:]
            var roots: [Entity] = []
            for entity in model.entities {
                if let parent = entity.superentity {
                    children[parent.name, default: []].append(entity)
                } else {
                    roots.append(entity)
                }
            }
            var trees: [[Entity]] = []
            var treeOfEntity: [String: Int] = [:]
            func visit(_ entity: Entity, tree: Int) {
                trees[tree].append(entity)
                treeOfEntity[entity.name] = tree
                for child in children[entity.name] ?? [] { visit(child, tree: tree) }
            }
            for root in roots {
                trees.append([])
                visit(root, tree: trees.count - 1)
            }
            // A schema built without validation may hold an inheritance cycle no root leads to.
            for entity in model.entities where treeOfEntity[entity.name] == nil {
                trees.append([entity])
                treeOfEntity[entity.name] = trees.count - 1
            }

            var weights = [[Int]](repeating: [Int](repeating: 0, count: trees.count), count: trees.count)
            for link in model.links {
                guard let source = treeOfEntity[link.source], let destination = treeOfEntity[link.destination],
                    source != destination
                else { continue }
                weights[source][destination] += 1
                weights[destination][source] += 1
            }
            let degrees = weights.map { $0.reduce(0, +) }
            var placed = [Bool](repeating: false, count: trees.count)
            var treeOrder: [Int] = []
            while treeOrder.count < trees.count {
                // Ties go to the earlier tree, whose root name sorts first.
                let unplaced = trees.indices.filter { !placed[$0] }
                guard let start = unplaced.max(by: { degrees[$0] < degrees[$1] }) else { break }
                placed[start] = true
                var queue = [start]
                while !queue.isEmpty {
                    let tree = queue.removeFirst()
                    treeOrder.append(tree)
                    let neighbours = trees.indices.filter { !placed[$0] && weights[tree][$0] > 0 }
                        .sorted { (-weights[tree][$0], $0) < (-weights[tree][$1], $1) }
                    for neighbour in neighbours { placed[neighbour] = true }
                    queue += neighbours
                }
            }
            let ordered = treeOrder.flatMap { trees[$0] }

            columnCount = max(1, Int(Double(ordered.count).squareRoot().rounded(.up)))
            rowCount = (ordered.count + columnCount - 1) / columnCount
            boxes = ordered.enumerated().map { index, entity in
                var box = Self.makeBox(for: entity)
                box.row = index / columnCount
                box.column = index % columnCount
                return box
            }
        }

        private static func makeBox(for entity: Entity) -> Box {
            let title = entity.isAbstract ? "\(entity.name) (abstract)" : entity.name
            var rows: [(text: String, isNote: Bool)] = SchemaDiagram.ownAttributes(of: entity).map {
                (SchemaDiagram.attributeLine($0, in: entity), false)
            }
            rows += SchemaDiagram.compositeUniquenessConstraints(of: entity).map {
                (SchemaDiagram.constraintLine($0), true)
            }
            let textWidth = ([title] + rows.map(\.text)).map(Metrics.textWidth).max() ?? 0
            return Box(
                entity: entity, title: title, rows: rows,
                width: max(Metrics.minimumBoxWidth, textWidth + 2 * Metrics.horizontalPadding),
                contentHeight: Metrics.headerHeight + Double(rows.count) * Metrics.rowHeight + Metrics.bottomPadding)
        }

        /// One edge per inheritance and per relationship edge of the model.
        private mutating func makeEdges(_ model: Model) {
            var index: [String: Int] = [:]
            for (position, box) in boxes.enumerated() { index[box.entity.name] = position }
            for generalization in model.generalizations {
                guard let from = index[generalization.subentity], let to = index[generalization.superentity] else {
                    continue
                }
                edges.append(
                    Edge(
                        kind: .inheritance, from: from, to: to, fromLabel: nil, toLabel: nil, startMarker: nil,
                        endMarker: "inherits"))
            }
            for link in model.links {
                guard let from = index[link.source], let to = index[link.destination] else { continue }
                let forwardMarker = SchemaDiagram.isToManyEnd(link.forward) ? "many-end" : nil
                if let inverse = link.inverse {
                    edges.append(
                        Edge(
                            kind: .relationship, from: from, to: to,
                            fromLabel: SchemaDiagram.endLabel(for: inverse),
                            toLabel: SchemaDiagram.endLabel(for: link.forward),
                            startMarker: SchemaDiagram.isToManyEnd(inverse) ? "many-start" : nil,
                            endMarker: forwardMarker))
                } else if link.isOwnInverse {
                    edges.append(
                        Edge(
                            kind: .relationship, from: from, to: to, fromLabel: nil,
                            toLabel: SchemaDiagram.endLabel(for: link.forward),
                            startMarker: forwardMarker == nil ? nil : "many-start", endMarker: forwardMarker))
                } else {
                    edges.append(
                        Edge(
                            kind: .oneWay, from: from, to: to, fromLabel: nil,
                            toLabel: SchemaDiagram.endLabel(for: link.forward), startMarker: nil, endMarker: "arrow"))
                }
            }
        }

        /// Chooses the sides and gaps of every edge, and a lane in each gap so that edges in one
        /// gap run side by side instead of on top of each other.
        ///
        /// Boxes in one column leave via the gap on their right; boxes in neighbouring columns
        /// meet in the gap between them; otherwise an edge leaves through the gap next to its
        /// start, crosses in a gap between rows, and enters through the gap next to its end.
        private mutating func route() {
            var columnGapLanes = [Int](repeating: 0, count: columnCount + 1)
            var rowGapLanes = [Int](repeating: 0, count: rowCount + 1)
            func lane(in gap: Int, of lanes: inout [Int]) -> Int {
                defer { lanes[gap] += 1 }
                return lanes[gap]
            }
            for index in edges.indices {
                let from = boxes[edges[index].from]
                let to = boxes[edges[index].to]
                var edge = edges[index]
                if from.column == to.column {
                    edge.fromSide = .right
                    edge.toSide = .right
                    edge.firstGap = from.column + 1
                } else if abs(from.column - to.column) == 1 {
                    edge.fromSide = to.column > from.column ? .right : .left
                    edge.toSide = to.column > from.column ? .left : .right
                    edge.firstGap = max(from.column, to.column)
                } else {
                    let rightwards = to.column > from.column
                    edge.fromSide = rightwards ? .right : .left
                    edge.toSide = rightwards ? .left : .right
                    edge.firstGap = rightwards ? from.column + 1 : from.column
                    edge.lastGap = rightwards ? to.column : to.column + 1
                    edge.rowGap = from.row == to.row ? from.row : max(from.row, to.row)
                }
                edge.firstLane = lane(in: edge.firstGap, of: &columnGapLanes)
                if let lastGap = edge.lastGap { edge.lastLane = lane(in: lastGap, of: &columnGapLanes) }
                if let rowGap = edge.rowGap { edge.rowLane = lane(in: rowGap, of: &rowGapLanes) }
                edges[index] = edge
            }
            self.columnGapLaneCounts = columnGapLanes
            self.rowGapLaneCounts = rowGapLanes
        }

        /// Every box side's attachments, in the order they are spread along the side: edges to
        /// higher rows higher up, so that fewer edges cross.
        private func attachments() -> (left: [[Attachment]], right: [[Attachment]]) {
            var left = [[Attachment]](repeating: [], count: boxes.count)
            var right = [[Attachment]](repeating: [], count: boxes.count)
            for (index, edge) in edges.enumerated() {
                let from = boxes[edge.from]
                let to = boxes[edge.to]
                let start = Attachment(edge: index, isStart: true, otherRow: to.row, otherColumn: to.column)
                let end = Attachment(edge: index, isStart: false, otherRow: from.row, otherColumn: from.column)
                if edge.fromSide == .left { left[edge.from].append(start) } else { right[edge.from].append(start) }
                if edge.toSide == .left { left[edge.to].append(end) } else { right[edge.to].append(end) }
            }
            func ordered(_ list: [Attachment]) -> [Attachment] {
                list.sorted {
                    ($0.otherRow, $0.otherColumn, $0.edge, $0.isStart ? 0 : 1)
                        < ($1.otherRow, $1.otherColumn, $1.edge, $1.isStart ? 0 : 1)
                }
            }
            return (left.map(ordered), right.map(ordered))
        }

        /// Box heights (tall enough for their edges), column and row sizes, and the gaps: wide
        /// enough for the labels next to the boxes and for their lanes.
        private mutating func measure() {
            let (left, right) = attachments()
            for index in boxes.indices {
                let mostEdges = max(left[index].count, right[index].count)
                boxes[index].height = max(
                    boxes[index].contentHeight, Double(mostEdges + 1) * Metrics.attachmentSpacing)
            }
            columnWidths = (0..<columnCount).map { column in
                boxes.filter { $0.column == column }.map(\.width).max() ?? 0
            }
            rowHeights = (0..<rowCount).map { row in
                boxes.filter { $0.row == row }.map(\.height).max() ?? 0
            }

            // Labels sit beside the box they belong to, between it and the lanes.
            func labelRoom(_ attachment: Attachment) -> Double {
                let edge = edges[attachment.edge]
                guard let label = attachment.isStart ? edge.fromLabel : edge.toLabel else { return 0 }
                return Metrics.labelWidth(label) + 2 * Metrics.labelGap
            }
            var x = 0.0
            for gap in 0...columnCount {
                var leftRoom = 0.0
                var rightRoom = 0.0
                if gap > 0 {
                    for (index, box) in boxes.enumerated() where box.column == gap - 1 {
                        // A box narrower than its column has some of the room already.
                        let spare = columnWidths[gap - 1] - box.width
                        for attachment in right[index] { leftRoom = max(leftRoom, labelRoom(attachment) - spare) }
                    }
                }
                if gap < columnCount {
                    for (index, box) in boxes.enumerated() where box.column == gap {
                        for attachment in left[index] { rightRoom = max(rightRoom, labelRoom(attachment)) }
                    }
                }
                let lanes = columnGapLaneCounts[gap]
                let laneRoom = lanes > 0 ? Double(lanes + 1) * Metrics.laneSpacing : 0
                let minimum = gap == 0 || gap == columnCount ? Metrics.margin : Metrics.minimumColumnGap
                let gapWidth = max(minimum, leftRoom + laneRoom + rightRoom)
                columnGapLaneStart.append(x + leftRoom + (gapWidth - leftRoom - laneRoom - rightRoom) / 2)
                x += gapWidth
                if gap < columnCount {
                    columnX.append(x)
                    x += columnWidths[gap]
                }
            }
            width = x

            var y = 0.0
            for gap in 0...rowCount {
                let lanes = rowGapLaneCounts[gap]
                let laneRoom = lanes > 0 ? Double(lanes + 1) * Metrics.laneSpacing : 0
                let minimum = gap == 0 || gap == rowCount ? Metrics.margin : Metrics.minimumRowGap
                let gapHeight = max(minimum, laneRoom)
                rowGapLaneStart.append(y + (gapHeight - laneRoom) / 2)
                y += gapHeight
                if gap < rowCount {
                    rowY.append(y)
                    y += rowHeights[gap]
                }
            }
            height = y

            for index in boxes.indices {
                boxes[index].x = columnX[boxes[index].column]
                boxes[index].y = rowY[boxes[index].row]
            }
        }

        /// Spreads each side's edges evenly along it.
        private mutating func attach() {
            let (left, right) = attachments()
            for (index, box) in boxes.enumerated() {
                for side in [left[index], right[index]] {
                    let step = box.height / Double(side.count + 1)
                    for (position, attachment) in side.enumerated() {
                        let y = box.y + step * Double(position + 1)
                        if attachment.isStart {
                            edges[attachment.edge].fromY = y
                        } else {
                            edges[attachment.edge].toY = y
                        }
                    }
                }
            }
        }

        private func sideX(of box: Box, _ side: Side) -> Double {
            side == .left ? box.x : box.x + box.width
        }

        private func laneX(gap: Int, lane: Int) -> Double {
            columnGapLaneStart[gap] + Double(lane + 1) * Metrics.laneSpacing
        }

        /// The corners of an edge's path, from its start box to its end box.
        private func points(of edge: Edge) -> [(x: Double, y: Double)] {
            let start = (x: sideX(of: boxes[edge.from], edge.fromSide), y: edge.fromY)
            let end = (x: sideX(of: boxes[edge.to], edge.toSide), y: edge.toY)
            let firstX = laneX(gap: edge.firstGap, lane: edge.firstLane)
            guard let lastGap = edge.lastGap, let rowGap = edge.rowGap else {
                return [start, (firstX, start.y), (firstX, end.y), end]
            }
            let lastX = laneX(gap: lastGap, lane: edge.lastLane)
            let crossingY = rowGapLaneStart[rowGap] + Double(edge.rowLane + 1) * Metrics.laneSpacing
            return [start, (firstX, start.y), (firstX, crossingY), (lastX, crossingY), (lastX, end.y), end]
        }

        // MARK: Writing

        func render() -> String {
            guard !boxes.isEmpty else {
                return document(
                    width: 200, height: 40,
                    body: [
                        "<text x=\"16\" y=\"24\" fill=\"#555555\">(no entities)</text>"
                    ])
            }
            var body: [String] = []
            body.append("<g class=\"edges\" fill=\"none\" stroke-width=\"1.2\">")
            for edge in edges {
                let path = points(of: edge).enumerated().map { index, point in
                    (index == 0 ? "M" : "L") + "\(number(point.x)),\(number(point.y))"
                }.joined(separator: " ")
                var element = "<path class=\"\(edge.kind.cssClass)\" d=\"\(path)\""
                element += edge.kind == .inheritance ? " stroke=\"#333333\"" : " stroke=\"#4a5d7a\""
                if let marker = edge.startMarker { element += " marker-start=\"url(#\(marker))\"" }
                if let marker = edge.endMarker { element += " marker-end=\"url(#\(marker))\"" }
                body.append(element + "/>")
            }
            body.append("</g>")

            body.append("<g class=\"entities\">")
            for box in boxes { body += boxElements(box) }
            body.append("</g>")

            body.append("<g class=\"labels\" font-size=\"\(number(Metrics.labelFontSize))\" fill=\"#1f2d44\">")
            for edge in edges {
                if let label = edge.fromLabel {
                    body.append(labelElement(label, box: boxes[edge.from], side: edge.fromSide, y: edge.fromY))
                }
                if let label = edge.toLabel {
                    body.append(labelElement(label, box: boxes[edge.to], side: edge.toSide, y: edge.toY))
                }
            }
            body.append("</g>")
            return document(width: width, height: height, body: body)
        }

        private func document(width: Double, height: Double, body: [String]) -> String {
            let (width, height) = (number(width), number(height))
            let font =
                "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"\(number(Metrics.fontSize))\""
            var lines = [
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>",
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(width)\" height=\"\(height)\""
                    + " viewBox=\"0 0 \(width) \(height)\" \(font)>",
                "<title>Entity-relationship diagram</title>",
                "<defs>",
                // The hollow triangle of inheritance, its tip on the superentity's side.
                Self.marker(
                    "inherits", width: 14, tipX: 14, path: "M0,0 L14,6 L0,12 Z", fill: "#ffffff", color: "#333333"),
                Self.marker("arrow", width: 10, tipX: 10, path: "M0,1 L10,6 L0,11"),
                // Crow's feet, toes on the box. A start marker needs its own drawing: `orient="auto"`
                // turns it away from its box, and SVG 1.1 has no `auto-start-reverse`.
                Self.marker("many-end", width: 12, tipX: 12, path: "M0,6 L12,0 M0,6 L12,12"),
                Self.marker("many-start", width: 12, tipX: 0, path: "M12,6 L0,0 M12,6 L0,12"),
                "</defs>",
                "<rect x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\" fill=\"#ffffff\"/>",
            ]
            lines += body
            lines.append("</svg>")
            return lines.joined(separator: "\n") + "\n"
        }

        /// A marker 12 pixels high, drawn at the same size whatever the line width, that meets
        /// its line at (`tipX`, 6).
        private static func marker(
            _ id: String, width: Int, tipX: Int, path: String, fill: String = "none", color: String = "#4a5d7a"
        ) -> String {
            "<marker id=\"\(id)\" viewBox=\"0 0 \(width) 12\" refX=\"\(tipX)\" refY=\"6\" markerWidth=\"\(width)\""
                + " markerHeight=\"12\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">"
                + "<path d=\"\(path)\" fill=\"\(fill)\" stroke=\"\(color)\" stroke-width=\"1.2\"/></marker>"
        }

        private func boxElements(_ box: Box) -> [String] {
            let x = number(box.x)
            let textX = number(box.x + Metrics.horizontalPadding)
            let frame = "x=\"\(x)\" y=\"\(number(box.y))\" width=\"\(number(box.width))\""
            let stroke = "stroke=\"#3b5b8c\" stroke-width=\"1.2\""
            let titleStyle =
                "fill=\"#ffffff\" font-weight=\"bold\"" + (box.entity.isAbstract ? " font-style=\"italic\"" : "")
            var elements = [
                "<g class=\"entity\">",
                "<rect \(frame) height=\"\(number(box.height))\" fill=\"#ffffff\" \(stroke)/>",
                "<rect \(frame) height=\"\(number(Metrics.headerHeight))\" fill=\"#3b5b8c\" \(stroke)/>",
                "<text x=\"\(textX)\" y=\"\(number(box.y + 16))\" \(titleStyle)>\(xmlEscaped(box.title))</text>",
            ]
            for (index, row) in box.rows.enumerated() {
                let baseline = box.y + Metrics.headerHeight + Double(index + 1) * Metrics.rowHeight - 5
                let style = row.isNote ? " fill=\"#555555\" font-style=\"italic\"" : " fill=\"#1f2d44\""
                elements.append("<text x=\"\(textX)\" y=\"\(number(baseline))\"\(style)>\(xmlEscaped(row.text))</text>")
            }
            elements.append("</g>")
            return elements
        }

        /// A label just above the edge, beside the box it enters.
        private func labelElement(_ label: String, box: Box, side: Side, y: Double) -> String {
            let x = side == .left ? box.x - Metrics.labelGap : box.x + box.width + Metrics.labelGap
            let anchor = side == .left ? "end" : "start"
            return "<text x=\"\(number(x))\" y=\"\(number(y - Metrics.labelGap - 3))\" text-anchor=\"\(anchor)\">"
                + "\(xmlEscaped(label))</text>"
        }

        /// A coordinate with at most one decimal, written the same on every machine and locale.
        private func number(_ value: Double) -> String {
            let rounded = (value * 10).rounded() / 10
            if rounded == rounded.rounded(), abs(rounded) < 1e9 { return String(Int(rounded)) }
            return String(rounded)
        }
    }
}
