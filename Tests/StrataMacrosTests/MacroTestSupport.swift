import StrataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros as `Strata/Macros/Macros.swift` declares them, including the conformances that
/// `@Entity`'s extension role is asked for.
let strataMacroSpecs: [String: MacroSpec] = [
    "Entity": MacroSpec(type: EntityMacro.self, conformances: ["PersistentModel", "ValueSnapshotRepresentable"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: MarkerMacro.self),
    "Unique": MacroSpec(type: MarkerDeclarationMacro.self),
    "Index": MacroSpec(type: MarkerDeclarationMacro.self),
]

/// Only `@_PersistedProperty`, for testing the accessor macro on its own.
let persistedPropertyMacroSpecs: [String: MacroSpec] = [
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)
]

/// Expands `source` with the Strata macros and records a Swift Testing issue, at the caller's
/// location, for every difference from `expandedSource`, `diagnostics` and `fixedSource`.
///
/// The expanded source is compared in full, so a diagnostics test that passes the original
/// source without its macro attributes also proves that no member, accessor or extension was
/// generated.
func assertExpansion(
    _ source: String,
    expandedSource: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    macroSpecs: [String: MacroSpec] = strataMacroSpecs,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
) {
    assertMacroExpansion(
        source,
        expandedSource: expandedSource,
        diagnostics: diagnostics,
        macroSpecs: macroSpecs,
        applyFixIts: applyFixIts,
        fixedSource: fixedSource,
        indentationWidth: .spaces(4),
        failureHandler: { failure in
            Issue.record(
                Comment(rawValue: failure.message),
                sourceLocation: SourceLocation(
                    fileID: failure.location.fileID,
                    filePath: failure.location.filePath,
                    line: failure.location.line,
                    column: failure.location.column))
        },
        fileID: fileID,
        filePath: filePath,
        line: line,
        column: column
    )
}
