import Foundation

extension PersistentContainer {
    /// Opens a container for the model named `name` in `bundle`'s resources, as
    /// `NSPersistentContainer(name:)` finds `<name>.momd` in the main bundle.
    ///
    /// The model is `<name>.xcdatamodeld` (or a single `<name>.xcdatamodel`), and its current
    /// version is used. Without store descriptions the store is `<name>.sqlite` in
    /// `<data folder>/<name>/`, as for every container.
    ///
    /// For example:
    ///
    /// ```swift
    /// // Package.swift: resources: [.copy("Movies.xcdatamodeld")]
    /// let container = try PersistentContainer(name: "Movies", bundle: .module)
    /// ```
    ///
    /// - Parameters:
    ///   - name: The model's name, also the container's.
    ///   - bundle: The bundle whose resources hold the model; the main bundle by default.
    ///   - storeDescriptions: Where to keep objects; by default one SQLite file in the default
    ///     location.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelFileNotFound`` when there is
    ///   no model of that name, the model's errors when it cannot be read, and the store's when
    ///   it cannot be opened.
    public convenience init(name: String, bundle: Bundle = .main, storeDescriptions: [StoreDescription]? = nil) throws {
        try self.init(name: name, schema: Schema.named(name, in: bundle), storeDescriptions: storeDescriptions)
    }
}
