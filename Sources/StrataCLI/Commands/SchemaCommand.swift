import ArgumentParser
import Foundation
import Strata

/// `strata schema`: prints the schema of an Xcode model file.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the schema of an Xcode Core Data model (.xcdatamodel or .xcdatamodeld).")

    @Argument(help: "The path of a .xcdatamodel directory, its contents file, or a .xcdatamodeld bundle.")
    var path: String

    @Flag(help: "Print the serialized JSON form instead of the readable listing.")
    var json = false

    func run() throws {
        var output = StandardOutput()
        do {
            try Self.run(path: path, json: json, into: &output)
        } catch let error as StrataError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }

    static func run(path: String, json: Bool, into output: inout some TextOutputStream) throws {
        let url = URL(fileURLWithPath: path)
        let models: [XcodeModel]
        let current: String?
        if url.pathExtension == "xcdatamodeld" {
            let bundle = try XcodeModelBundle.load(contentsOf: url)
            models = bundle.versions
            current = bundle.currentVersionName
        } else {
            models = [try XcodeModel.load(contentsOf: url)]
            current = nil
        }
        for model in models {
            if json {
                print(String(decoding: model.schema.serializedRepresentation(), as: UTF8.self), to: &output)
                continue
            }
            let marker = current.map { $0.hasPrefix(model.name) ? " (current)" : "" } ?? ""
            print("# \(model.name)\(marker)", to: &output)
            print(model.schema, to: &output)
            for warning in model.warnings + model.schema.warnings {
                print("warning: \(warning)", to: &output)
            }
            print("", to: &output)
        }
    }
}
