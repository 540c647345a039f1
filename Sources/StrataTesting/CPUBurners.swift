import Foundation
import Synchronization

/// Operating-system threads that keep CPUs busy until stopped: for tests that must hold on a
/// loaded machine, where a missed wake-up or a lost race shows up that an idle machine hides.
///
/// ```swift
/// let burners = CPUBurners(count: 2)
/// defer { burners.stop() }
/// // … work that must not miss anything while both cores are busy …
/// ```
public final class CPUBurners: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)

    /// Starts `count` threads, each spinning until ``stop()``.
    public init(count: Int) {
        for number in 0..<count {
            let thread = Thread { [self] in
                running.add(1, ordering: .sequentiallyConsistent)
                var value: UInt64 = 0x9E37_79B9_7F4A_7C15
                while !stopped.load(ordering: .relaxed) {
                    for _ in 0..<10_000 { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
                }
                // Keeps the loop's work from being optimized away.
                if value == 0 { print("") }
                running.subtract(1, ordering: .sequentiallyConsistent)
            }
            thread.name = "cpu-burner-\(number)"
            thread.start()
        }
    }

    /// Stops every thread (they end within a few microseconds).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
    }

    deinit { stop() }
}
