import Foundation

/// The declaration of one attribute of an entity: its name, type and options.
///
/// ```swift
/// var title = AttributeDescription(name: "title", type: .string, defaultValue: "")
/// title.validation.maximumLength = 200
/// ```
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name, unique among the entity's properties (inherited ones included).
    public var name: String
    /// The type of the attribute's values.
    public var type: AttributeType
    /// Whether the attribute may be `nil`. A non-optional attribute without a value fails
    /// validation on save.
    public var isOptional: Bool
    /// The value a new object starts with, or ``AttributeValue/null`` for none.
    public var defaultValue: AttributeValue
    /// Whether the attribute lives only in memory and is never written to a store.
    public var isTransient: Bool
    /// Whether large binary values may be stored outside the main table.
    public var allowsExternalBinaryDataStorage: Bool
    /// Whether the value is kept in history tombstones when its object is deleted.
    public var preservesValueOnDeletion: Bool
    /// Whether the store keeps an index on this attribute alone.
    public var isIndexed: Bool
    /// The attribute's name in the previous schema version, so that migrations recognise a
    /// rename instead of a removal and an addition.
    public var renamingIdentifier: String?
    /// For ``AttributeType/codable`` attributes, the name of the Swift type stored (for tools
    /// and documentation only).
    public var valueTypeName: String?
    /// The rules a value must satisfy to be saved.
    public var validation: ValidationRules

    /// Creates an attribute description.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = false,
        defaultValue: AttributeValue = .null,
        isTransient: Bool = false,
        allowsExternalBinaryDataStorage: Bool = false,
        preservesValueOnDeletion: Bool = false,
        isIndexed: Bool = false,
        renamingIdentifier: String? = nil,
        valueTypeName: String? = nil,
        validation: ValidationRules = ValidationRules()
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isTransient = isTransient
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.preservesValueOnDeletion = preservesValueOnDeletion
        self.isIndexed = isIndexed
        self.renamingIdentifier = renamingIdentifier
        self.valueTypeName = valueTypeName
        self.validation = validation
    }
}

/// Rules an attribute's value must satisfy to be saved.
///
/// For numbers and dates, ``minimumValue`` and ``maximumValue`` bound the value; for strings
/// and binary data, ``minimumLength`` and ``maximumLength`` bound the length (characters or
/// bytes); ``pattern`` is a regular expression a string must match as a whole.
public struct ValidationRules: Sendable, Hashable, Codable {
    /// The smallest allowed value (numbers and dates).
    public var minimumValue: AttributeValue?
    /// The largest allowed value (numbers and dates).
    public var maximumValue: AttributeValue?
    /// The smallest allowed length (strings: characters; binary data: bytes).
    public var minimumLength: Int?
    /// The largest allowed length (strings: characters; binary data: bytes).
    public var maximumLength: Int?
    /// A regular expression that a string value must match in full.
    public var pattern: String?

    /// Creates validation rules; every rule is optional.
    public init(
        minimumValue: AttributeValue? = nil,
        maximumValue: AttributeValue? = nil,
        minimumLength: Int? = nil,
        maximumLength: Int? = nil,
        pattern: String? = nil
    ) {
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.pattern = pattern
    }

    /// Whether no rule is set.
    public var isEmpty: Bool {
        minimumValue == nil && maximumValue == nil && minimumLength == nil && maximumLength == nil
            && pattern == nil
    }
}
