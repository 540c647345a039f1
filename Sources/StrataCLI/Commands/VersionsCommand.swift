import ArgumentParser
import Foundation
import Strata

/// `strata versions STORE --model Model.xcdatamodeld`: which version of a versioned model wrote
/// a store.
struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "Report which version of a model wrote a store.",
        discussion: """
            Compares the schema the store records with each version of the model, without writing \
            to the store. A store Core Data wrote is compared by its tables; when several \
            versions fit them (they differ only in optionality, defaults or validation, which \
            the tables do not show), it says so and what tells them apart. Exits with status 2 \
            when no version matches.

            Examples:
              strata versions Students.sqlite --model Students.xcdatamodeld
              strata versions 'postgres://app@db.internal/school' \\
                  --model Students.xcdatamodeld
            """)

    @Argument(help: "The store: an SQLite file or a postgres:// URL.")
    var store: String

    @Option(help: "The versioned Xcode model (.xcdatamodeld).")
    var model: String

    func run() throws {
        let found = try reportingErrors {
            let bundle = try XcodeModelBundle.load(contentsOf: URL(fileURLWithPath: model))
            let description = try StoreOptions.description(of: store)
            let matching = try BundleVersion.$bundle.withValue(bundle) { try BundleVersion.versionsForStore(description) }
            let output = OutputChannel.standardOutput
            for (index, version) in bundle.versions.enumerated() {
                var marks: [String] = []
                if matching.contains(where: { $0.index == index }) { marks.append("store") }
                if version.name == bundle.currentVersionName { marks.append("current") }
                try output.writeLine("\(version.name)\(marks.isEmpty ? "" : " (\(marks.joined(separator: ", ")))")")
            }
            if let reason = try BundleVersion.$bundle.withValue(bundle, operation: { try BundleVersion.ambiguity(among: matching) }) {
                try output.writeLine(reason)
            }
            try output.flush()
            if matching.isEmpty { OutputChannel.standardError.writeError("No version of \(model) wrote \(store).") }
            return !matching.isEmpty
        }
        if !found { throw ExitCode(ExitStatus.problemsFound) }
    }
}
