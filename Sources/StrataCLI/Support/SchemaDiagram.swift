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
