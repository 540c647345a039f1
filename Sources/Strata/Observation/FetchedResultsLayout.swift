import Foundation

/// The sections of a controller's result, as ranges of its flat list.
struct FetchedResultsLayout {
    struct Section {
        var name: String
        var indexTitle: String?
        /// The key of an object of the section (nil without a section key).
        var key: SortKey?
        var start: Int
        var count: Int
    }

    var sections: [Section] = []

    /// The section that holds flat index `index`.
    func sectionIndex(forFlatIndex index: Int) -> Int {
        var low = 0
        var high = sections.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sections[middle].start <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }

    func indexPath(forFlatIndex index: Int) -> IndexPath {
        let section = sectionIndex(forFlatIndex: index)
        return IndexPath(indexes: [section, index - sections[section].start])
    }
}
