import Foundation

/// One version of a Core Data model made in Xcode's model editor (a `.xcdatamodel`), read into
/// a Strata ``Schema``.
///
/// Xcode keeps each model version as a folder holding one XML file named `contents`. Loading it
/// maps every entity, attribute, relationship, uniqueness constraint, fetch index and
/// configuration onto Strata's declarations and validates the result as a ``Schema``, so that
/// an app moving from Core Data keeps its model file and its store layout.
///
/// Parts of a model that Strata has no use for are skipped: diagram layout (`<elements>`) and
/// user info silently, anything else (fetch requests, fetched properties, index expressions)
/// with an entry in ``warnings`` that names the element and its line.
///
/// ```swift
/// let model = try XcodeModel.load(contentsOf: URL(fileURLWithPath: "Movies.xcdatamodel"))
/// for warning in model.warnings { print(warning) }
/// print(model.schema.entities.map(\.name))   // ["Movie", "Review"]
/// ```
///
/// Loading is synchronous, reads the file once and keeps no reference to it; the result is an
/// immutable, `Sendable` value. Files of any size load (the XML is parsed in chunks), as long as
/// no single value is over 10,000,000 bytes. Files that declare a document type (`<!DOCTYPE`)
/// are refused: Xcode never writes one, and it is what XML external-entity and entity-expansion
/// attacks need.
public struct XcodeModel: Sendable {
    /// The model version's name: its folder name without `.xcdatamodel` (`"Model 2"`), or the
    /// name given to ``parse(_:name:)``.
    public let name: String
    /// The validated schema the model file declares.
    public let schema: Schema
    /// Parts of the file that were ignored, each naming the element and its line, such as
    /// `"Movies, line 42: ignored unsupported element <fetchRequest> in the model."`.
    ///
    /// Problems the schema itself notices (a relationship without an inverse, say) are in the
    /// schema's own ``Schema/warnings``.
    public let warnings: [String]

    init(name: String, schema: Schema, warnings: [String]) {
        self.name = name
        self.schema = schema
        self.warnings = warnings
    }

    /// Loads one model version from disk.
    ///
    /// `url` may name the `.xcdatamodel` folder or the `contents` file inside it. The model's
    /// ``name`` is the folder's name without its extension. To load a versioned model (a
    /// `.xcdatamodeld` folder) use ``XcodeModelBundle/load(contentsOf:)``.
    ///
    /// ```swift
    /// if let url = Bundle.main.url(forResource: "Library", withExtension: "xcdatamodel") {
    ///     let model = try XcodeModel.load(contentsOf: url)
    ///     print(model.schema.entities.map(\.name))
    /// }
    /// ```
    ///
    /// - Parameter url: The file URL of a `.xcdatamodel` folder or of its `contents` file.
    /// - Returns: The model, its schema and any warnings about ignored elements.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelFileNotFound`` when the
    ///   folder or file does not exist or cannot be read; ``StrataError/Code/malformedModelFile``
    ///   when the file is not well-formed XML, is not a Core Data model, declares a document type
    ///   (`<!DOCTYPE`, which Xcode never writes and which external-entity and entity-expansion
    ///   attacks need), holds a single value over 10,000,000 bytes, or holds a value Strata
    ///   cannot read (an unknown attribute type, a default value of the wrong type), with
    ///   ``StrataError/line`` and ``StrataError/fileURL`` set; ``StrataError/Code/invalidSchema``
    ///   when the model fails schema validation.
    public static func load(contentsOf url: URL) throws -> XcodeModel {
        let (contentsURL, name) = try locateContents(of: url)
        let data: Data
        do {
            data = try Data(contentsOf: contentsURL)
        } catch {
            throw StrataError(
                .modelFileNotFound, "Could not read the model file \(contentsURL.path): \(error.localizedDescription)",
                fileURL: contentsURL, underlyingError: error)
        }
        var reader = XcodeModelReader(modelName: name, fileURL: contentsURL)
        return try reader.read(data)
    }

    /// Reads a model from the XML of a `contents` file.
    ///
    /// Use this for a model that is not on disk, such as one embedded in a string or downloaded.
    ///
    /// ```swift
    /// let xml = """
    ///     <model><entity name="Note"><attribute name="text" attributeType="String"/></entity></model>
    ///     """
    /// let model = try XcodeModel.parse(Data(xml.utf8), name: "Notes")
    /// ```
    ///
    /// - Parameters:
    ///   - data: The XML of a model version's `contents` file.
    ///   - name: The name to give the model, used in ``name`` and in messages.
    /// - Returns: The model, its schema and any warnings about ignored elements.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/malformedModelFile`` (with
    ///   ``StrataError/line``) when the XML is malformed, is not a Core Data model, declares a
    ///   document type, holds a single value over 10,000,000 bytes or holds a value Strata cannot
    ///   read; ``StrataError/Code/invalidSchema`` when the model fails schema
    ///   validation.
    public static func parse(_ data: Data, name: String = "Model") throws -> XcodeModel {
        var reader = XcodeModelReader(modelName: name, fileURL: nil)
        return try reader.read(data)
    }

    /// The `contents` file and the model name for a URL naming a model folder or its file.
    private static func locateContents(of url: URL) throws -> (contents: URL, name: String) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw StrataError(
                .modelFileNotFound, "There is no model at \(url.path); check the path and that the model is a bundle resource.",
                fileURL: url)
        }
        guard isDirectory.boolValue else {
            let folder = url.deletingLastPathComponent()
            let name =
                folder.pathExtension == "xcdatamodel"
                ? folder.deletingPathExtension().lastPathComponent : url.deletingPathExtension().lastPathComponent
            return (url, name)
        }
        let contents = url.appendingPathComponent("contents")
        guard FileManager.default.fileExists(atPath: contents.path) else {
            let hint =
                url.pathExtension == "xcdatamodeld"
                ? "It is a versioned model; load it with XcodeModelBundle.load(contentsOf:)."
                : "Xcode keeps a model version in a .xcdatamodel folder with a contents file."
            throw StrataError(
                .modelFileNotFound, "The folder \(url.path) has no contents file. " + hint, fileURL: url)
        }
        return (contents, url.deletingPathExtension().lastPathComponent)
    }
}

/// A versioned Core Data model made in Xcode (a `.xcdatamodeld` folder): every version of the
/// model and which one is current.
///
/// Each version is an ``XcodeModel``. Xcode records the current version in the bundle's
/// `.xccurrentversion` file; the current version's schema is the one a new app build uses, and
/// the older ones are what migrations start from.
///
/// ```swift
/// let bundle = try XcodeModelBundle.load(contentsOf: URL(fileURLWithPath: "Movies.xcdatamodeld"))
/// print(bundle.versions.map(\.name))   // ["Movies", "Movies 2", "Movies 3"]
/// let current = bundle.currentVersion.schema
/// if let previous = bundle.version(named: "Movies 2") {
///     print(current.difference(from: previous.schema))
/// }
/// ```
///
/// A bundle is an immutable, `Sendable` value; loading reads every version once.
public struct XcodeModelBundle: Sendable {
    /// Every version of the model, ordered by name with numbers compared by value, so that
    /// `"Model 2"` comes before `"Model 10"`.
    public let versions: [XcodeModel]
    /// The name of the current version (without `.xcdatamodel`), as recorded in the bundle's
    /// `.xccurrentversion` file.
    public let currentVersionName: String

    /// The position of the current version in ``versions``; checked when the bundle is loaded.
    private let currentIndex: Int

    /// The current version: the one named by ``currentVersionName``.
    ///
    /// ```swift
    /// let schema = try XcodeModelBundle.load(contentsOf: url).currentVersion.schema
    /// ```
    ///
    /// - Returns: The version a new build of the app uses.
    public var currentVersion: XcodeModel { versions[currentIndex] }

    /// The version named `name`, or `nil` if the bundle has none by that name.
    ///
    /// The name may be given with or without the `.xcdatamodel` extension.
    ///
    /// ```swift
    /// let original = bundle.version(named: "Movies")
    /// ```
    ///
    /// - Parameter name: A version name such as `"Model 2"`.
    /// - Returns: The version, or `nil`.
    public func version(named name: String) -> XcodeModel? {
        let bare = Self.versionName(fromFileName: name)
        return versions.first { $0.name == bare }
    }

    /// Loads every version of a versioned model.
    ///
    /// `url` names a `.xcdatamodeld` folder. Its current version is the one the
    /// `.xccurrentversion` file names; a bundle without that file must hold exactly one version,
    /// which is then current. For convenience `url` may also name a single `.xcdatamodel`
    /// folder, which loads as a bundle of one version.
    ///
    /// ```swift
    /// let bundle = try XcodeModelBundle.load(contentsOf: resources.appendingPathComponent("Movies.xcdatamodeld"))
    /// print(bundle.currentVersionName)   // "Movies 3"
    /// ```
    ///
    /// - Parameter url: The file URL of a `.xcdatamodeld` folder.
    /// - Returns: The bundle with every version loaded.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelFileNotFound`` when the
    ///   folder does not exist or cannot be read; ``StrataError/Code/malformedModelFile`` when it
    ///   holds no versions, when `.xccurrentversion` cannot be read or names a version the bundle
    ///   lacks, or when there are several versions and no `.xccurrentversion`; and any error of
    ///   ``XcodeModel/load(contentsOf:)`` for a version that fails to load.
    public static func load(contentsOf url: URL) throws -> XcodeModelBundle {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StrataError(
                .modelFileNotFound,
                "There is no model bundle at \(url.path); expected a .xcdatamodeld folder. Check the path and that the model is a bundle resource.",
                fileURL: url)
        }
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path) {
            let model = try XcodeModel.load(contentsOf: url)
            return XcodeModelBundle(versions: [model], currentVersionName: model.name, currentIndex: 0)
        }

        let entries: [URL]
        do {
            entries = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
        } catch {
            throw StrataError(
                .modelFileNotFound, "Could not list the model bundle \(url.path): \(error.localizedDescription)",
                fileURL: url, underlyingError: error)
        }
        let versions = try entries.filter { $0.pathExtension == "xcdatamodel" }
            .map { try XcodeModel.load(contentsOf: $0) }
            .sorted { precedes($0.name, $1.name) }
        guard !versions.isEmpty else {
            throw StrataError(
                .malformedModelFile,
                "The model bundle \(url.path) holds no .xcdatamodel versions; add a version in Xcode (Editor > Add Model Version).",
                fileURL: url)
        }

        let currentName = try currentVersionName(in: url, versions: versions)
        guard let index = versions.firstIndex(where: { $0.name == currentName }) else {
            throw StrataError(
                .malformedModelFile,
                "The model bundle \(url.path) names '\(currentName).xcdatamodel' as its current version, but holds only "
                    + versions.map { "'\($0.name).xcdatamodel'" }.joined(separator: ", ")
                    + ". Choose the current version again in Xcode's File inspector.",
                fileURL: url.appendingPathComponent(".xccurrentversion"))
        }
        return XcodeModelBundle(versions: versions, currentVersionName: currentName, currentIndex: index)
    }

    private init(versions: [XcodeModel], currentVersionName: String, currentIndex: Int) {
        self.versions = versions
        self.currentVersionName = currentVersionName
        self.currentIndex = currentIndex
    }

    /// The current version's name from `.xccurrentversion`, or the only version's name.
    private static func currentVersionName(in bundleURL: URL, versions: [XcodeModel]) throws -> String {
        let fileURL = bundleURL.appendingPathComponent(".xccurrentversion")
        guard FileManager.default.fileExists(atPath: fileURL.path) else {
            if versions.count == 1 { return versions[0].name }
            throw StrataError(
                .malformedModelFile,
                "The model bundle \(bundleURL.path) has \(versions.count) versions but no .xccurrentversion file saying which is current. "
                    + "Choose the current version in Xcode's File inspector.",
                fileURL: fileURL)
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: fileURL), format: nil)
        } catch {
            throw StrataError(
                .malformedModelFile, "Could not read \(fileURL.path) as a property list: \(error.localizedDescription)",
                fileURL: fileURL, underlyingError: error)
        }
        guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty else {
            throw StrataError(
                .malformedModelFile,
                "\(fileURL.path) has no _XCCurrentVersionName entry; choose the current version in Xcode's File inspector.",
                fileURL: fileURL)
        }
        return versionName(fromFileName: name)
    }

    /// `"Model 3.xcdatamodel"` → `"Model 3"`.
    private static func versionName(fromFileName name: String) -> String {
        let suffix = ".xcdatamodel"
        return name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name
    }

    /// Orders version names as Finder does: digits compare by value, case is ignored.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        switch lhs.compare(rhs, options: [.numeric, .caseInsensitive]) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: lhs < rhs
        }
    }
}
