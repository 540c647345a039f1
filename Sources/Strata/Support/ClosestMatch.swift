/// Finds the candidate closest to `name` by edit distance, for "did you mean" hints.
func closestMatch(to name: String, in candidates: some Sequence<String>) -> String? {
    let target = Array(name.lowercased())
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(target, Array(candidate.lowercased()))
        if distance <= max(2, target.count / 2), distance < (best?.distance ?? .max) {
            best = (candidate, distance)
        }
    }
    return best?.name
}

private func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// " Did you mean 'x'?" or an empty string.
package func didYouMean(_ name: String, in candidates: some Sequence<String>) -> String {
    guard let match = closestMatch(to: name, in: candidates) else { return "" }
    return " Did you mean '\(match)'?"
}
