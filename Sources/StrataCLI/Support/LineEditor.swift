import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads lines from a terminal with editing and history, as readline does for the keys people
/// use most: ← → Home End (and Ctrl-B Ctrl-F Ctrl-A Ctrl-E) move, Backspace Delete Ctrl-K Ctrl-U
/// Ctrl-W erase, ↑ ↓ walk the history, Ctrl-C drops the line, Ctrl-D on an empty line ends
/// input, Ctrl-L clears the screen. Written here rather than linking readline (GPL) or libedit
/// (a system package every machine would need).
///
/// When standard input is not a terminal, lines are read as they come, without echo.
final class LineEditor {
    /// The lines entered, oldest first (without duplicates in a row).
    private(set) var history: [String] = []
    private let historyFile: URL?
    private let maximumHistory = 1_000
    private let isTerminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1

    /// An editor whose history is kept in `historyFile` (read now, written after each line).
    init(historyFile: URL?) {
        self.historyFile = historyFile
        if let historyFile, let text = try? String(contentsOf: historyFile, encoding: .utf8) {
            history = text.split(separator: "\n").map(String.init).suffix(maximumHistory).map { $0 }
        }
    }

    /// The next line, or `nil` at the end of input.
    func readLine(prompt: String) -> String? {
        guard isTerminal else {
            guard let line = Swift.readLine() else { return nil }
            return line
        }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return Swift.readLine() }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        let line = edit(prompt: prompt)
        if let line { remember(line) }
        return line
    }

    private func remember(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, history.last != trimmed else { return }
        history.append(trimmed)
        if history.count > maximumHistory { history.removeFirst(history.count - maximumHistory) }
        guard let historyFile else { return }
        try? (history.joined(separator: "\n") + "\n").write(to: historyFile, atomically: true, encoding: .utf8)
    }

    /// One line in raw mode.
    private func edit(prompt: String) -> String? {
        var buffer: [Character] = []
        var cursor = 0
        var historyIndex = history.count
        var draft: [Character] = []
        func redraw() {
            let after = buffer.count - cursor
            var text = "\r" + prompt + String(buffer) + "\u{1B}[K"
            if after > 0 { text += "\u{1B}[\(after)D" }
            emit(text)
        }
        emit(prompt)
        var pending: [UInt8] = []
        while true {
            guard let byte = readByte() else { return buffer.isEmpty ? nil : String(buffer) }
            switch byte {
            case 13, 10:  // Enter
                emit("\r\n")
                return String(buffer)
            case 4:  // Ctrl-D
                if buffer.isEmpty {
                    emit("\r\n")
                    return nil
                }
                if cursor < buffer.count { buffer.remove(at: cursor) }
            case 3:  // Ctrl-C
                emit("^C\r\n")
                buffer = []
                cursor = 0
                historyIndex = history.count
                emit(prompt)
                continue
            case 127, 8:  // Backspace
                if cursor > 0 {
                    buffer.remove(at: cursor - 1)
                    cursor -= 1
                }
            case 1: cursor = 0  // Ctrl-A
            case 5: cursor = buffer.count  // Ctrl-E
            case 2: cursor = max(0, cursor - 1)  // Ctrl-B
            case 6: cursor = min(buffer.count, cursor + 1)  // Ctrl-F
            case 11: buffer.removeSubrange(cursor...)  // Ctrl-K
            case 21:  // Ctrl-U
                buffer.removeSubrange(..<cursor)
                cursor = 0
            case 23:  // Ctrl-W: the word before the cursor
                var start = cursor
                while start > 0, buffer[start - 1] == " " { start -= 1 }
                while start > 0, buffer[start - 1] != " " { start -= 1 }
                buffer.removeSubrange(start..<cursor)
                cursor = start
            case 12:  // Ctrl-L
                emit("\u{1B}[H\u{1B}[2J")
            case 27:  // an escape sequence
                guard let second = readByte() else { continue }
                var final = second
                var parameter: UInt8?
                if second == UInt8(ascii: "[") || second == UInt8(ascii: "O") {
                    guard let third = readByte() else { continue }
                    final = third
                    if third >= UInt8(ascii: "0") && third <= UInt8(ascii: "9") {
                        parameter = third
                        while let next = readByte() {
                            final = next
                            if next == UInt8(ascii: "~") || next >= UInt8(ascii: "@") && next != UInt8(ascii: ";") && !(next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) { break }
                        }
                    }
                }
                switch (final, parameter) {
                case (UInt8(ascii: "A"), _):  // ↑
                    guard historyIndex > 0 else { continue }
                    if historyIndex == history.count { draft = buffer }
                    historyIndex -= 1
                    buffer = Array(history[historyIndex])
                    cursor = buffer.count
                case (UInt8(ascii: "B"), _):  // ↓
                    guard historyIndex < history.count else { continue }
                    historyIndex += 1
                    buffer = historyIndex == history.count ? draft : Array(history[historyIndex])
                    cursor = buffer.count
                case (UInt8(ascii: "C"), _): cursor = min(buffer.count, cursor + 1)
                case (UInt8(ascii: "D"), _): cursor = max(0, cursor - 1)
                case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), UInt8(ascii: "1")), (UInt8(ascii: "~"), UInt8(ascii: "7")):
                    cursor = 0
                case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), UInt8(ascii: "4")), (UInt8(ascii: "~"), UInt8(ascii: "8")):
                    cursor = buffer.count
                case (UInt8(ascii: "~"), UInt8(ascii: "3")):  // Delete
                    if cursor < buffer.count { buffer.remove(at: cursor) }
                default:
                    continue
                }
            default:
                guard byte >= 32 else { continue }
                // A character may take several bytes of UTF-8.
                pending.append(byte)
                let expected = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                while pending.count < expected, let next = readByte() { pending.append(next) }
                let text = String(decoding: pending, as: UTF8.self)
                pending = []
                buffer.insert(contentsOf: Array(text), at: cursor)
                cursor += text.count
            }
            redraw()
        }
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    private func emit(_ text: String) {
        try? OutputChannel.standardOutput.write(text)
        try? OutputChannel.standardOutput.flush()
    }
}
