import Foundation
import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the tool writes: standard output, standard error or a file. Knows whether it is a
/// terminal and whether it may use colour; buffers writes and reports their failure.
///
/// Colour follows the conventions of `git` and `ls`: only on a terminal, never when the
/// `NO_COLOR` environment variable is set (to anything), never when `TERM` is `dumb`.
final class OutputChannel: Sendable {
    /// Standard output: data.
    static let standardOutput = OutputChannel(descriptor: STDOUT_FILENO, name: "standard output")
    /// Standard error: messages, progress and prompts.
    static let standardError = OutputChannel(descriptor: STDERR_FILENO, name: "standard error")

    /// The file descriptor written to.
    let descriptor: Int32
    /// The stream's name, for messages.
    let name: String
    /// Whether the stream is a terminal.
    let isTerminal: Bool
    /// Whether colour and other escape sequences may be written.
    let usesColor: Bool
    /// Where a file channel writes until ``close()`` moves it to ``name``.
    private let partialPath: String?
    private let buffer = LockedBox<[UInt8]>([])

    init(
        descriptor: Int32, name: String, partialPath: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.descriptor = descriptor
        self.name = name
        self.partialPath = partialPath
        isTerminal = isatty(descriptor) == 1
        usesColor = isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        buffer.withLock { $0.reserveCapacity(1 << 16) }
    }

    /// A file for `--output`: written beside `path` and moved there by ``close()``, so that a
    /// failed or interrupted command leaves no half-written file (and an existing file stays
    /// as it was until the new one is complete).
    static func creatingFile(atPath path: String) throws -> OutputChannel {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CommandFailure("\(path) is a directory; name a file to write.")
        }
        let url = URL(fileURLWithPath: path)
        let partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).strata-partial").path
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("Cannot write \(path): \(String(cString: strerror(errno))).")
        }
        return OutputChannel(descriptor: descriptor, name: path, partialPath: partial)
    }

    /// Flushes the channel; a file made by ``creatingFile(atPath:)`` is closed and put in place.
    func close() throws {
        try flush()
        guard let partialPath else { return }
        if Foundation.close(descriptor) != 0 || rename(partialPath, name) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(partialPath)
            throw CommandFailure("Cannot write \(name): \(reason).")
        }
    }

    /// Closes and removes a file made by ``creatingFile(atPath:)`` after a failure.
    func discard() {
        guard let partialPath else { return }
        _ = Foundation.close(descriptor)
        unlink(partialPath)
    }

    /// `text` in a colour or style, when this stream uses colour.
    func styled(_ text: String, _ style: Style) -> String {
        usesColor ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// Styles of text.
    enum Style: String {
        case bold = "1"
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case cyan = "36"
    }

    /// Appends `text` to the buffer, writing it out when the buffer is full.
    func write(_ text: String) throws {
        try buffer.withLock { buffer in
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { try drain(&buffer) }
        }
    }

    /// Appends bytes to the buffer, writing it out when the buffer is full.
    func write(bytes: some Sequence<UInt8>) throws {
        try buffer.withLock { buffer in
            buffer.append(contentsOf: bytes)
            if buffer.count >= 1 << 16 { try drain(&buffer) }
        }
    }

    /// `text` and a line break.
    func writeLine(_ text: String = "") throws {
        try write(text)
        try write("\n")
    }

    /// Writes out what is buffered.
    func flush() throws {
        try buffer.withLock { try drain(&$0) }
    }

    private func drain(_ buffer: inout [UInt8]) throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        try Self.writeAll(buffer, to: descriptor, name: name)
    }

    /// "strata: error: …" on this stream, now (messages are never left in a buffer).
    func writeError(_ message: String) {
        let prefix = styled("error:", .red)
        try? write("strata: \(prefix) \(message)\n")
        try? flush()
    }

    /// A message (not data) on this stream, now.
    func writeMessage(_ message: String) {
        try? write(message + "\n")
        try? flush()
    }

    /// Writes every byte of `bytes` to `descriptor`, retrying after interruptions.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, name: String) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CommandFailure("Cannot write to \(name): \(String(cString: strerror(errno))).")
                }
                offset += written
            }
        }
    }
}
