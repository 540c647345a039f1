import Foundation

/// One element of a model file: its name, attributes, line and children.
struct ModelFileElement {
    var name: String
    var attributes: [String: String]
    /// The line where the element's start tag ends (what libxml2 reports).
    var line: Int
    var children: [ModelFileElement] = []

    /// The attribute's value, or `nil` when it is missing or empty (Xcode writes `key=""` for
    /// cleared fields).
    func value(_ key: String) -> String? {
        guard let text = attributes[key], !text.isEmpty else { return nil }
        return text
    }

    /// Whether a Boolean attribute is set (`YES` in Xcode's files).
    func flag(_ key: String) -> Bool {
        guard let text = attributes[key]?.lowercased() else { return false }
        return text == "yes" || text == "true" || text == "1"
    }
}
