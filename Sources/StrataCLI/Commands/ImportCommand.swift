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

            Values are read as `strata export` writes them: dates in ISO 8601 (read exactly), \
            binary data in Base64, decimals and Codable values as JSON numbers and JSON. \
            Booleans also take 0/1 and yes/no, in any case. In CSV an empty field is null and "" \
            the empty string.

            Files from spreadsheets and other programs import as they are: --map COLUMN=ATTRIBUTE \
            (repeatable) reads a column (or JSON field) into an attribute of another name, or \
            skips it (--map Notes=), and --date-format PATTERN reads dates such as 09/21/1997 \
            with a Unicode date pattern (MM/dd/yyyy; POSIX locale, UTC unless the pattern reads a \
            zone). A value that does not fit stops the import with its line, row and column.

            Examples:
              strata import Movies.sqlite movies.ndjson --entity Movie
              strata import Movies.sqlite movies.csv --entity Movie --upsert
              strata export Old.sqlite --entity Movie |
                  strata import New.sqlite - --entity Movie --format ndjson
              strata import Movies.sqlite movies.json --entity Movie --dry-run
              strata import Movies.sqlite people.csv --entity Director \\
                  --map Name=name --map 'Born on=born' --date-format MM/dd/yyyy
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

    @Option(
        name: .customLong("map"),
        help: ArgumentHelp(
            "Read the CSV column (or JSON field) COLUMN into the attribute ATTRIBUTE, or skip it with COLUMN= (repeat for several).",
            valueName: "column=attribute"))
    var mappings: [String] = []

    @Option(
        name: .customLong("date-format"),
        help: ArgumentHelp(
            "Read dates with this Unicode date pattern, such as MM/dd/yyyy, instead of ISO 8601 (POSIX locale; UTC unless the pattern reads a zone).",
            valueName: "pattern"))
    var dateFormat: String?

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
        _ = try Self.columnMap(mappings)
        if let dateFormat, dateFormat.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--date-format needs a pattern, such as MM/dd/yyyy.")
        }
    }

    /// The attribute each mapped column goes to, from `--map COLUMN=ATTRIBUTE` options (split
    /// at the last `=`: a column's name may hold one, an attribute's cannot); an empty attribute
    /// skips the column.
    static func columnMap(_ mappings: [String]) throws -> [(column: String, attribute: String)] {
        var map: [(column: String, attribute: String)] = []
        for mapping in mappings {
            guard let equals = mapping.lastIndex(of: "=") else {
                throw ValidationError("--map '\(mapping)': expected COLUMN=ATTRIBUTE, such as --map 'height(m)=height'.")
            }
            let column = String(mapping[..<equals])
            let attribute = String(mapping[mapping.index(after: equals)...])
            guard !column.isEmpty else {
                throw ValidationError("--map '\(mapping)': expected COLUMN=ATTRIBUTE, such as --map 'height(m)=height'.")
            }
            if let earlier = map.first(where: { $0.column == column }) {
                throw ValidationError(
                    "--map names the column '\(column)' twice (for '\(earlier.attribute)' and '\(attribute)').")
            }
            if !attribute.isEmpty, let earlier = map.first(where: { $0.attribute == attribute }) {
                throw ValidationError(
                    "--map reads both '\(earlier.column)' and '\(column)' into '\(attribute)'; map one column to each attribute.")
            }
            map.append((column, attribute))
        }
        return map
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
            let columns = try Self.columnMap(mappings)
            let reader = try RecordReader(path: file, format: format)
            let progress = ProgressBar(isEnabled: !hidesProgress, writesPhaseLines: false)
            var rows = try RecordRows(
                entity: entity, reader: reader, format: format, source: file == "-" ? "standard input" : file,
                columns: columns, dates: dateFormat.map { ImportedDateFormat(pattern: $0) } ?? ImportedDateFormat(),
                progress: progress)
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
    /// Whether the file is CSV, whose messages name rows and columns.
    let isCSV: Bool
    /// How text becomes dates.
    let dates: ImportedDateFormat
    /// Records turned into rows.
    private(set) var count = 0
    /// Records of other entities, skipped.
    private(set) var skipped = 0
    /// Records read, for messages (a CSV file's rows).
    private var recordsRead = 0
    /// Attribute numbers by field name: attribute names, and the columns `--map` names.
    private var numbers: [String: Int] = [:]
    /// The columns `--map` names, each with its `--map` option, for messages.
    private let mapped: [(column: String, attribute: String)]
    /// Names that are not attributes but are skipped: ids, entities, relationships.
    private let ignored: Set<String>
    /// The columns `--map COLUMN=` skips.
    private let dropped: Set<String>
    private var ignoredSeen: Set<String> = []
    private var assigned: [Bool]

    /// Rows of `entity` from `reader`'s records.
    ///
    /// - Parameters:
    ///   - columns: The columns (or fields) that go to attributes of other names
    ///     (`--map COLUMN=ATTRIBUTE`).
    ///   - dates: How text becomes dates.
    /// - Throws: ``CommandFailure`` when `columns` names an attribute the entity does not store.
    init(
        entity: Entity, reader: RecordReader, format: ImportFormat, source: String,
        columns: [(column: String, attribute: String)] = [], dates: ImportedDateFormat = ImportedDateFormat(),
        progress: ProgressBar
    ) throws {
        self.entity = entity
        self.source = source
        self.reader = reader
        self.progress = progress
        self.dates = dates
        isCSV = format == .csv
        mapped = columns
        assigned = Array(repeating: false, count: entity.attributes.count)
        for (number, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            numbers[attribute.name] = number
        }
        for (column, attributeName) in columns where !attributeName.isEmpty {
            guard let number = entity.attributes.firstIndex(where: { $0.name == attributeName }),
                !entity.attributes[number].isTransient
            else {
                let problem =
                    entity.attributes.contains { $0.name == attributeName }
                    ? "\(entity.name).\(attributeName) is transient; it is not stored."
                    : entity.relationships.contains { $0.name == attributeName }
                        ? "\(entity.name).\(attributeName) is a relationship; only attributes are imported."
                        : "\(entity.name) has no attribute named '\(attributeName)'."
                            + didYouMean(attributeName, in: entity.attributes.filter { !$0.isTransient }.map(\.name))
                throw CommandFailure("--map '\(column)=\(attributeName)': " + problem)
            }
            numbers[column] = number
        }
        ignored = Set([RowColumns.primaryKeyName, RowColumns.entityName] + entity.relationships.map(\.name))
            .subtracting(columns.map(\.column))
        dropped = Set(columns.filter { $0.attribute.isEmpty }.map(\.column))
    }

    /// Fills `values` with the next record of the entity; `false` at the end of the file.
    mutating func next(into values: inout [AttributeValue]) throws -> Bool {
        while let record = try reader.next() {
            recordsRead += 1
            if isCSV && recordsRead == 1 { try checkMappedColumns(in: record) }
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
            for (name, field) in record.fields where !dropped.contains(name) {
                guard let number = numbers[name] else {
                    if ignored.contains(name) {
                        if name != RowColumns.entityName { ignoredSeen.insert(name) }
                        continue
                    }
                    let transient = entity.attributes.contains { $0.name == name && $0.isTransient }
                    let attributeNames = entity.attributes.filter { !$0.isTransient }.map(\.name)
                    throw CommandFailure(
                        "\(source):\(record.line): "
                            + (transient
                                ? "\(entity.name).\(name) is transient; it is not stored."
                                : isCSV
                                    ? "the column \"\(name)\" is not an attribute of \(entity.name)."
                                        + didYouMean(name, in: attributeNames)
                                        + " Read it into one with --map '\(name)=ATTRIBUTE', or skip it with --map '\(name)='."
                                    : "\(entity.name) has no attribute named '\(name)'." + didYouMean(name, in: attributeNames)))
                }
                let attribute = entity.attributes[number]
                guard !assigned[number] else {
                    let others = record.fields.map(\.name).filter { numbers[$0] == number && $0 != name }
                    throw CommandFailure(
                        "\(source):\(record.line): \(describePlace(of: name))both '\(others.first ?? attribute.name)' and '\(name)' give \(entity.name).\(attribute.name); map only one of them.")
                }
                let value: AttributeValue
                do {
                    value = try ImportedValues.attributeValue(field, for: attribute, dates: dates)
                } catch {
                    throw CommandFailure(
                        "\(source):\(record.line): \(describePlace(of: name))\(describe(attribute, field: name)): expected \(error.expected), found \(ImportedValues.describe(field))")
                }
                if value.isNull && !attribute.isOptional {
                    throw CommandFailure(
                        "\(source):\(record.line): \(describePlace(of: name))\(entity.name).\(attribute.name) is required, but the record has null.")
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

    /// Where a field is, for messages: `row 2, column "DOB": ` in CSV, nothing in JSON (the
    /// line says it).
    private func describePlace(of name: String) -> String {
        isCSV ? "row \(recordsRead), column \"\(name)\": " : ""
    }

    /// The attribute a field goes to, for messages: `attribute "born" (Date)`, or with the
    /// field's name when it differs (`field "DOB" → attribute "born" (Date)`).
    private func describe(_ attribute: AttributeDescription, field: String) -> String {
        let target = "attribute \"\(attribute.name)\" (\(attribute.type.xcodeName))"
        return isCSV || field == attribute.name ? target : "field \"\(field)\" → " + target
    }

    /// Fails when `--map` names a column the CSV header does not have.
    private func checkMappedColumns(in record: ImportedRecord) throws {
        let header = record.fields.map(\.name)
        for (column, attribute) in mapped where !header.contains(column) {
            // Skipping a column the file lacks is harmless; reading one is a typo.
            if attribute.isEmpty { continue }
            throw CommandFailure(
                "\(source):1: the header has no column \"\(column)\" (named by --map '\(column)=\(attribute)')."
                    + didYouMean(column, in: header) + " Its columns: \(header.joined(separator: ", ")).")
        }
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
