import Foundation

/// String and decimal orderings shared by sort descriptors in memory and SQLite collations.
package enum SortOrdering {
    package static func compare(_ a: String, _ b: String, _ comparison: SortComparison) -> ComparisonResult {
        switch comparison {
        case .standard:
            return result(ValueComparison.compareBytes(a.utf8, b.utf8))
        case .caseInsensitive:
            return result(
                ValueComparison.compareBytes(
                    StringFolding.fold(a, .caseInsensitive).utf8, StringFolding.fold(b, .caseInsensitive).utf8))
        case .localizedStandard:
            let order = a.compare(b, options: [.caseInsensitive, .diacriticInsensitive, .numeric, .widthInsensitive])
            // Strings equal under the localized comparison still need one stable order.
            return order == .orderedSame ? result(ValueComparison.compareBytes(a.utf8, b.utf8)) : order
        }
    }

    package static func result(_ order: Int) -> ComparisonResult {
        order < 0 ? .orderedAscending : (order > 0 ? .orderedDescending : .orderedSame)
    }

    package static func compareDecimalText(_ a: String, _ b: String) -> ComparisonResult {
        guard let x = DecimalText.decimal(a), let y = DecimalText.decimal(b) else {
            return result(ValueComparison.compareBytes(a.utf8, b.utf8))
        }
        return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
    }
}
