import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

// Reading an Xcode `contents` file happens in two steps: XMLParser turns the bytes into a small
// element tree with line numbers, then `XcodeModelReader` maps the tree onto Strata's
// declarations. Keeping the steps apart keeps the mapping free of parser callbacks.

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

/// Builds a ``ModelFileElement`` tree from XML, stopping at the first error.
final class ModelFileTreeBuilder: NSObject, XMLParserDelegate {
    struct Failure: Error {
        enum Reason {
            /// libxml2's error number (an `NSXMLParserErrorDomain` code).
            case parser(code: Int)
            /// The document declares a document type (`<!DOCTYPE`), which no model file has.
            case documentType
        }

        var line: Int
        var reason: Reason
    }

    private var stack: [ModelFileElement] = []
    private(set) var root: ModelFileElement?
    private(set) var failure: Failure?

    /// Parses `data`; returns the root element or the first error with its line.
    static func parse(_ data: Data) -> Result<ModelFileElement?, Failure> {
        if let line = documentTypeLine(in: data) {
            return .failure(Failure(line: line, reason: .documentType))
        }
        // Given all of its input at once, libxml2 refuses any document over 10 MB ("huge input
        // lookup", error 1). Reading from a stream, XMLParser hands it the document in chunks of
        // 128 KB, so only a single value over 10,000,000 bytes is refused. (libxml2's "huge"
        // option would lift that limit too, with others that guard against hostile documents;
        // XMLParser does not offer it.)
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let builder = ModelFileTreeBuilder()
        parser.delegate = builder
        _ = parser.parse()
        // libxml2 recovers from some errors and XMLParser on Linux can report success after one,
        // so the delegate's record is what counts.
        if let failure = builder.failure {
            return .failure(failure)
        }
        if let error = parser.parserError as NSError? {
            return .failure(Failure(line: max(parser.lineNumber, 1), reason: .parser(code: error.code)))
        }
        return .success(builder.root)
    }

    /// The line of a document type declaration (`<!DOCTYPE`) before the root element, if any.
    ///
    /// Xcode never writes one in a model file, and a document type is what both XML attacks on
    /// a parser need: an external entity (XXE) reads another file or URL into the document, and
    /// entities defined in terms of each other ("billion laughs") expand a small file into
    /// gigabytes. Refusing the declaration up front keeps the message clear and does not depend
    /// on the protections of the libxml2 version at hand. Only the prolog is read: the XML
    /// declaration, processing instructions, comments and white space before the first tag. (A
    /// document in UTF-16 is left to libxml2, whose errors for entities are described as well.)
    static func documentTypeLine(in data: Data) -> Int? {
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let documentType = Array("<!DOCTYPE".utf8)
        let (instructionStart, instructionEnd) = (Array("<?".utf8), Array("?>".utf8))
        let (commentStart, commentEnd) = (Array("<!--".utf8), Array("-->".utf8))
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            var index = 0
            var line = 1
            func hasPrefix(_ pattern: [UInt8]) -> Bool {
                guard bytes.count - index >= pattern.count else { return false }
                return pattern.indices.allSatisfy { bytes[index + $0] == pattern[$0] }
            }
            /// Moves past `terminator`, counting lines; false when the document ends first.
            func skip(past terminator: [UInt8]) -> Bool {
                while index < bytes.count {
                    if hasPrefix(terminator) {
                        index += terminator.count
                        return true
                    }
                    if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                    index += 1
                }
                return false
            }
            if hasPrefix(byteOrderMark) { index += byteOrderMark.count }
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\n"):
                    line += 1
                    index += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    index += 1
                default:
                    if hasPrefix(documentType) { return line }
                    if hasPrefix(instructionStart) {
                        guard skip(past: instructionEnd) else { return nil }
                    } else if hasPrefix(commentStart) {
                        guard skip(past: commentEnd) else { return nil }
                    } else {
                        return nil
                    }
                }
            }
            return nil
        }
    }

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        stack.append(ModelFileElement(name: elementName, attributes: attributeDict, line: parser.lineNumber))
    }

    func parser(
        _ parser: XMLParser,
        didEndElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        guard failure == nil, let element = stack.popLast() else { return }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(element)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = Failure(line: max(parser.lineNumber, 1), reason: .parser(code: (parseError as NSError).code))
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        self.parser(parser, parseErrorOccurred: validationError)
    }

    /// A readable description of an `NSXMLParserErrorDomain` code (libxml2's error numbers;
    /// on Linux the error's own description only repeats the number).
    static func describe(code: Int) -> String {
        let text: String? =
            switch code {
            case 1:
                "a single value (an attribute value, a text or a comment) is longer than the XML parser's limit of "
                    + "10,000,000 bytes"
            case 2: "the XML parser ran out of memory"
            case 4: "the document is empty"
            case 5: "the document ends too early, or has content after the root element"
            case 9: "the document contains a character that XML does not allow"
            case 23: "an entity reference (&name;) lacks its closing ';'"
            case 26, 27:
                "the document refers to an entity (&name;) that it does not declare; model files use only &amp;, "
                    + "&lt;, &gt;, &quot; and &apos;"
            case 29:
                "the document refers to an external entity (a file or URL named in its DOCTYPE), which Strata never "
                    + "loads"
            case 38: "an attribute value contains '<'"
            case 39: "an attribute value does not start with a quote"
            case 40: "an attribute value is not closed"
            case 41: "an attribute has no value"
            case 42: "an attribute appears twice in one element"
            case 61: "the document type declaration (DOCTYPE) is not finished"
            case 65: "a space is missing between attributes"
            case 72: "'<' expected"
            case 73: "'>' expected"
            case 74: "'</' expected"
            case 75: "'=' expected after an attribute name"
            case 76: "a closing tag does not match the open element (is a tag above left unclosed?)"
            case 77: "a tag is not finished"
            case 89:
                "the document's entities refer to each other in a loop or expand beyond the parser's limits (an "
                    + "entity-expansion or \"billion laughs\" document)"
            case 104: "an entity in the document could not be expanded"
            default: nil
            }
        return (text.map { $0 + " " } ?? "") + "(XML parser error \(code))"
    }

    /// Whether a parser error means the text is not well-formed XML (rather than well-formed
    /// XML that the parser refuses to read: too large, or using entities).
    static func isSyntaxError(code: Int) -> Bool {
        ![1, 2, 26, 27, 29, 89, 104].contains(code)
    }
}

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
