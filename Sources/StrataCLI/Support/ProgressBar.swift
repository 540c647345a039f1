import Foundation

/// A progress bar on standard error: redrawn in place on a terminal (at most ten times a
/// second), one line per phase otherwise, so that logs and pipes stay readable.
final class ProgressBar {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastDraw = Date.distantPast
    private var lastPhase: String?
    private var drewInPlace = false

    /// Shows `completed` of `total` units of `phase`.
    func update(phase: String, completed: Int, total: Int) {
        if isTerminal {
            let now = Date()
            guard phase != lastPhase || completed >= total || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            lastDraw = now
            lastPhase = phase
            let fraction = total == 0 ? 1 : min(1, Double(completed) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let percent = Int((fraction * 100).rounded(.down))
            write("\r[\(bar)] \(String(repeating: " ", count: 3 - String(percent).count))\(percent)%  \(phase) \(completed)/\(total)\u{1B}[K")
            drewInPlace = true
        } else if phase != lastPhase {
            lastPhase = phase
            write("\(phase)…\n")
        }
    }

    /// Ends the bar's line.
    func finish() {
        if drewInPlace { write("\n") }
        drewInPlace = false
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
