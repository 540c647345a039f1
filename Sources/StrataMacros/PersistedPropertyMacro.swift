import SwiftSyntax
import SwiftSyntaxMacros

/// Turns one stored property of an `@Entity` class into accessors over the object's value
/// arrays. Its arguments are the storage kind, the index expression and the base type, all
/// computed by `@Entity`.
public struct PersistedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let binding = variable.bindings.first,
            let arguments = node.arguments?.as(LabeledExprListSyntax.self), arguments.count == 3
        else { return [] }
        let values = arguments.map { argument -> String in
            guard let literal = argument.expression.as(StringLiteralExprSyntax.self) else { return "" }
            return literal.segments.compactMap { $0.as(StringSegmentSyntax.self)?.content.text }.joined()
        }
        let (kind, index, type) = (values[0], values[1], values[2])
        let initializer = binding.initializer?.value.trimmedDescription

        let getter: String
        let setter: String
        switch PropertyInfo.Kind(rawValue: kind) {
        case .attribute:
            let written = binding.typeAnnotation?.type.trimmedDescription ?? type
            getter = "_attributeValue(at: \(index), as: (\(written)).self)"
            setter = "_setAttributeValue(newValue, at: \(index))"
        case .codable:
            getter = "_codableValue(at: \(index), fallback: \(initializer ?? "preconditionFailure()"))"
            setter = "_setCodableValue(newValue, at: \(index))"
        case .codableOptional:
            getter = "_codableValue(at: \(index))"
            setter = "_setCodableValue(newValue, at: \(index))"
        case .toOne:
            getter = "_toOneValue(at: \(index), as: \(type).self)"
            setter = "_setToOne(newValue, at: \(index))"
        case .toManySet:
            getter = "_toManySet(at: \(index), as: \(type).self)"
            setter = "_setToMany(newValue, at: \(index))"
        case .toManyArray:
            getter = "_toManyArray(at: \(index), as: \(type).self)"
            setter = "_setToMany(newValue, at: \(index))"
        case nil:
            return []
        }
        var accessors: [AccessorDeclSyntax] = []
        if initializer != nil {
            // The initial value is applied per new object by `_strataApplyInitialValues()`;
            // this accessor only makes the declaration's `= value` legal on a computed property.
            accessors.append("init(initialValue) {}")
        }
        accessors.append("get { \(raw: getter) }")
        accessors.append("set { \(raw: setter) }")
        return accessors
    }
}
