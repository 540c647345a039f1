import Foundation

/// One field of an imported record, as the file wrote it.
///
/// JSON says what kind of value a field holds, so its fields keep that kind (and a number its
/// exact digits); CSV does not, so its fields are ``text(_:)`` and take their type from the
/// attribute they are imported into (``ImportedValues/attributeValue(_:for:line:)``).
enum ImportedField: Equatable, Sendable {
    /// JSON `null`, or an unquoted empty CSV field.
    case null
    /// JSON `true` or `false`.
    case boolean(Bool)
    /// A JSON number's exact literal text (`0.1000000000000000055511151231257827`, `3e2`).
    case number(String)
    /// A JSON string, unescaped (`\uXXXX` escapes included, surrogate pairs joined).
    case string(String)
    /// A CSV field: typed later from the attribute's type. A quoted empty field is `text("")`.
    case text(String)
    /// A nested JSON array or object, as its raw text (whitespace included).
    case json(String)
}
