/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64), so that every
/// randomized test replays from its seed.
///
/// ```swift
/// var generator = SplitMix64(seed: 42)
/// let value = Int.random(in: 0..<100, using: &generator)   // the same on every run
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state.
    public private(set) var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next value.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `true` with the given probability.
    public mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
}
