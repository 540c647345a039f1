import Foundation
import Strata

// MARK: - Choices

/// Where the grammar's choices come from.
protocol ChoiceSource {
    /// A number in `0..<count` (`count` > 0).
    mutating func choose(_ count: Int) -> Int
}
