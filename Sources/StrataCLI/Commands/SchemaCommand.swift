import ArgumentParser
import Foundation
import Strata

/// `strata schema STORE|MODEL`: the schema of a store or an Xcode model, as text, JSON or an
/// entity-relationship diagram.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the schema of a store or model, as text, JSON or a diagram.",
        discussion: """
            Reads the schema a store records (SQLite file or postgres:// URL), or an Xcode model \
            (.xcdatamodeld bundle, .xcdatamodel folder, or its contents file). For a Core Data \
            store, name its model with --model. Text lists every version of a bundle and marks \
            the current one; the other formats show one version (--version, default the current).

            Formats: text, json (Strata's serialized schema), svg (an entity-relationship diagram \
            drawn by strata), dot (Graphviz) and mermaid (Mermaid erDiagram).

            Examples:
              strata schema Movies.sqlite
              strata schema Movies.xcdatamodeld --version "Movies 2" --format json
              strata schema Movies.sqlite --format svg --output movies.svg
              strata schema Movies.sqlite --format dot | dot -Tpng > movies.png
            """)

    @Argument(help: ArgumentHelp("A store (SQLite file or postgres:// URL) or an Xcode model.", valueName: "store-or-model"))
    var source: String

    @Option(help: ArgumentHelp("The Xcode model of a Core Data store.", valueName: "model"))
    var model: String?

    @Option(help: "The format: text, json, svg, dot or mermaid.")
    var format: SchemaFormat = .text

    @Flag(help: "Print JSON (--format json).")
    var json = false

    @Option(help: ArgumentHelp("The version of a model bundle to show (default: the current one).", valueName: "name"))
    var version: String?

    @Option(name: [.customLong("output"), .customShort("o")], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    /// The formats of `strata schema`.
    enum SchemaFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json, svg, dot, mermaid
    }

    func run() throws {
        try reportingErrors {
            let channel = try output.map { try OutputChannel.creatingFile(atPath: $0) } ?? .standardOutput
            do {
                try write(to: channel)
                try channel.close()
            } catch {
                channel.discard()
                throw error
            }
        }
    }

    private func write(to channel: OutputChannel) throws {
        let format = json ? .json : format
        let versions = try Self.schemas(of: source, model: model)
        if format == .text && version == nil {
            for entry in versions.list {
                let marker = versions.isModel && versions.list.count > 1 && entry.isCurrent ? " (current)" : ""
                try channel.writeLine(channel.styled("# \(entry.name)\(marker)", .bold))
                try channel.writeLine(entry.schema.description)
                for warning in entry.warnings { try channel.writeLine("warning: \(warning)") }
                try channel.writeLine()
            }
            return
        }
        let chosen: (name: String, schema: Schema, isCurrent: Bool, warnings: [String])
        if let version {
            guard let named = versions.list.first(where: { $0.name == version }) else {
                throw CommandFailure(
                    "\(source) has no version \(version); it has \(versions.list.map(\.name).joined(separator: ", ")).")
            }
            chosen = named
        } else {
            guard let current = versions.list.first(where: \.isCurrent) ?? versions.list.last else {
                throw CommandFailure("\(source) holds no schema.")
            }
            chosen = current
        }
        switch format {
        case .text:
            try channel.writeLine(chosen.schema.description)
        case .json:
            try channel.writeLine(String(decoding: chosen.schema.serializedRepresentation(), as: UTF8.self))
        case .svg, .dot, .mermaid:
            try channel.write(Self.diagram(chosen.schema, format: format))
        }
    }

    /// The diagram of `schema` in a diagram format.
    static func diagram(_ schema: Schema, format: SchemaFormat) -> String {
        switch format {
        case .dot: SchemaDiagram.dot(schema)
        case .mermaid: SchemaDiagram.mermaid(schema)
        default: SchemaDiagram.svg(schema)
        }
    }

    /// The schemas `source` holds: each version of a model (the current one marked), or the one
    /// schema a store records.
    static func schemas(of source: String, model: String?) throws -> (
        list: [(name: String, schema: Schema, isCurrent: Bool, warnings: [String])], isModel: Bool
    ) {
        let url = URL(fileURLWithPath: source)
        let modelExtensions: Set<String> = ["xcdatamodeld", "xcdatamodel"]
        if !StoreOptions.isPostgresURL(source), modelExtensions.contains(url.pathExtension) || url.lastPathComponent == "contents" {
            let (models, current) = try OpenedStore.loadModel(at: source)
            return (
                models.map { model in
                    (model.name, model.schema, current.map { $0 == model.name } ?? (models.count == 1), model.warnings + model.schema.warnings)
                }, true
            )
        }
        let schema = try OpenedStore.recordedSchema(of: source, model: model)
        return ([(source, schema, true, schema.warnings)], false)
    }
}
