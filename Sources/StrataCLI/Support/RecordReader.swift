import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads records from a JSON, NDJSON or CSV file one at a time, in memory that does not grow
/// with the file.
///
/// The file is read in chunks (256 KiB by default) and parsed incrementally, so a file of
/// millions of records needs no more memory than its largest record. Numbers keep their literal
/// text, so that decimals import exactly.
///
/// ```swift
/// let reader = try RecordReader(path: "movies.ndjson", format: .ndjson)
/// while let record = try reader.next() {
///     for (name, field) in record.fields { … }
///     progress.update(phase: "Importing", completed: reader.bytesRead, total: reader.fileSize ?? 0)
/// }
/// ```
///
/// Formats:
/// - `json`: a top-level array of objects, whitespace anywhere.
/// - `ndjson`: one object per line; blank lines are skipped; an object may not span lines.
/// - `csv`: RFC 4180 with a header line naming the fields; an unquoted empty field is null, a
///   quoted one (`""`) the empty string; LF or CRLF line ends. An empty line is skipped, except
///   in a one-column file, where it is a null (that is how a one-column export writes null).
///
/// Any format may start with a UTF-8 byte order mark. Text must be valid UTF-8.
///
/// A reader is used from one thread at a time and closes its file when released.
final class RecordReader {
    /// The size of the chunks read from the file when none is given.
    static let defaultChunkSize = 256 * 1024

    /// The file's size in bytes, or `nil` for standard input (and anything but a regular file).
    let fileSize: Int?
    private var scanner: RecordScanner
    private let descriptor: Int32
    private let closesDescriptor: Bool

    /// Opens `path` (`"-"` for standard input) to read records in `format`.
    ///
    /// - Parameters:
    ///   - path: The file to read, or `"-"` for standard input.
    ///   - format: The file's format.
    ///   - chunkSize: How many bytes each read asks for (tests make it tiny, to put chunk
    ///     boundaries everywhere).
    /// - Throws: ``CommandFailure`` when the file does not exist, is a directory or cannot be
    ///   read.
    convenience init(path: String, format: ImportFormat, chunkSize: Int = RecordReader.defaultChunkSize) throws {
        if path == "-" {
            try self.init(
                descriptor: STDIN_FILENO, closesDescriptor: false, name: "standard input", format: format,
                chunkSize: chunkSize, reportsSize: false)
            return
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw CommandFailure("\(path) does not exist; name the file to import.")
            case EACCES: throw CommandFailure("Cannot read \(path): permission denied.")
            default: throw CommandFailure("Cannot read \(path): \(String(cString: strerror(code))).")
            }
        }
        try self.init(
            descriptor: descriptor, closesDescriptor: true, name: path, format: format, chunkSize: chunkSize,
            reportsSize: true)
    }

    /// Reads records from an open descriptor (a pipe, say), named `name` in messages.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to read.
    ///   - closesDescriptor: Whether the reader closes `descriptor` when released (or when
    ///     this initializer throws).
    ///   - name: The input's name in messages.
    ///   - format: The input's format.
    ///   - chunkSize: How many bytes each read asks for.
    ///   - reportsSize: Whether ``fileSize`` reports the size of a regular file.
    /// - Throws: ``CommandFailure`` when `descriptor` is a directory or cannot be examined.
    init(
        descriptor: Int32, closesDescriptor: Bool, name: String, format: ImportFormat,
        chunkSize: Int = RecordReader.defaultChunkSize, reportsSize: Bool = false
    ) throws {
        var status = stat()
        // `open` succeeds on a directory; reading it would fail with a less helpful message.
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            if closesDescriptor { close(descriptor) }
            throw CommandFailure("Cannot read \(name): \(reason).")
        }
        let kind = status.st_mode & S_IFMT
        guard kind != S_IFDIR else {
            if closesDescriptor { close(descriptor) }
            throw CommandFailure("\(name) is a directory; name a file to import.")
        }
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
        fileSize = reportsSize && kind == S_IFREG ? Int(status.st_size) : nil
        scanner = RecordScanner(descriptor: descriptor, name: name, format: format, chunkSize: chunkSize)
    }

    deinit {
        if closesDescriptor { close(descriptor) }
    }

    /// The next record, or `nil` at the end of the file.
    ///
    /// After a failure the reader is finished: later calls return `nil`.
    ///
    /// - Throws: ``CommandFailure`` for malformed input, with the file's name and line:
    ///   `movies.json:12: missing ',' between fields (expected ',' or '}', found '"')`; or when
    ///   the file cannot be read.
    func next() throws -> ImportedRecord? {
        try scanner.next()
    }

    /// How many bytes have been read from the file so far, for a progress bar.
    var bytesRead: Int { scanner.bytesRead }
}

@available(*, unavailable, message: "A RecordReader is used from one thread at a time")
extension RecordReader: Sendable {}
