import SwiftDiagnostics
import SwiftSyntax

/// The diagnostics `@Entity` emits, each with a stable identifier.
enum EntityDiagnostic: String, DiagnosticMessage {
    case notAClass
    case notFinal
    case missingSuperclass
    case letProperty
    case multipleBindings
    case missingType
    case unsupportedType
    case codableNeedsInitialValue
    case ambiguousInverse
    case reservedName
    case observedProperty
    case toOneNotOptional
    case unknownKeyPath

    var diagnosticID: MessageID { MessageID(domain: "StrataMacros", id: rawValue) }

    var severity: DiagnosticSeverity {
.error
    }

    var message: String { "" }
}

/// A diagnostic with a message built for the case at hand.
struct EntityMessage: DiagnosticMessage {
    let kind: EntityDiagnostic
    let message: String
    var diagnosticID: MessageID { kind.diagnosticID }
    var severity: DiagnosticSeverity { kind.severity }
}

struct EntityFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "StrataMacros", id: message) }
}

/// Thrown to stop an expansion after its diagnostics were emitted.
struct DiagnosticsEmitted: Error {}
