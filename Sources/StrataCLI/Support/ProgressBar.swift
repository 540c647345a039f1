import Foundation

/// A progress bar on standard error: redrawn in place on a terminal (at most ten times a
/// second) with the rate and the time left; one line per phase otherwise, so that logs and
/// pipes stay readable.
final class ProgressBar {
    private let channel: OutputChannel
    private let isTerminal: Bool
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastPhase: String?
    private var phaseStart = ContinuousClock.now
    private var drewInPlace = false

    private let writesPhaseLines: Bool

    /// A bar on standard error; `isEnabled: false` shows nothing at all, and
    /// `writesPhaseLines: false` shows nothing when standard error is not a terminal.
    init(channel: OutputChannel = .standardError, isEnabled: Bool = true, writesPhaseLines: Bool = true) {
        self.channel = channel
        isTerminal = isEnabled && channel.isTerminal
        self.writesPhaseLines = isEnabled && writesPhaseLines
    }

    /// Shows `completed` of `total` units of `phase` (`total` 0 when unknown); `detail`, when
    /// given, replaces the counts (an import measures bytes read, but shows records).
    func update(phase: String, completed: Int, total: Int, detail: String? = nil) {
        let now = ContinuousClock.now
        if phase != lastPhase { phaseStart = now }
        if isTerminal {
            guard phase != lastPhase || (total > 0 && completed >= total) || now - lastDraw >= .milliseconds(100) else {
                return
            }
            lastDraw = now
            lastPhase = phase
            let elapsed = Double((now - phaseStart).components.seconds) + Double((now - phaseStart).components.attoseconds) / 1e18
            let rate = elapsed > 0.2 ? Double(completed) / elapsed : nil
            var text = "\r"
            if total > 0 {
                let fraction = min(1, Double(completed) / Double(total))
                let width = 24
                let filled = Int(fraction * Double(width))
                let percent = Int((fraction * 100).rounded(.down))
                text += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
                text += String(repeating: " ", count: 3 - String(percent).count) + "\(percent)%  "
                text += "\(phase) " + (detail ?? "\(Self.grouped(completed))/\(Self.grouped(total))")
            } else {
                text += "\(phase) " + (detail ?? Self.grouped(completed))
            }
            if let rate {
                text += detail == nil ? "  \(Self.grouped(Int(rate)))/s" : ""
                if total > 0, rate > 0, completed < total {
                    text += "  ETA " + Self.duration(Double(total - completed) / rate)
                }
            }
            write(text + "\u{1B}[K")
            drewInPlace = true
        } else if phase != lastPhase {
            lastPhase = phase
            if writesPhaseLines { write("\(phase)…\n") }
        }
    }

    /// Ends the bar's line.
    func finish() {
        if drewInPlace { write("\n") }
        drewInPlace = false
    }

    /// `count` with thousands separated by commas.
    static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (count < 0 ? "-" : "") + text
    }

    /// Seconds as m:ss or h:mm:ss.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    private func write(_ text: String) {
        try? channel.write(text)
        try? channel.flush()
    }
}
