import Foundation
import Strata

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
