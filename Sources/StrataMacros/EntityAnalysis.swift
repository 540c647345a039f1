import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// One stored property of an `@Entity` class, as the macro understands it.
struct PropertyInfo {
    enum Kind: String {
        case attribute, codable, codableOptional, toOne, toManySet, toManyArray
        var isRelationship: Bool { self == .toOne || self == .toManySet || self == .toManyArray }
    }

    /// The name as written, backticks included, for generated code.
    var name: String
    var typeText: String
    /// The type without optionality (attributes) or the destination class (relationships).
    var baseType: String
    var isOptional: Bool
    var initializer: ExprSyntax?
    var kind: Kind
    var attribute: AttributeSyntax?
    var relationship: AttributeSyntax?
    var isUnique: Bool
    var inverseName: String?
    /// Position among the class's own attributes or own relationships.
    var index: Int = 0
    var binding: PatternBindingSyntax

    /// The name in the schema: `default` for a property written `` `default` ``.
    var schemaName: String { EntityAnalysis.unescaped(name) }

    /// The name as an argument label, which needs backticks only for `inout`, `var` and `let`.
    var argumentLabel: String { ["inout", "var", "let"].contains(schemaName) ? name : schemaName }
}

/// Everything `@Entity` needs to know about a class, plus the problems found on the way.
struct EntityAnalysis {
    var className: String
    var isClass: Bool
    var superclassName: String?
    var isFinal: Bool
    var accessPrefix: String
    var isAbstract: Bool
    var isInheritable: Bool
    var attributes: [PropertyInfo] = []
    var relationships: [PropertyInfo] = []
    var uniqueness: [[String]] = []
    var indexes: [[String]] = []
    var diagnostics: [Diagnostic] = []

    var properties: [PropertyInfo] { attributes + relationships }
    var isSubentity: Bool { superclassName != nil }
    /// The superclass's own name, without the module or outer types a qualified name
    /// (`Kit.Person`) adds: its entity's name, and the part of its generated identifiers
    /// (`__strata_Person_…`) that names it.
    var superclassBaseName: String? {
        superclassName.map { name in String(name.split(separator: ".").last ?? Substring(name)) }
    }

    /// `<superclass>.__strata_<its base name>_<member>`: a generated static member of the
    /// superclass, reached through its name as written.
    func superclassReference(to member: String) -> String? {
        guard let superclassName, let superclassBaseName else { return nil }
        return "\(superclassName).__strata_\(superclassBaseName)_\(member)"
    }
    var hasErrors: Bool { diagnostics.contains { $0.diagMessage.severity == .error } }
    /// Whether the declaration is a class that is not final, which other classes may inherit
    /// from (even when `@Entity` reported that it must be final).
    var mayBeSubclassed: Bool { isClass && !isFinal }
    /// Whether the macro is the form that declares a conformance to ValueSnapshotRepresentable:
    /// `@Entity`, for final classes, as opposed to `@Entity(.abstract)` and `@Entity(.inheritable)`.
    var declaresValueSnapshot: Bool { !isInheritable }

    static let primitiveTypes: Set<String> = [
        "Int", "Int16", "Int32", "Int64", "Double", "Float", "Decimal", "String", "Bool", "Date", "Data", "UUID", "URL",
    ]
    static let unsupportedTypes: Set<String> = [
        "Int8", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Character", "Any", "AnyObject", "Float80", "Float16",
    ]
    static let reservedNames: Set<String> = [
        "objectID", "entity", "context", "managedObjectContext", "isInserted", "isUpdated", "isDeleted", "isFault",
        "hasChanges", "description", "value", "Value", "changedValues", "committedValues", "hashValue",
        "typedObjectID",
    ]

    // swift-format-ignore
    init(declaration: some DeclGroupSyntax, attribute node: AttributeSyntax) {
        let classDecl = declaration.as(ClassDeclSyntax.self)
        className = classDecl?.name.trimmedDescription ?? "Entity"
        isClass = classDecl != nil
        isFinal = declaration.modifiers.contains { $0.name.tokenKind == .keyword(.final) }
        let isPublic = declaration.modifiers.contains {
            $0.name.tokenKind == .keyword(.public) || $0.name.tokenKind == .keyword(.open)
        }
        accessPrefix = isPublic ? "public " : ""
        let options = node.arguments?.as(LabeledExprListSyntax.self)?.map { $0.expression.trimmedDescription } ?? []
        isAbstract = options.contains { $0.hasSuffix("abstract") }
        isInheritable = isAbstract || options.contains { $0.hasSuffix("inheritable") }
        superclassName = nil

        guard let classDecl else {
            var fixIts: [FixIt] = []
            if let structDecl = declaration.as(StructDeclSyntax.self) {
                let keyword = structDecl.structKeyword
                fixIts.append(
                    FixIt(
                        message: EntityFixIt(message: "Make it a final class inheriting from ManagedObject"),
                        changes: [
                            .replace(
                                oldNode: Syntax(keyword),
                                newNode: Syntax(TokenSyntax.identifier("final class", leadingTrivia: keyword.leadingTrivia, trailingTrivia: keyword.trailingTrivia))),
                            Self.addingManagedObject(to: structDecl.name, clause: structDecl.inheritanceClause),
                        ]))
            }
            diagnose(.notAClass, "@Entity applies to classes; \(Self.kindName(of: declaration)) cannot be a managed object.",
                at: Syntax(node), fixIts: fixIts)
            return
        }

        let inherited = classDecl.inheritanceClause?.inheritedTypes.map { $0.type.trimmedDescription } ?? []
        if let first = inherited.first, first == "ManagedObject" || first == "Strata.ManagedObject" {
            superclassName = nil
        } else if let first = inherited.first, let firstChar = first.first, firstChar.isUppercase,
            !["PersistentModel", "Sendable", "Hashable", "Codable", "Identifiable", "Equatable"].contains(first)
        {
            superclassName = first
        } else {
            let change = Self.addingManagedObject(to: classDecl.name, clause: classDecl.inheritanceClause)
            diagnose(.missingSuperclass,
                "@Entity class '\(className)' must inherit from ManagedObject or from another @Entity class.",
                at: Syntax(classDecl.name), fixIts: [FixIt(message: EntityFixIt(message: "Inherit from ManagedObject"), changes: [change])])
        }

        if !isFinal && !isInheritable {
            diagnose(.notFinal,
                "@Entity class '\(className)' must be final; mark it @Entity(.inheritable) or @Entity(.abstract) if other entities inherit from it.",
                at: Syntax(classDecl.classKeyword),
                fixIts: [FixIt(message: EntityFixIt(message: "Add 'final'"), changes: [
                    .replace(oldNode: Syntax(classDecl.classKeyword),
                             newNode: Syntax(TokenSyntax.identifier("final class", leadingTrivia: classDecl.classKeyword.leadingTrivia, trailingTrivia: classDecl.classKeyword.trailingTrivia)))
                ]), Self.markingInheritable(node)].compactMap { $0 })
        }

        for member in classDecl.memberBlock.members {
            if let expansion = member.decl.as(MacroExpansionDeclSyntax.self) {
                readConstraintMacro(expansion)
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            readProperty(variable)
        }
        for index in attributes.indices { attributes[index].index = index }
        for index in relationships.indices { relationships[index].index = index }
        checkAmbiguousInverses()
    }

    /// The kind of a declaration with its article, as in "an enum".
    static func kindName(of declaration: some DeclGroupSyntax) -> String {
        if declaration.is(StructDeclSyntax.self) { return "a struct" }
        if declaration.is(EnumDeclSyntax.self) { return "an enum" }
        if declaration.is(ActorDeclSyntax.self) { return "an actor" }
        if declaration.is(ProtocolDeclSyntax.self) { return "a protocol" }
        return "an extension"
    }

    /// A fix-it change that makes `ManagedObject` the first inherited type of a declaration.
    static func addingManagedObject(to name: TokenSyntax, clause: InheritanceClauseSyntax?) -> FixIt.Change {
        guard let clause else {
            return .replace(
                oldNode: Syntax(name),
                newNode: Syntax(name.with(\.tokenKind, .identifier(name.text + ": ManagedObject"))))
        }
        let managedObject = InheritedTypeSyntax(
            type: IdentifierTypeSyntax(name: .identifier("ManagedObject")), trailingComma: .commaToken(trailingTrivia: .space))
        return .replace(
            oldNode: Syntax(clause),
            newNode: Syntax(clause.with(\.inheritedTypes, InheritedTypeListSyntax([managedObject] + Array(clause.inheritedTypes)))))
    }

    /// The fix-it that turns a plain `@Entity` into `@Entity(.inheritable)`, for a class that
    /// other entities inherit from (a port of `class Student: Person`); `nil` when the
    /// attribute has arguments already.
    static func markingInheritable(_ attribute: AttributeSyntax) -> FixIt? {
        guard attribute.arguments == nil else { return nil }
        let option = LabeledExprSyntax(expression: MemberAccessExprSyntax(name: .identifier("inheritable")))
        let marked = attribute
            .with(\.leftParen, .leftParenToken())
            .with(\.arguments, .argumentList(LabeledExprListSyntax([option])))
            .with(\.rightParen, .rightParenToken(trailingTrivia: attribute.attributeName.trailingTrivia))
            .with(\.attributeName, attribute.attributeName.with(\.trailingTrivia, []))
        return FixIt(
            message: EntityFixIt(message: "Mark it @Entity(.inheritable)"),
            changes: [.replace(oldNode: Syntax(attribute), newNode: Syntax(marked))])
    }

    mutating func diagnose(_ kind: EntityDiagnostic, _ message: String, at node: Syntax, fixIts: [FixIt] = []) {
        diagnostics.append(Diagnostic(node: node, message: EntityMessage(kind: kind, message: message), fixIts: fixIts))
    }

    static func attribute(named names: Set<String>, in attributes: AttributeListSyntax) -> AttributeSyntax? {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription
            if names.contains(name) || (name.hasPrefix("Strata.") && names.contains(String(name.dropFirst(7)))) {
                return attribute
            }
        }
        return nil
    }

    mutating func readProperty(_ variable: VariableDeclSyntax) {
        let modifiers = variable.modifiers.map(\.name.tokenKind)
        if modifiers.contains(.keyword(.static)) || modifiers.contains(.keyword(.class))
            || modifiers.contains(.keyword(.lazy))
        {
            return
        }
        if Self.attribute(named: ["Transient"], in: variable.attributes) != nil { return }
        // `@_PersistedProperty` can only make accessors for a declaration of one named property;
        // any other stored property would silently stay an ordinary stored property.
        let isStored = variable.bindings.contains { $0.accessorBlock == nil }
        if isStored
            && (variable.bindings.count > 1 || !variable.bindings.allSatisfy { $0.pattern.is(IdentifierPatternSyntax.self) })
        {
            let names = variable.bindings.map { "'\($0.pattern.trimmedDescription)'" }.joined(separator: ", ")
            diagnose(.multipleBindings,
                "\(names) must be declared one per 'var': @Entity turns each stored property into accessors of its own.",
                at: Syntax(variable.bindingSpecifier))
            return
        }
        for binding in variable.bindings {
            guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
            let name = identifier.identifier.text
            if let accessors = binding.accessorBlock {
                switch accessors.accessors {
                case .getter: continue  // computed
                case .accessors(let list):
                    let kinds = list.map(\.accessorSpecifier.tokenKind)
                    if kinds.contains(.keyword(.get)) || kinds.contains(.keyword(.set)) { continue }  // computed
                    diagnose(.observedProperty,
                        "'\(name)' has property observers; @Entity properties cannot, use a computed property or @Transient.",
                        at: Syntax(accessors))
                    continue
                }
            }
            if variable.bindingSpecifier.tokenKind == .keyword(.let) {
                diagnose(.letProperty, "'\(name)' is a 'let'; @Entity properties must be 'var' so that fetched objects can be filled in.",
                    at: Syntax(variable.bindingSpecifier),
                    fixIts: [FixIt(message: EntityFixIt(message: "Replace 'let' with 'var'"), changes: [
                        .replace(oldNode: Syntax(variable.bindingSpecifier),
                                 newNode: Syntax(TokenSyntax.keyword(.var, leadingTrivia: variable.bindingSpecifier.leadingTrivia, trailingTrivia: variable.bindingSpecifier.trailingTrivia)))
                    ])])
                continue
            }
            if Self.reservedNames.contains(Self.unescaped(name)) {
                diagnose(.reservedName, "'\(name)' is reserved by Strata on managed objects; rename the property.", at: Syntax(identifier))
                continue
            }
            guard let type = binding.typeAnnotation?.type else {
                diagnose(.missingType, "'\(name)' needs an explicit type: @Entity reads the type to choose how the property is stored.",
                    at: Syntax(identifier))
                continue
            }
            let attributeNode = Self.attribute(named: ["Attribute"], in: variable.attributes)
            let relationshipNode = Self.attribute(named: ["Relationship"], in: variable.attributes)
            guard var info = classify(name: name, type: type, binding: binding, attribute: attributeNode, relationship: relationshipNode)
            else { continue }
            info.initializer = binding.initializer?.value
            if info.kind == .codable && info.initializer == nil {
                diagnose(.codableNeedsInitialValue,
                    "'\(name)' stores a Codable \(info.baseType) and needs an initial value (or an optional type), which it reads as when nothing is stored.",
                    at: Syntax(identifier))
                continue
            }
            if info.kind.isRelationship { relationships.append(info) } else { attributes.append(info) }
        }
    }

    /// Decides how a property is stored from its written type.
    mutating func classify(
        name: String, type: TypeSyntax, binding: PatternBindingSyntax, attribute: AttributeSyntax?, relationship: AttributeSyntax?
    ) -> PropertyInfo? {
        var base = type
        var isOptional = false
        if let optional = type.as(OptionalTypeSyntax.self) {
            base = optional.wrappedType
            isOptional = true
        } else if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            base = optional.wrappedType
            isOptional = true
        } else if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            base = TypeSyntax(fromProtocol: argument.argument.as(TypeSyntax.self) ?? TypeSyntax("Never"))
            isOptional = true
        }
        let baseText = Self.strippingModule(base.trimmedDescription)
        var info = PropertyInfo(
            name: name, typeText: type.trimmedDescription, baseType: baseText, isOptional: isOptional, initializer: nil,
            kind: PropertyInfo.Kind.attribute, attribute: attribute, relationship: relationship, isUnique: false, inverseName: nil, binding: binding)
        let options = attribute?.arguments?.as(LabeledExprListSyntax.self)?.map { $0.expression.trimmedDescription } ?? []
        info.isUnique = options.contains { $0 == ".unique" || $0.hasSuffix("AttributeOption.unique") }
        let forcedCodable = options.contains { $0 == ".codable" || $0.hasSuffix("AttributeOption.codable") }

        if base.is(TupleTypeSyntax.self) || base.is(FunctionTypeSyntax.self) || base.is(SomeOrAnyTypeSyntax.self)
            || base.is(MetatypeTypeSyntax.self) || Self.unsupportedTypes.contains(baseText)
        {
            var hint = ""
            if baseText.hasPrefix("UInt") || baseText == "Int8" { hint = " Use Int16, Int32, Int64 or Int." }
            diagnose(.unsupportedType, "'\(name)' has the type \(type.trimmedDescription), which Strata cannot store.\(hint)",
                at: Syntax(type))
            return nil
        }

        // Collections of other entities are to-many relationships; collections of values are Codable.
        if let (collection, element) = Self.collectionElement(of: base) {
            let elementName = Self.strippingModule(element)
            if relationship != nil || (!Self.isValueType(elementName) && !forcedCodable && attribute == nil) {
                info.kind = collection == "Set" ? .toManySet : .toManyArray
                info.baseType = elementName
                info.isOptional = isOptional
                info.inverseName = Self.inverseName(relationship)
                return info
            }
            info.kind = isOptional ? .codableOptional : .codable
            return info
        }
        if base.is(DictionaryTypeSyntax.self) {
            info.kind = isOptional ? .codableOptional : .codable
            return info
        }
        if Self.primitiveTypes.contains(baseText) && !forcedCodable {
            info.kind = .attribute
            return info
        }
        if relationship != nil || (isOptional && attribute == nil) {
            if !isOptional {
                diagnose(.toOneNotOptional,
                    "'\(name)' is a to-one relationship and must be optional ('\(baseText)?'): the related object may not exist yet.",
                    at: Syntax(type))
                return nil
            }
            info.kind = .toOne
            info.inverseName = Self.inverseName(relationship)
            return info
        }
        info.kind = isOptional ? .codableOptional : .codable
        return info
    }

    static func isValueType(_ name: String) -> Bool {
        primitiveTypes.contains(name) || name.hasPrefix("[") || name.hasPrefix("Set<") || name.hasPrefix("Array<")
            || name.hasPrefix("Dictionary<")
    }

    /// An identifier without the backticks that escape a keyword.
    static func unescaped(_ identifier: String) -> String {
        identifier.count > 1 && identifier.hasPrefix("`") && identifier.hasSuffix("`")
            ? String(identifier.dropFirst().dropLast()) : identifier
    }

    static func strippingModule(_ text: String) -> String {
        for prefix in ["Foundation.", "Swift."] where text.hasPrefix(prefix) { return String(text.dropFirst(prefix.count)) }
        return text
    }

    static func collectionElement(of type: TypeSyntax) -> (String, String)? {
        if let array = type.as(ArrayTypeSyntax.self) { return ("Array", array.element.trimmedDescription) }
        if let identifier = type.as(IdentifierTypeSyntax.self), ["Set", "Array"].contains(identifier.name.text),
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            return (identifier.name.text, argument.argument.trimmedDescription)
        }
        return nil
    }

    static func keyPathName(_ expression: ExprSyntax) -> String? {
        guard let keyPath = expression.as(KeyPathExprSyntax.self),
            let component = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self)
        else { return nil }
        return unescaped(component.declName.baseName.text)
    }

    static func inverseName(_ relationship: AttributeSyntax?) -> String? {
        guard let arguments = relationship?.arguments?.as(LabeledExprListSyntax.self),
            let inverse = arguments.first(where: { $0.label?.text == "inverse" })
        else { return nil }
        // `inverse: "books"` names the inverse without a key path, so that both sides can name
        // each other (two key paths naming each other are a cycle Swift rejects).
        if let literal = inverse.expression.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
            let segment = literal.segments.first?.as(StringSegmentSyntax.self)
        {
            return segment.content.text
        }
        return keyPathName(inverse.expression)
    }

    mutating func readConstraintMacro(_ expansion: MacroExpansionDeclSyntax) {
        let name = expansion.macroName.text
        guard name == "Unique" || name == "Index" else { return }
        var groups: [[String]] = []
        for argument in expansion.arguments {
            guard let array = argument.expression.as(ArrayExprSyntax.self) else { continue }
            var group: [String] = []
            for element in array.elements {
                guard let property = Self.keyPathName(element.expression) else {
                    diagnose(.unknownKeyPath, "#\(name) takes key paths to stored properties, like \\.title.",
                        at: Syntax(element.expression))
                    continue
                }
                group.append(property)
            }
            if !group.isEmpty { groups.append(group) }
        }
        if name == "Unique" { uniqueness += groups } else { indexes += groups }
    }

    /// Two relationships that claim the same inverse cannot both be paired with it. (Pairs where
    /// neither side names the inverse are resolved, or reported, by `Schema`, which sees both
    /// classes; only one side may name the inverse, since two key paths naming each other form
    /// a cycle the compiler rejects.)
    mutating func checkAmbiguousInverses() {
        var claimed: [String: String] = [:]
        for relationship in relationships {
            guard let inverse = relationship.inverseName else { continue }
            let key = relationship.baseType + "." + inverse
            if let first = claimed[key] {
                diagnose(.ambiguousInverse,
                    "'\(relationship.name)' and '\(first)' both name \(key) as their inverse; a relationship has one inverse, so pair \(key) with one of them.",
                    at: Syntax(relationship.binding.pattern))
            } else {
                claimed[key] = relationship.name
            }
        }
    }

    /// The index expression generated accessors use for a property.
    func indexExpression(for property: PropertyInfo) -> String {
        guard isSubentity else { return "\(property.index)" }
        let base = property.kind.isRelationship ? "relationshipBase" : "attributeBase"
        return "\(className).__strata_\(className)_\(base) + \(property.index)"
    }
}
