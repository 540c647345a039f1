import Foundation

/// Models found by name, as Core Data finds `<name>.momd` in the main bundle for
/// `NSPersistentContainer(name:)` and the data-stack kit's `NSManagedObjectModel.named(_:in:)`.
extension XcodeModelBundle {
    /// The deepest folder level searched below the starting folder.
    static let searchDepth = 6

    /// Loads the model named `name` from `bundle`'s resources: `<name>.xcdatamodeld`, or a
    /// single `<name>.xcdatamodel`, at the top of the resources or in a folder below them.
    ///
    /// ```swift
    /// // Package.swift: .target(name: "App", resources: [.copy("Movies.xcdatamodeld")])
    /// let model = try XcodeModelBundle.named("Movies", in: .module)
    /// let schema = model.currentVersion.schema
    /// ```
    ///
    /// Xcode compiles models into `.momd` folders for Apple platforms; Strata reads the source
    /// model, so ship the `.xcdatamodeld` as a resource (`.copy`).
    ///
    /// - Parameters:
    ///   - name: The model's name, without extension.
    ///   - bundle: The bundle whose resources hold it; the main bundle by default.
    /// - Returns: Every version of the model, its current version marked.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelFileNotFound`` when there is
    ///   no model of that name (naming a compiled `.momd` found instead), and the errors of
    ///   ``load(contentsOf:)`` when the model cannot be read.
    public static func named(_ name: String, in bundle: Bundle = .main) throws -> XcodeModelBundle {
        try named(name, inDirectory: bundle.resourceURL ?? bundle.bundleURL)
    }

    /// Loads the model named `name` from `directory`: `<name>.xcdatamodeld`, or a single
    /// `<name>.xcdatamodel`, in the folder or in a folder below it (searched breadth first,
    /// six levels deep, never inside a model).
    ///
    /// ```swift
    /// let model = try XcodeModelBundle.named("Movies", inDirectory: URL(fileURLWithPath: "Resources"))
    /// ```
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelFileNotFound`` when there is
    ///   no model of that name, and the errors of ``load(contentsOf:)`` when it cannot be read.
    public static func named(_ name: String, inDirectory directory: URL) throws -> XcodeModelBundle {
        let found = findModel(named: name, in: directory)
        if let model = found.model { return try load(contentsOf: model) }
        var message = "There is no model named '\(name)' (\(name).xcdatamodeld or \(name).xcdatamodel) in \(directory.path)."
        if let compiled = found.compiled {
            message +=
                " There is a compiled \(compiled.lastPathComponent), which Strata cannot read: ship the source \(name).xcdatamodeld as a resource (.copy(\"\(name).xcdatamodeld\") in Package.swift)."
        } else {
            message += " Check the name and that the model is a resource of the bundle."
        }
        throw StrataError(.modelFileNotFound, message, fileURL: directory)
    }

    /// The first source model named `name` breadth first below `directory`, and else the first
    /// compiled one (for the error message).
    private static func findModel(named name: String, in directory: URL) -> (model: URL?, compiled: URL?) {
        let sources = ["xcdatamodeld", "xcdatamodel"].map { "\(name).\($0)" }
        let compiledNames = ["momd", "mom"].map { "\(name).\($0)" }
        let modelExtensions: Set<String> = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]
        var level = [directory]
        var compiled: URL?
        for _ in 0...searchDepth where !level.isEmpty {
            var next: [URL] = []
            for folder in level {
                let entries =
                    (try? FileManager.default.contentsOfDirectory(
                        at: folder, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])) ?? []
                for source in sources {
                    if let match = entries.first(where: { $0.lastPathComponent == source }) { return (match, nil) }
                }
                if compiled == nil { compiled = entries.first { compiledNames.contains($0.lastPathComponent) } }
                next += entries.filter { entry in
                    !modelExtensions.contains(entry.pathExtension)
                        && (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
                }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
            }
            level = next
        }
        return (nil, compiled)
    }
}

extension Schema {
    /// The current version of the model named `name` in `bundle`'s resources (the data-stack
    /// kit's `NSManagedObjectModel.named(_:in:)`).
    ///
    /// ```swift
    /// let schema = try Schema.named("Movies", in: .module)
    /// let container = try PersistentContainer(name: "Movies", schema: schema)
    /// ```
    ///
    /// - Throws: The errors of ``XcodeModelBundle/named(_:in:)``.
    public static func named(_ name: String, in bundle: Bundle = .main) throws -> Schema {
        try XcodeModelBundle.named(name, in: bundle).currentVersion.schema
    }

    /// The current version of the model named `name` in `directory` or a folder below it.
    ///
    /// - Throws: The errors of ``XcodeModelBundle/named(_:inDirectory:)``.
    public static func named(_ name: String, inDirectory directory: URL) throws -> Schema {
        try XcodeModelBundle.named(name, inDirectory: directory).currentVersion.schema
    }
}
