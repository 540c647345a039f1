import Foundation
import Strata

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
