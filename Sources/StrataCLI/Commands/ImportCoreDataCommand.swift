import ArgumentParser
import Foundation
import Strata

/// `strata import-coredata STORE --model Model.xcdatamodeld --output new.sqlite`: imports a
/// store that Core Data wrote into a new Strata store.
struct ImportCoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-coredata",
        abstract: "Import a store that Core Data wrote into a new Strata store.",
        discussion: """
            Finds the version of the model whose table layout fits the Core Data store (or takes \
            --version), reads the store without writing to it, and writes every object into a new \
            Strata store in one go. Migrate the result with `strata migrate` afterwards.

            Examples:
              strata import-coredata Library.sqlite --model Library.xcdatamodeld \\
                  --output Library-strata.sqlite
            """)

    @Argument(help: "The SQLite store Core Data wrote.")
    var store: String

    @Option(help: "The Xcode model (.xcdatamodeld) the app used.")
    var model: String

    @Option(help: "The model version that wrote the store (default: detected from its tables).")
    var version: String?

    @Option(help: "The new Strata store to write; it must not exist.")
    var output: String

    func run() throws {
        var output = StandardOutput()
        try reportingErrors {
            let bundle = try XcodeModelBundle.load(contentsOf: URL(fileURLWithPath: model))
            let source = URL(fileURLWithPath: store)
            try OpenedStore.checkFile(source)
            let chosen: XcodeModel
            if let version {
                guard let named = bundle.version(named: version) else {
                    throw StrataError(
                        .migrationFailed, "\(model) has no version \(version); it has \(bundle.versions.map(\.name).joined(separator: ", ")).")
                }
                chosen = named
            } else {
                let fitting = try CoreDataImport.versions(of: bundle, forStoreAt: source)
                guard fitting.count == 1, let only = fitting.first else {
                    throw StrataError(
                        .migrationFailed,
                        fitting.isEmpty
                            ? "No version of \(model) has the tables of \(store); name one with --version to see why."
                            : "Versions \(fitting.map(\.name).joined(separator: ", ")) all fit \(store); choose one with --version.")
                }
                chosen = only
            }
            let bar = ProgressBar()
            defer { bar.finish() }
            let count = try CoreDataImport.importStore(
                at: source, schema: chosen.schema, to: URL(fileURLWithPath: self.output)
            ) { progress in
                bar.update(phase: progress.phase.rawValue, completed: progress.completedUnitCount, total: progress.totalUnitCount)
            }
            bar.finish()
            print("Imported \(count) objects written with \(chosen.name) into \(self.output).", to: &output)
        }
    }
}
