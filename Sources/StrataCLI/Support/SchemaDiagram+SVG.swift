import Foundation
import Strata

// MARK: - SVG

extension SchemaDiagram {
    /// Sizes of the SVG drawing, in pixels. Text widths are estimates: without a renderer there
    /// are no font metrics, and monospace fonts keep the estimate close.
    enum Metrics {
        static let fontSize = 12.0
        static let characterWidth = 7.2
        static let labelFontSize = 10.0
        static let labelCharacterWidth = 6.0
        static let headerHeight = 24.0
        static let rowHeight = 18.0
        static let horizontalPadding = 8.0
        static let bottomPadding = 6.0
        static let minimumBoxWidth = 80.0
        /// The vertical distance between two edges leaving one side of a box: room for a label
        /// above each, clear of the markers of its neighbours.
        static let attachmentSpacing = 22.0
        /// The distance between two edges running side by side in a gap.
        static let laneSpacing = 10.0
        static let margin = 16.0
        static let minimumColumnGap = 48.0
        static let minimumRowGap = 36.0
        /// Space between a label and the box or line it belongs to.
        static let labelGap = 4.0

        static func textWidth(_ text: String) -> Double { Double(text.count) * characterWidth }
        static func labelWidth(_ text: String) -> Double { Double(text.count) * labelCharacterWidth }
    }

    enum Side { case left, right }

    /// The kinds of edge, which differ in style and markers.
    enum EdgeKind {
        case relationship
        case oneWay
        case inheritance

        var cssClass: String {
            switch self {
            case .relationship: "relationship"
            case .oneWay: "relationship one-way"
            case .inheritance: "inheritance"
            }
        }
    }

    /// One entity's box.
    struct Box {
        let entity: Entity
        let title: String
        /// Attribute rows, then constraint rows (drawn as notes).
        let rows: [(text: String, isNote: Bool)]
        let width: Double
        let contentHeight: Double
        var height = 0.0
        var row = 0
        var column = 0
        var x = 0.0
        var y = 0.0
    }

    /// One edge between two boxes, and how it is routed through the gaps of the grid.
    struct Edge {
        let kind: EdgeKind
        let from: Int
        let to: Int
        let fromLabel: String?
        let toLabel: String?
        let startMarker: String?
        let endMarker: String?
        var fromSide = Side.right
        var toSide = Side.right
        /// The gap between columns (0 left of the first) where the edge leaves `from`.
        var firstGap = 0
        /// For edges between columns that are not neighbours: the gap where the edge enters `to`,
        /// and the gap between rows (0 above the first) it crosses in.
        var lastGap: Int?
        var rowGap: Int?
        var firstLane = 0
        var lastLane = 0
        var rowLane = 0
        /// Where the edge meets its boxes, set once attachments are spread along the sides.
        var fromY = 0.0
        var toY = 0.0
    }

    /// A place where an edge meets a box side.
    struct Attachment {
        let edge: Int
        let isStart: Bool
        let otherRow: Int
        let otherColumn: Int
    }
}
