import Foundation

// Reading an Xcode `contents` file happens in two steps: XMLParser turns the bytes into a small
// element tree with line numbers, then `XcodeModelReader` maps the tree onto Strata's
// declarations. Keeping the steps apart keeps the mapping free of parser callbacks.

/// Maps the element tree of one `contents` file onto entity declarations.
struct XcodeModelReader {
    let modelName: String
    let fileURL: URL?
    private(set) var warnings: [String] = []

    /// Elements Xcode writes that carry nothing Strata uses (diagram layout, user info).
    private static let silentlyIgnored: Set<String> = ["elements", "element", "userInfo", "entry"]

    init(modelName: String, fileURL: URL?) {
        self.modelName = modelName
        self.fileURL = fileURL
    }

    /// Reads a whole model file.
    mutating func read(_ data: Data) throws -> XcodeModel {
        let root: ModelFileElement
        switch ModelFileTreeBuilder.parse(data) {
        case .failure(let failure):
            throw StrataError(
                .malformedModelFile, message(for: failure), line: failure.line, fileURL: fileURL)
        case .success(nil):
            throw StrataError(
                .malformedModelFile, "\(capitalizedLocation) contains no XML elements; expected a Core Data <model>.",
                line: 1, fileURL: fileURL)
        case .success(let element?):
            root = element
        }
        guard root.name == "model" else {
            throw StrataError(
                .malformedModelFile,
                "\(capitalizedLocation) is not a Core Data model: its root element is <\(root.name)> (line \(root.line)), not <model>.",
                line: root.line, fileURL: fileURL)
        }

        var entities: [EntityDescription] = []
        var configurations: [String: [String]] = [:]
        for child in root.children {
            switch child.name {
            case "entity":
                entities.append(try entity(child))
            case "configuration":
                let name = try required("name", of: child, what: "A configuration")
                var members = configurations[name] ?? []
                for member in child.children {
                    guard member.name == "memberEntity" else {
                        ignore(member, in: "configuration \(name)")
                        continue
                    }
                    members.append(try required("name", of: member, what: "A member of configuration \(name)"))
                }
                configurations[name] = members
            default:
                ignore(child, in: "the model")
            }
        }

        let schema: Schema
        do {
            // As Core Data reads a model: a relationship without an inverse has none.
            schema = try Schema(
                entities, configurations: configurations,
                versionIdentifier: root.value("userDefinedModelVersionIdentifier"), objectTypes: [:], infersInverses: false)
        } catch var error as StrataError {
            error.fileURL = error.fileURL ?? fileURL
            throw error
        }
        return XcodeModel(name: modelName, schema: schema, warnings: warnings)
    }

    // MARK: Elements

    private mutating func entity(_ element: ModelFileElement) throws -> EntityDescription {
        let name = try required("name", of: element, what: "An entity")
        var entity = EntityDescription(
            name: name,
            isAbstract: element.flag("isAbstract"),
            superentity: element.value("parentEntity"),
            renamingIdentifier: element.value("elementID"),
            versionHashModifier: element.value("versionHashModifier"),
            managedObjectClassName: element.value("representedClassName"))
        for child in element.children {
            switch child.name {
            case "attribute":
                entity.attributes.append(try attribute(child, entity: name))
            case "relationship":
                entity.relationships.append(try relationship(child, entity: name))
            case "uniquenessConstraints":
                entity.uniquenessConstraints += try uniquenessConstraints(child, entity: name)
            case "fetchIndex":
                if let index = try fetchIndex(child, entity: name) {
                    entity.indexes.append(index)
                }
            case "compoundIndexes":
                entity.indexes += try compoundIndexes(child, entity: name)
            default:
                ignore(child, in: "entity \(name)")
            }
        }
        return entity
    }

    private mutating func attribute(_ element: ModelFileElement, entity: String) throws -> AttributeDescription {
        let name = try required("name", of: element, what: "An attribute of \(entity)", entity: entity)
        guard let typeName = element.value("attributeType") else {
            throw StrataError(
                .malformedModelFile,
                "\(entity).\(name) in \(location) has no attributeType (line \(element.line)); choose a type in Xcode's model editor.",
                entityName: entity, propertyName: name, line: element.line, fileURL: fileURL)
        }
        guard let type = AttributeType(xcodeName: typeName) else {
            let known = AttributeType.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
            throw StrataError(
                .malformedModelFile,
                "\(entity).\(name) in \(location) has the unknown attributeType '\(typeName)' (line \(element.line)). "
                    + "Strata supports \(known).",
                entityName: entity, propertyName: name, line: element.line, fileURL: fileURL)
        }
        var attribute = AttributeDescription(
            name: name,
            type: type,
            isOptional: element.flag("optional"),
            isTransient: element.flag("transient"),
            allowsExternalBinaryDataStorage: element.flag("allowsExternalBinaryDataStorage"),
            preservesValueOnDeletion: element.flag("preserveAfterDeletion"),
            isIndexed: element.flag("indexed"),
            renamingIdentifier: element.value("elementID"),
            valueTypeName: type == .codable ? element.value("customClassName") : nil)

        // Xcode writes date defaults and bounds as `...DateTimeInterval`; accept either spelling.
        let defaultText =
            type == .string
            ? element.attributes["defaultValueString"]
            : element.value("defaultValueString") ?? (type == .date ? element.value("defaultDateTimeInterval") : nil)
        if let defaultText {
            if type == .binaryData || type == .codable {
                warn(line: element.line, "ignored the default value of \(entity).\(name): \(type) attributes cannot have one.")
            } else {
                attribute.defaultValue = try value(defaultText, of: element, entity: entity, attribute: name, type: type, what: "default value")
            }
        }

        let minimumText = element.value("minValueString") ?? (type == .date ? element.value("minDateTimeInterval") : nil)
        let maximumText = element.value("maxValueString") ?? (type == .date ? element.value("maxDateTimeInterval") : nil)
        if type == .string || type == .binaryData {
            attribute.validation.minimumLength = try minimumText.map {
                try length($0, of: element, entity: entity, attribute: name, what: "minimum length")
            }
            attribute.validation.maximumLength = try maximumText.map {
                try length($0, of: element, entity: entity, attribute: name, what: "maximum length")
            }
        } else if type.isNumeric || type == .date {
            attribute.validation.minimumValue = try minimumText.map {
                try value($0, of: element, entity: entity, attribute: name, type: type, what: "minimum value")
            }
            attribute.validation.maximumValue = try maximumText.map {
                try value($0, of: element, entity: entity, attribute: name, type: type, what: "maximum value")
            }
        } else if minimumText != nil || maximumText != nil {
            warn(line: element.line, "ignored the minimum and maximum of \(entity).\(name): \(type) attributes have no range.")
        }
        attribute.validation.pattern = element.value("regularExpressionString")
        return attribute
    }

    private mutating func relationship(_ element: ModelFileElement, entity: String) throws -> RelationshipDescription {
        let name = try required("name", of: element, what: "A relationship of \(entity)", entity: entity)
        guard let destination = element.value("destinationEntity") else {
            throw StrataError(
                .malformedModelFile,
                "\(entity).\(name) in \(location) has no destinationEntity (line \(element.line)); choose a destination in Xcode's model editor.",
                entityName: entity, propertyName: name, line: element.line, fileURL: fileURL)
        }
        var deleteRule = DeleteRule.nullify
        if let ruleName = element.value("deletionRule") {
            guard let rule = DeleteRule(xcodeName: ruleName) else {
                let known = DeleteRule.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
                throw StrataError(
                    .malformedModelFile,
                    "\(entity).\(name) in \(location) has the unknown deletionRule '\(ruleName)' (line \(element.line)); use one of \(known).",
                    entityName: entity, propertyName: name, line: element.line, fileURL: fileURL)
            }
            deleteRule = rule
        }
        let isToMany = element.flag("toMany")
        var relationship = RelationshipDescription(
            name: name,
            destination: destination,
            inverse: element.value("inverseName"),
            isToMany: isToMany,
            isOrdered: isToMany && element.flag("ordered"),
            isOptional: element.flag("optional"),
            deleteRule: deleteRule,
            isTransient: element.flag("transient"),
            renamingIdentifier: element.value("elementID"))
        // Xcode writes minCount/maxCount="1" on to-one relationships; they mean nothing there.
        if isToMany {
            relationship.minimumCount = try element.value("minCount").map {
                try length($0, of: element, entity: entity, attribute: name, what: "minCount")
            } ?? 0
            relationship.maximumCount = try element.value("maxCount").map {
                try length($0, of: element, entity: entity, attribute: name, what: "maxCount")
            } ?? 0
        }
        return relationship
    }

    private mutating func uniquenessConstraints(_ element: ModelFileElement, entity: String) throws -> [[String]] {
        var constraints: [[String]] = []
        for child in element.children {
            guard child.name == "uniquenessConstraint" else {
                ignore(child, in: "the uniqueness constraints of \(entity)")
                continue
            }
            var names: [String] = []
            for part in child.children {
                guard part.name == "constraint" else {
                    ignore(part, in: "a uniqueness constraint of \(entity)")
                    continue
                }
                names.append(try required("value", of: part, what: "A uniqueness constraint of \(entity)", entity: entity))
            }
            constraints.append(names)
        }
        return constraints
    }

    private mutating func fetchIndex(_ element: ModelFileElement, entity: String) throws -> IndexDescription? {
        let name = try required("name", of: element, what: "A fetch index of \(entity)", entity: entity)
        var elements: [IndexDescription.Element] = []
        for child in element.children {
            guard child.name == "fetchIndexElement" else {
                ignore(child, in: "fetch index \(entity).\(name)")
                continue
            }
            guard let property = child.value("property") else {
                warn(
                    line: child.line,
                    "skipped an element of fetch index \(entity).\(name): Strata indexes properties, not expressions.")
                continue
            }
            elements.append(.init(property, ascending: child.attributes["order"]?.lowercased() != "descending"))
        }
        guard !elements.isEmpty else {
            warn(line: element.line, "skipped fetch index \(entity).\(name): it has no property elements.")
            return nil
        }
        return IndexDescription(name: name, elements: elements)
    }

    /// The index format of Xcode 8 and earlier: `<compoundIndex><index value="a"/>...`.
    private mutating func compoundIndexes(_ element: ModelFileElement, entity: String) throws -> [IndexDescription] {
        var indexes: [IndexDescription] = []
        for child in element.children {
            guard child.name == "compoundIndex" else {
                ignore(child, in: "the compound indexes of \(entity)")
                continue
            }
            var names: [String] = []
            for part in child.children {
                guard part.name == "index" else {
                    ignore(part, in: "a compound index of \(entity)")
                    continue
                }
                names.append(try required("value", of: part, what: "A compound index of \(entity)", entity: entity))
            }
            if !names.isEmpty { indexes.append(IndexDescription(names)) }
        }
        return indexes
    }

    // MARK: Values

    /// The model, as messages name it in mid-sentence ("Book.id in the model file …").
    private var location: String {
        fileURL.map { "the model file \($0.path)" } ?? "the model '\(modelName)'"
    }

    /// The model, as messages name it at the start of a sentence.
    private var capitalizedLocation: String {
        fileURL.map { "The model file \($0.path)" } ?? "The model '\(modelName)'"
    }

    /// What went wrong when the file could not be parsed, and how to fix it.
    private func message(for failure: ModelFileTreeBuilder.Failure) -> String {
        switch failure.reason {
        case .documentType:
            return "\(capitalizedLocation) declares a document type (<!DOCTYPE …> at line \(failure.line)), "
                + "which Xcode never writes in a model file. Strata refuses document types: their entities could "
                + "make the parser read other files or URLs (XXE) or expand a small file without bound (\"billion "
                + "laughs\"). "
                + "Remove the DOCTYPE and the entity references (&name;) that use it, or re-save the model from Xcode."
        case .parser(let code) where code == 1:
            return "\(capitalizedLocation) cannot be read: \(ModelFileTreeBuilder.describe(code: code)), at line "
                + "\(failure.line). Model files hold names and short values; shorten the value."
        case .parser(let code) where !ModelFileTreeBuilder.isSyntaxError(code: code):
            return "\(capitalizedLocation) cannot be read: \(ModelFileTreeBuilder.describe(code: code)), at line "
                + "\(failure.line). Re-save the model from Xcode."
        case .parser(let code):
            return "\(capitalizedLocation) is not well-formed XML: \(ModelFileTreeBuilder.describe(code: code)) at "
                + "line \(failure.line). Fix the file by hand or re-save it from Xcode."
        }
    }

    private func required(_ key: String, of element: ModelFileElement, what: String, entity: String? = nil) throws -> String {
        guard let text = element.value(key) else {
            throw StrataError(
                .malformedModelFile,
                "\(what) in \(location) has no '\(key)' (<\(element.name)> at line \(element.line)).",
                entityName: entity, line: element.line, fileURL: fileURL)
        }
        return text
    }

    private mutating func ignore(_ element: ModelFileElement, in context: String) {
        guard !Self.silentlyIgnored.contains(element.name) else { return }
        warn(line: element.line, "ignored unsupported element <\(element.name)> in \(context).")
    }

    private mutating func warn(line: Int, _ text: String) {
        warnings.append("\(modelName), line \(line): \(text)")
    }

    /// Parses a default value or bound written as text in the model file.
    private func value(
        _ text: String, of element: ModelFileElement, entity: String, attribute: String, type: AttributeType, what: String
    ) throws -> AttributeValue {
        if let value = Self.parseValue(text, as: type) { return value }
        let expected =
            switch type {
            case .boolean: " (use YES or NO)"
            case .date: " (seconds since 2001-01-01 00:00:00 UTC)"
            case .integer16, .integer32, .integer64:
                " (a whole number in \(type.integerRange.map { "\($0.lowerBound)...\($0.upperBound)" } ?? ""))"
            default: ""
            }
        throw StrataError(
            .malformedModelFile,
            "\(entity).\(attribute) in \(location) has the \(what) '\(text)' (line \(element.line)), which is not a valid \(type) value\(expected).",
            entityName: entity, propertyName: attribute, line: element.line, fileURL: fileURL)
    }

    private func length(_ text: String, of element: ModelFileElement, entity: String, attribute: String, what: String) throws -> Int {
        if let count = Int(text.trimmingCharacters(in: .whitespaces)), count >= 0 { return count }
        throw StrataError(
            .malformedModelFile,
            "\(entity).\(attribute) in \(location) has the \(what) '\(text)' (line \(element.line)), which is not a whole number of zero or more.",
            entityName: entity, propertyName: attribute, line: element.line, fileURL: fileURL)
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The value `text` denotes for an attribute of `type`, or `nil` when it denotes none.
    static func parseValue(_ text: String, as type: AttributeType) -> AttributeValue? {
        if type == .string { return .string(text) }
        let text = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            let integer = Int64(text) ?? Double(text).flatMap { Int64(exactly: $0) }
            guard let integer, type.integerRange?.contains(integer) ?? false else { return nil }
            return .integer(integer)
        case .double:
            return Double(text).map { .double($0) }
        case .float:
            return Float(text).map { .float($0) }
        case .decimal:
            // Decimal(string:) accepts a numeric prefix ("12abc" is 12), so check the whole text.
            guard let number = Double(text), number.isFinite else { return nil }
            return Decimal(string: text, locale: posix).map { .decimal($0) }
        case .boolean:
            switch text.lowercased() {
            case "yes", "true", "1": return .boolean(true)
            case "no", "false", "0": return .boolean(false)
            default: return nil
            }
        case .date:
            guard let seconds = Double(text), seconds.isFinite else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uuid:
            return UUID(uuidString: text).map { .uuid($0) }
        case .uri:
            return URL(string: text).map { .url($0) }
        case .string, .binaryData, .codable:
            return nil
        }
    }
}
