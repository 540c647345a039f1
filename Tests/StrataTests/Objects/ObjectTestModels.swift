import Foundation
import Strata
import Testing

/// Counts `awakeFromInsert()` calls and sets a value there, the way apps stamp creation dates.
@Entity final class InsertProbe: ManagedObject {
    var label: String = ""
    var createdAt: Date?
    @Transient var awakeCount: Int = 0

    override func awakeFromInsert() {
        super.awakeFromInsert()
        awakeCount += 1
        if createdAt == nil { createdAt = Date(timeIntervalSince1970: 1_000) }
    }
}

/// Entity declarations for models used without classes, the way a model loaded from an Xcode
/// model file is used: plain `ManagedObject` instances read and written by key.
enum ClasslessModel {
    /// `Item` has one optional attribute of every type and every kind of relationship:
    /// `owner` (to-one, inverse to-many), `parts` (ordered to-many, inverse to-one) and
    /// `labels` (many-to-many). `Manager` inherits from `Owner`; `Owner.badge` and
    /// `Badge.holder` are a one-to-one pair.
    static func makeCatalogSchema() throws -> Schema {
        let item = EntityDescription(
            name: "Item",
            attributes: AttributeType.allCases.map { type in
                AttributeDescription(name: attributeName(for: type), type: type, isOptional: true)
            },
            relationships: [
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
                RelationshipDescription(
                    name: "parts", destination: "Part", inverse: "item", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "labels", destination: "Label", inverse: "items", isToMany: true),
            ])
        let owner = EntityDescription(
            name: "Owner",
            attributes: [AttributeDescription(name: "name", type: .string, defaultValue: "")],
            relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "owner", isToMany: true),
                RelationshipDescription(name: "badge", destination: "Badge", inverse: "holder"),
            ])
        let manager = EntityDescription(
            name: "Manager", superentity: "Owner",
            attributes: [AttributeDescription(name: "level", type: .integer16, defaultValue: 1)])
        let badge = EntityDescription(
            name: "Badge",
            attributes: [AttributeDescription(name: "number", type: .integer32, isOptional: true)],
            relationships: [RelationshipDescription(name: "holder", destination: "Owner", inverse: "badge")])
        let part = EntityDescription(
            name: "Part",
            attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)],
            relationships: [RelationshipDescription(name: "item", destination: "Item", inverse: "parts")])
        let label = EntityDescription(
            name: "Label",
            attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)],
            relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "labels", isToMany: true)
            ])
        return try Schema([item, owner, manager, badge, part, label])
    }

    /// The name of `Item`'s attribute of `type`.
    static func attributeName(for type: AttributeType) -> String {
        switch type {
        case .integer16: "int16"
        case .integer32: "int32"
        case .integer64: "int64"
        case .double: "double"
        case .float: "float"
        case .decimal: "decimal"
        case .string: "string"
        case .boolean: "bool"
        case .date: "date"
        case .binaryData: "data"
        case .uuid: "uuid"
        case .uri: "url"
        case .codable: "json"
        }
    }
}

extension ClasslessModel {
    /// A new plain object of the entity named `name` in `schema`.
    static func makeObject(_ name: String, in schema: Schema) throws -> ManagedObject {
        ManagedObject(entity: try #require(schema.entity(named: name)))
    }
}
