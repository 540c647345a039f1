import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entity`: generates the model information, accessors and value twin of a class.
public struct EntityMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: Member role: model information, initial values and the value twin.

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let analysis = EntityAnalysis(declaration: declaration, attribute: node)
        for diagnostic in analysis.diagnostics { context.diagnose(diagnostic) }
        if !analysis.hasErrors { return EntityGenerator(analysis).members() }
        guard analysis.mayBeSubclassed else { return [] }
        return EntityGenerator(analysis).standIns()
    }

    // MARK: Member-attribute role: accessors on every stored property.

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let variable = member.as(VariableDeclSyntax.self), variable.bindings.count == 1,
            let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.text
        else { return [] }
        let analysis = EntityAnalysis(declaration: declaration, attribute: node)
        guard !analysis.hasErrors, let property = analysis.properties.first(where: { $0.name == name }) else { return [] }
        let index = analysis.indexExpression(for: property)
        return [
            "@_PersistedProperty(\(literal: property.kind.rawValue), \(literal: index), \(literal: property.baseType))"
        ]
    }

    // MARK: Extension role: protocol conformances.

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let analysis = EntityAnalysis(declaration: declaration, attribute: node)
        // `@Entity` declares both conformances and is for final classes; `@Entity(.abstract)` and
        // `@Entity(.inheritable)` declare only PersistentModel. Every declared conformance must be
        // emitted for a class that is subclassed, errors or not: the Swift 6.3 compiler crashes
        // (assertion `isConcrete()`) looking up a subclass's conformances when one is missing,
        // before it shows any diagnostic. The compiler leaves out of `protocols` the ones a
        // subclass already inherits. A non-final class with errors gets them too, with the
        // stand-ins of ``EntityGenerator/standIns()``; a final class (which nothing can subclass)
        // and anything that is not a class get nothing.
        if analysis.hasErrors && !analysis.mayBeSubclassed { return [] }
        let wanted = protocols.map(\.trimmedDescription).filter { name in
            !name.hasSuffix("ValueSnapshotRepresentable") || analysis.isFinal
                || (analysis.hasErrors && analysis.declaresValueSnapshot)
        }
        guard !wanted.isEmpty else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): \(raw: wanted.joined(separator: ", ")) {}"
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }
}

/// Writes the members of an analysed `@Entity` class.
struct EntityGenerator {
    let analysis: EntityAnalysis
    let name: String
    let access: String

    init(_ analysis: EntityAnalysis) {
        self.analysis = analysis
        self.name = analysis.className
        self.access = analysis.accessPrefix
    }

    func members() -> [DeclSyntax] {
        var members: [DeclSyntax] = [
            entityDescription(),
            "private static let __strata_\(raw: name)_entity = Schema._defaultEntity(for: \(raw: name).self)",
            "override \(raw: access)class var entity: Entity { __strata_\(raw: name)_entity }",
            relatedTypes(),
            keyPathTable(),
            """
            override \(raw: access)class func propertyName(for keyPath: AnyKeyPath) -> String? {
                for (candidate, name) in __strata_\(raw: name)_keyPathNames(\(raw: name).self) where candidate == keyPath {
                    return name
                }
                return nil
            }
            """,
            keyPathNamesProperty(),
        ] + optionalKeyPathTable() + [
            initialValues(),
            valueStruct(),
            makeValue(),
            updateFromValue(),
        ]
        if let parent = analysis.superclassName {
            members.append(
                "static let __strata_\(raw: name)_attributeBase = \(raw: parent).entity.attributes.count")
            members.append(
                "static let __strata_\(raw: name)_relationshipBase = \(raw: parent).entity.relationships.count")
        }
        if analysis.isFinal {
            members.append("\(raw: access)var value: Value { __strata_\(raw: name)_makeValue() }")
            members.append(
                """
                \(raw: access)func update(from value: Value) throws {
                    try __strata_\(raw: name)_update(from: value)
                }
                """)
        }
        return members
    }

    /// What a class that `@Entity` reported errors on gets when it may be subclassed: empty
    /// stand-ins for the members a subclass's generated code uses (the key-path tables, `Value`,
    /// making and applying a `Value`) and, when the macro's form declares the conformance, for
    /// the requirements of `ValueSnapshotRepresentable`. With them the declared conformances
    /// can be emitted (the compiler crashes on a subclass otherwise) without errors of their
    /// own, and a subclass's code adds few. Nothing runs them: the module does not compile
    /// while the reported errors stand.
    func standIns() -> [DeclSyntax] {
        var members: [DeclSyntax] = [
            """
            /// Stands in, empty, until the errors `@Entity` reported on `\(raw: name)` are fixed.
            \(raw: access)struct Value: Sendable, Hashable, Codable {
                \(raw: access)init() {}
            }
            """,
            "static func __strata_\(raw: name)_keyPathNames<Root: \(raw: name)>(_ root: Root.Type) -> [(AnyKeyPath, String)] { [] }",
            "static func __strata_\(raw: name)_optionalKeyPathNames<Root: \(raw: name)>(_ root: Root.Type) -> [(AnyKeyPath, String)] { [] }",
            "\(raw: access)func __strata_\(raw: name)_makeValue() -> \(raw: name).Value { \(raw: name).Value() }",
            "\(raw: access)func __strata_\(raw: name)_update(from value: \(raw: name).Value) throws {}",
        ]
        if analysis.declaresValueSnapshot {
            members.append("\(raw: access)var value: Value { __strata_\(raw: name)_makeValue() }")
            members.append("\(raw: access)func update(from value: Value) throws {}")
        }
        return members
    }

    static func isSimpleLiteral(_ expression: ExprSyntax?) -> Bool {
        guard var expression else { return false }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            expression = prefix.expression
        }
        if expression.is(IntegerLiteralExprSyntax.self) || expression.is(FloatLiteralExprSyntax.self)
            || expression.is(BooleanLiteralExprSyntax.self) || expression.is(NilLiteralExprSyntax.self)
        {
            return true
        }
        if let string = expression.as(StringLiteralExprSyntax.self) {
            return string.segments.allSatisfy { $0.is(StringSegmentSyntax.self) } && string.openingPounds == nil
        }
        return false
    }

    func attributeDescription(_ property: PropertyInfo) -> String {
        var text: String
        switch property.kind {
        case .attribute:
            text = "AttributeDescription(name: \"\(property.schemaName)\", type: (\(property.baseType)).attributeType, isOptional: \(property.isOptional)"
        default:
            text = "AttributeDescription(name: \"\(property.schemaName)\", type: .codable, isOptional: \(property.isOptional)"
        }
        if property.kind == .attribute, Self.isSimpleLiteral(property.initializer), let initializer = property.initializer {
            text += ", defaultValue: \(initializer.trimmedDescription)"
        }
        if property.kind != .attribute {
            text += ", valueTypeName: \"\(property.baseType)\""
        }
        text += ")"
        if let attribute = property.attribute {
            let arguments = attribute.arguments?.as(LabeledExprListSyntax.self)?.trimmedDescription ?? ""
            text += "._applying(\(arguments))"
        }
        return text
    }

    func relationshipDescription(_ property: PropertyInfo) -> String {
        let isToMany = property.kind != .toOne
        var text =
            "RelationshipDescription(name: \"\(property.schemaName)\", destination: \"\(property.baseType)\", inverse: \(property.inverseName.map { "\"\($0)\"" } ?? "nil"), isToMany: \(isToMany), isOrdered: \(property.kind == .toManyArray), isOptional: \(isToMany || property.isOptional))"
        if let relationship = property.relationship {
            let arguments = relationship.arguments?.as(LabeledExprListSyntax.self)?.trimmedDescription ?? ""
            text += "._applying(\(arguments))"
        }
        return text
    }

    func entityDescription() -> DeclSyntax {
        let attributes = analysis.attributes.map { "            " + attributeDescription($0) }.joined(separator: ",\n")
        let relationships = analysis.relationships.map { "            " + relationshipDescription($0) }.joined(separator: ",\n")
        let unique = analysis.attributes.filter(\.isUnique).map { [$0.schemaName] } + analysis.uniqueness
        let uniqueText = unique.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }.joined(separator: ", ")
        let indexText = analysis.indexes.map { "IndexDescription([" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "])" }
            .joined(separator: ", ")
        return """
            override \(raw: access)class var entityDescription: EntityDescription? {
                EntityDescription(
                    name: "\(raw: name)",
                    isAbstract: \(raw: analysis.isAbstract),
                    superentity: \(raw: analysis.superclassBaseName.map { "\"\($0)\"" } ?? "nil"),
                    attributes: [
            \(raw: attributes)
                    ],
                    relationships: [
            \(raw: relationships)
                    ],
                    uniquenessConstraints: [\(raw: uniqueText)],
                    indexes: [\(raw: indexText)],
                    managedObjectClassName: "\(raw: name)")
            }
            """
    }

    func relatedTypes() -> DeclSyntax {
        var types: [String] = []
        if let parent = analysis.superclassName { types.append(parent) }
        for relationship in analysis.relationships where !types.contains(relationship.baseType) {
            types.append(relationship.baseType)
        }
        return """
            override \(raw: access)class var relatedModelTypes: [ManagedObject.Type] { [\(raw: types.map { "\($0).self" }.joined(separator: ", "))] }
            """
    }

    func keyPathTable() -> DeclSyntax {
        let own = analysis.properties.map { "(\\Root.\($0.name), \"\($0.schemaName)\")" }.joined(separator: ", ")
        let inherited = analysis.superclassReference(to: "keyPathNames").map { "\($0)(Root.self) + " } ?? ""
        return """
            static func __strata_\(raw: name)_keyPathNames<Root: \(raw: name)>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                \(raw: inherited)[\(raw: own)]
            }
            """
    }

    /// The table of ``keyPathTable()`` rooted at this class: `\Movie.director` as a user's
    /// `\Movie.director?.name` starts. Queries name a key path through relationships by
    /// rebuilding it from these and ``optionalKeyPathTable()``.
    func keyPathNamesProperty() -> DeclSyntax {
        """
        override \(raw: access)class var _keyPathNames: [(AnyKeyPath, String)] {
            __strata_\(raw: name)_keyPathNames(\(raw: name).self)
        }
        """
    }

    /// Every property, inherited ones included, reached through an optional of the class
    /// (`\Movie?.?.title`): the rest of a key path that goes through a to-one relationship to
    /// this class, as in `\Review.movie?.title`.
    func optionalKeyPathTable() -> [DeclSyntax] {
        let own = analysis.properties.map { "(\\Root?.?.\($0.name), \"\($0.schemaName)\")" }.joined(separator: ", ")
        let inherited = analysis.superclassReference(to: "optionalKeyPathNames").map { "\($0)(Root.self) + " } ?? ""
        return [
            """
            static func __strata_\(raw: name)_optionalKeyPathNames<Root: \(raw: name)>(_ root: Root.Type) -> [(AnyKeyPath, String)] {
                \(raw: inherited)[\(raw: own)]
            }
            """,
            """
            override \(raw: access)class var _optionalKeyPathNames: [(AnyKeyPath, String)] {
                __strata_\(raw: name)_optionalKeyPathNames(\(raw: name).self)
            }
            """,
        ]
    }

    func initialValues() -> DeclSyntax {
        let assignments = analysis.attributes.compactMap { property -> String? in
            guard let initializer = property.initializer, !Self.isSimpleLiteral(initializer) else { return nil }
            return "self.\(property.name) = \(initializer.trimmedDescription)"
        }
        return """
            override \(raw: access)func _strataApplyInitialValues() {
                super._strataApplyInitialValues()
                \(raw: assignments.joined(separator: "\n"))
            }
            """
    }

    func valueStruct() -> DeclSyntax {
        var fields: [(name: String, type: String, defaultValue: String?)] = [("objectID", "ObjectID?", "nil")]
        if let parent = analysis.superclassName { fields.append(("inherited", "\(parent).Value", nil)) }
        for property in analysis.attributes {
            let defaultValue = property.initializer?.trimmedDescription ?? (property.isOptional ? "nil" : nil)
            fields.append((property.name, property.typeText, defaultValue))
        }
        for property in analysis.relationships {
            if property.kind == .toOne {
                fields.append((property.name, "ObjectID?", "nil"))
            } else {
                fields.append((property.name, "[ObjectID]", "[]"))
            }
        }
        let declarations = fields.map { "\(access)var \($0.name): \($0.type)" }.joined(separator: "\n")
        let parameters = fields.map { "\($0.name): \($0.type)" + ($0.defaultValue.map { " = \($0)" } ?? "") }
            .joined(separator: ", ")
        let assignments = fields.map { "self.\($0.name) = \($0.name)" }.joined(separator: "\n")
        var lookup = ""
        var attributes = ""
        if let parent = analysis.superclassName {
            attributes = "@dynamicMemberLookup\n"
            // Unindented like the other interpolated lines: the expansion's formatter indents it.
            lookup = [
                "",
                "",
                "/// The inherited properties, read and written as if they were declared here.",
                "\(access)subscript<T>(dynamicMember keyPath: WritableKeyPath<\(parent).Value, T>) -> T {",
                "get {",
                "inherited[keyPath: keyPath]",
                "}",
                "set {",
                "inherited[keyPath: keyPath] = newValue",
                "}",
                "}",
            ].joined(separator: "\n")
        }
        // A final class's snapshot is the class's value type for a `Repository`.
        let conformances = analysis.isFinal ? "Sendable, Hashable, Codable, RepositoryValue" : "Sendable, Hashable, Codable"
        let managedModel =
            analysis.isFinal ? "\n\n/// The class the snapshot is taken of.\n\(access)typealias ManagedModel = \(name)" : ""
        return """
            /// A `Sendable` snapshot of a `\(raw: name)`: its stored properties, its relationships as
            /// object IDs, and its own object ID (`nil` for a value not yet saved as an object).
            \(raw: attributes)\(raw: access)struct Value: \(raw: conformances) {
                \(raw: declarations)\(raw: managedModel)

                /// Creates a snapshot.
                \(raw: access)init(\(raw: parameters)) {
                    \(raw: assignments)
                }\(raw: lookup)
            }
            """
    }

    func makeValue() -> DeclSyntax {
        var arguments = ["objectID: objectID"]
        if let parent = analysis.superclassBaseName { arguments.append("inherited: __strata_\(parent)_makeValue()") }
        for property in analysis.attributes { arguments.append("\(property.argumentLabel): self.\(property.name)") }
        for property in analysis.relationships {
            let index = analysis.indexExpression(for: property)
            arguments.append(
                property.kind == .toOne
                    ? "\(property.argumentLabel): _relatedObjectID(at: \(index))"
                    : "\(property.argumentLabel): _relatedObjectIDs(at: \(index))")
        }
        return """
            \(raw: access)func __strata_\(raw: name)_makeValue() -> \(raw: name).Value {
                \(raw: name).Value(\(raw: arguments.joined(separator: ", ")))
            }
            """
    }

    func updateFromValue() -> DeclSyntax {
        var lines: [String] = []
        if let parent = analysis.superclassBaseName { lines.append("try __strata_\(parent)_update(from: value.inherited)") }
        for property in analysis.attributes { lines.append("self.\(property.name) = value.\(property.name)") }
        for property in analysis.relationships {
            let index = analysis.indexExpression(for: property)
            lines.append(
                property.kind == .toOne
                    ? "try _updateToOne(value.\(property.name), at: \(index))"
                    : "try _updateToMany(value.\(property.name), at: \(index))")
        }
        return """
            \(raw: access)func __strata_\(raw: name)_update(from value: \(raw: name).Value) throws {
                \(raw: lines.joined(separator: "\n"))
            }
            """
    }
}
