import ArgumentParser
import Foundation
import Strata

/// `strata import STORE FILE --entity ENTITY`: objects from NDJSON, JSON or CSV, through one
/// batch insert.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Insert objects from NDJSON, JSON or CSV, all or nothing.",
        discussion: """
            Reads the file as it goes (a million records in little memory) and inserts every \
            record as an object of the entity with one batch insert: one transaction, so either \
            every record is in the store or none is. Each value is checked against its \
            attribute's type first; the first bad record stops the import with its line number.

            Field names are attribute names; _id, _entity and relationships (what `strata \
            export` adds) are skipped, as are records whose _entity names another entity. A \
            missing attribute takes its default value; a required attribute without one is an \
            error. With --on-conflict replace (or --upsert), a record that shares a uniqueness \
            constraint's values with a stored object updates it; with keep, such records are \
            dropped; by default the import fails and writes nothing.

            Values are read as `strata export` writes them: dates in ISO 8601, binary data in \
            Base64, decimals and Codable values as JSON numbers and JSON. In CSV an empty field is \
            null and "" the empty string.

            Examples:
              strata import Movies.sqlite movies.ndjson --entity Movie
              strata import Movies.sqlite movies.csv --entity Movie --upsert
              strata export Old.sqlite --entity Movie | strata import New.sqlite - --entity Movie --format ndjson
              strata import Movies.sqlite movies.json --entity Movie --dry-run
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: ArgumentHelp("The file to read; - for standard input.", valueName: "file"))
    var file: String

    @Option(name: [.customLong("entity"), .customShort("e")], help: "The entity of the records.")
    var entity: String

    @Option(help: "The file's format: ndjson, json or csv (default: from its extension).")
    var format: String?

    @Option(name: .customLong("on-conflict"), help: "What a record that breaks a uniqueness constraint does: fail, keep or replace.")
    var conflict: ConflictChoice = .fail

    @Flag(help: "Update stored objects that share a uniqueness constraint's values (--on-conflict replace).")
    var upsert = false

    @Option(help: "The author persistent history records for the import.")
    var author = "strata import"

    @Flag(help: "Read and check every record without writing.")
    var dryRun = false

    @Flag(name: .customLong("no-progress"), help: "Show no progress bar.")
    var hidesProgress = false

    enum ConflictChoice: String, ExpressibleByArgument, CaseIterable {
        case fail, keep, replace
    }

    func validate() throws {
        if upsert && conflict != .fail && conflict != .replace {
            throw ValidationError("--upsert means --on-conflict replace.")
        }
    }

    func run() throws {
        try reportingErrors {
            let format = try Self.format(format, of: file)
            let store = try OpenedStore.open(storeOptions, forWriting: !dryRun)
            defer { store.close() }
            let entity = try store.entity(named: self.entity)
            guard !entity.isAbstract else {
                throw CommandFailure("\(entity.name) is abstract; import records of one of its subentities.")
            }
            let reader = try RecordReader(path: file, format: format)
            let progress = ProgressBar(isEnabled: !hidesProgress, writesPhaseLines: false)
            var rows = RecordRows(
                entity: entity, reader: reader, source: file == "-" ? "standard input" : file, progress: progress)
            defer { progress.finish() }
            if dryRun {
                var values = entity.defaultValues
                while try rows.next(into: &values) {}
                progress.finish()
                rows.reportSkipped()
                OutputChannel.standardError.writeMessage(
                    "\(ProgressBar.grouped(rows.count)) record\(rows.count == 1 ? "" : "s") checked; nothing was written (--dry-run).")
                return
            }
            let resolution: BatchInsertConflictResolution =
                switch upsert ? .replace : conflict {
                case .fail: .fail
                case .keep: .keepStored
                case .replace: .replaceStored
                }
            let result = try store.store.batchInsert(
                StoreBatchInsert(entityName: entity.name, conflictResolution: resolution, author: author, contextName: "strata")
            ) { values in try rows.next(into: &values) }
            progress.finish()
            rows.reportSkipped()
            var message = "Imported \(ProgressBar.grouped(rows.count)) record\(rows.count == 1 ? "" : "s") into \(entity.name)"
            if resolution != .fail && result.count != rows.count {
                message += " (\(ProgressBar.grouped(result.count)) written; the others \(resolution == .keepStored ? "matched stored objects and were dropped" : "updated stored objects"))"
            }
            OutputChannel.standardError.writeMessage(message + ".")
        }
    }

    /// The format named, or the one the file's extension implies.
    static func format(_ name: String?, of file: String) throws -> ImportFormat {
        if let name {
            guard let format = ImportFormat(rawValue: name.lowercased()) else {
                throw CommandFailure("'\(name)' is not a format strata imports; use ndjson, json or csv.")
            }
            return format
        }
        let pathExtension = URL(fileURLWithPath: file).pathExtension.lowercased()
        switch pathExtension {
        case "ndjson", "jsonl": return .ndjson
        case "json": return .json
        case "csv": return .csv
        default:
            throw CommandFailure("Cannot tell the format of \(file) from its name; add --format ndjson, json or csv.")
        }
    }
}

/// The records of a file as rows of attribute values of one entity, checked.
struct RecordRows {
    let entity: Entity
    let reader: RecordReader
    let progress: ProgressBar
    /// The file's name in messages.
    let source: String
    /// Records turned into rows.
    private(set) var count = 0
    /// Records of other entities, skipped.
    private(set) var skipped = 0
    /// Attribute numbers by field name, for the names seen so far.
    private var numbers: [String: Int] = [:]
    /// Names that are not attributes but are skipped: ids, entities, relationships.
    private let ignored: Set<String>
    private var ignoredSeen: Set<String> = []
    private var assigned: [Bool]

    init(entity: Entity, reader: RecordReader, source: String, progress: ProgressBar) {
        self.entity = entity
        self.source = source
        self.reader = reader
        self.progress = progress
        ignored = Set([RowColumns.primaryKeyName, RowColumns.entityName] + entity.relationships.map(\.name))
        assigned = Array(repeating: false, count: entity.attributes.count)
        for (number, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            numbers[attribute.name] = number
        }
    }

    /// Fills `values` with the next record of the entity; `false` at the end of the file.
    mutating func next(into values: inout [AttributeValue]) throws -> Bool {
        while let record = try reader.next() {
            if let kind = record.fields.first(where: { $0.name == RowColumns.entityName })?.value {
                let name: String? =
                    switch kind {
                    case .string(let name), .text(let name): name
                    default: nil
                    }
                if name != entity.name {
                    skipped += 1
                    continue
                }
            }
            for index in assigned.indices { assigned[index] = false }
            for (name, field) in record.fields {
                guard let number = numbers[name] else {
                    if ignored.contains(name) {
                        if name != RowColumns.entityName { ignoredSeen.insert(name) }
                        continue
                    }
                    let transient = entity.attributes.contains { $0.name == name && $0.isTransient }
                    throw CommandFailure(
                        "\(source):\(record.line): "
                            + (transient
                                ? "\(entity.name).\(name) is transient; it is not stored."
                                : "\(entity.name) has no attribute named '\(name)'."
                                    + didYouMean(name, in: entity.attributes.map(\.name))))
                }
                let attribute = entity.attributes[number]
                let value: AttributeValue
                do {
                    value = try ImportedValues.attributeValue(field, for: attribute, line: record.line)
                } catch var failure as CommandFailure {
                    // Messages name the file as well as the line.
                    if failure.message.hasPrefix("line \(record.line): ") {
                        failure.message = "\(source):\(record.line): " + failure.message.dropFirst("line \(record.line): ".count)
                    }
                    throw failure
                }
                if value.isNull && !attribute.isOptional {
                    throw CommandFailure(
                        "\(source):\(record.line): \(entity.name).\(attribute.name) is required, but the record has null.")
                }
                values[number] = value
                assigned[number] = true
            }
            for (number, attribute) in entity.attributes.enumerated() where !assigned[number] {
                values[number] = attribute.isTransient ? .null : attribute.defaultValue
                if !attribute.isTransient && !attribute.isOptional && attribute.defaultValue.isNull {
                    throw CommandFailure(
                        "\(source):\(record.line): \(entity.name).\(attribute.name) is required and has no default value, but the record has no '\(attribute.name)'.")
                }
            }
            count += 1
            if count % 1_024 == 0 { show() }
            return true
        }
        show()
        return false
    }

    private func show() {
        progress.update(
            phase: entity.name, completed: reader.bytesRead, total: reader.fileSize ?? 0,
            detail: "\(ProgressBar.grouped(count)) records")
    }

    /// Says on standard error what was skipped.
    func reportSkipped() {
        if !ignoredSeen.isEmpty {
            OutputChannel.standardError.writeMessage(
                "Skipped the fields \(ignoredSeen.sorted().joined(separator: ", ")): ids and relationships are not imported.")
        }
        if skipped > 0 {
            OutputChannel.standardError.writeMessage(
                "Skipped \(ProgressBar.grouped(skipped)) record\(skipped == 1 ? "" : "s") of other entities.")
        }
    }
}
