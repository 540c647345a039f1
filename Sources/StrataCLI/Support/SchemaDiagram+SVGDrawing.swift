import Foundation
import Strata

extension SchemaDiagram {
    /// Lays out and writes the SVG drawing.
    struct SVGDrawing {
        var boxes: [Box] = []
        var edges: [Edge] = []
        var columnCount = 0
        var rowCount = 0
        var columnWidths: [Double] = []
        var rowHeights: [Double] = []
        var columnX: [Double] = []
        var rowY: [Double] = []
        /// Where the lanes of each gap between columns, and between rows, start.
        var columnGapLaneStart: [Double] = []
        var rowGapLaneStart: [Double] = []
        /// How many edges run in each gap between columns, and in each gap between rows.
        var columnGapLaneCounts: [Int] = []
        var rowGapLaneCounts: [Int] = []
        var width = 0.0
        var height = 0.0

        init(model: Model) {
            placeBoxes(model)
            guard !boxes.isEmpty else { return }
            makeEdges(model)
            route()
            measure()
            attach()
        }

        // MARK: Layout

        /// Makes a box per entity and puts the boxes in a grid, row by row.
        ///
        /// Each inheritance tree stays together, a superentity before its subentities. Trees
        /// follow each other breadth-first along their relationships, starting from the most
        /// related one, so that related entities tend to be neighbours and their edges short.
        private mutating func placeBoxes(_ model: Model) {
            var children: [String: [Entity]] = [:]
            var roots: [Entity] = []
            for entity in model.entities {
                if let parent = entity.superentity {
                    children[parent.name, default: []].append(entity)
                } else {
                    roots.append(entity)
                }
            }
            var trees: [[Entity]] = []
            var treeOfEntity: [String: Int] = [:]
            func visit(_ entity: Entity, tree: Int) {
                trees[tree].append(entity)
                treeOfEntity[entity.name] = tree
                for child in children[entity.name] ?? [] { visit(child, tree: tree) }
            }
            for root in roots {
                trees.append([])
                visit(root, tree: trees.count - 1)
            }
            // A schema built without validation may hold an inheritance cycle no root leads to.
            for entity in model.entities where treeOfEntity[entity.name] == nil {
                trees.append([entity])
                treeOfEntity[entity.name] = trees.count - 1
            }

            var weights = [[Int]](repeating: [Int](repeating: 0, count: trees.count), count: trees.count)
            for link in model.links {
                guard let source = treeOfEntity[link.source], let destination = treeOfEntity[link.destination],
                    source != destination
                else { continue }
                weights[source][destination] += 1
                weights[destination][source] += 1
            }
            let degrees = weights.map { $0.reduce(0, +) }
            var placed = [Bool](repeating: false, count: trees.count)
            var treeOrder: [Int] = []
            while treeOrder.count < trees.count {
                // Ties go to the earlier tree, whose root name sorts first.
                let unplaced = trees.indices.filter { !placed[$0] }
                guard let start = unplaced.max(by: { degrees[$0] < degrees[$1] }) else { break }
                placed[start] = true
                var queue = [start]
                while !queue.isEmpty {
                    let tree = queue.removeFirst()
                    treeOrder.append(tree)
                    let neighbours = trees.indices.filter { !placed[$0] && weights[tree][$0] > 0 }
                        .sorted { (-weights[tree][$0], $0) < (-weights[tree][$1], $1) }
                    for neighbour in neighbours { placed[neighbour] = true }
                    queue += neighbours
                }
            }
            let ordered = treeOrder.flatMap { trees[$0] }

            columnCount = max(1, Int(Double(ordered.count).squareRoot().rounded(.up)))
            rowCount = (ordered.count + columnCount - 1) / columnCount
            boxes = ordered.enumerated().map { index, entity in
                var box = Self.makeBox(for: entity)
                box.row = index / columnCount
                box.column = index % columnCount
                return box
            }
        }

        private static func makeBox(for entity: Entity) -> Box {
            let title = entity.isAbstract ? "\(entity.name) (abstract)" : entity.name
            var rows: [(text: String, isNote: Bool)] = SchemaDiagram.ownAttributes(of: entity).map {
                (SchemaDiagram.attributeLine($0, in: entity), false)
            }
            rows += SchemaDiagram.compositeUniquenessConstraints(of: entity).map {
                (SchemaDiagram.constraintLine($0), true)
            }
            let textWidth = ([title] + rows.map(\.text)).map(Metrics.textWidth).max() ?? 0
            return Box(
                entity: entity, title: title, rows: rows,
                width: max(Metrics.minimumBoxWidth, textWidth + 2 * Metrics.horizontalPadding),
                contentHeight: Metrics.headerHeight + Double(rows.count) * Metrics.rowHeight + Metrics.bottomPadding)
        }

        /// One edge per inheritance and per relationship edge of the model.
        private mutating func makeEdges(_ model: Model) {
            var index: [String: Int] = [:]
            for (position, box) in boxes.enumerated() { index[box.entity.name] = position }
            for generalization in model.generalizations {
                guard let from = index[generalization.subentity], let to = index[generalization.superentity] else {
                    continue
                }
                edges.append(
                    Edge(
                        kind: .inheritance, from: from, to: to, fromLabel: nil, toLabel: nil, startMarker: nil,
                        endMarker: "inherits"))
            }
            for link in model.links {
                guard let from = index[link.source], let to = index[link.destination] else { continue }
                let forwardMarker = SchemaDiagram.isToManyEnd(link.forward) ? "many-end" : nil
                if let inverse = link.inverse {
                    edges.append(
                        Edge(
                            kind: .relationship, from: from, to: to,
                            fromLabel: SchemaDiagram.endLabel(for: inverse),
                            toLabel: SchemaDiagram.endLabel(for: link.forward),
                            startMarker: SchemaDiagram.isToManyEnd(inverse) ? "many-start" : nil,
                            endMarker: forwardMarker))
                } else if link.isOwnInverse {
                    edges.append(
                        Edge(
                            kind: .relationship, from: from, to: to, fromLabel: nil,
                            toLabel: SchemaDiagram.endLabel(for: link.forward),
                            startMarker: forwardMarker == nil ? nil : "many-start", endMarker: forwardMarker))
                } else {
                    edges.append(
                        Edge(
                            kind: .oneWay, from: from, to: to, fromLabel: nil,
                            toLabel: SchemaDiagram.endLabel(for: link.forward), startMarker: nil, endMarker: "arrow"))
                }
            }
        }

        /// Chooses the sides and gaps of every edge, and a lane in each gap so that edges in one
        /// gap run side by side instead of on top of each other.
        ///
        /// Boxes in one column leave via the gap on their right; boxes in neighbouring columns
        /// meet in the gap between them; otherwise an edge leaves through the gap next to its
        /// start, crosses in a gap between rows, and enters through the gap next to its end.
        private mutating func route() {
            var columnGapLanes = [Int](repeating: 0, count: columnCount + 1)
            var rowGapLanes = [Int](repeating: 0, count: rowCount + 1)
            func lane(in gap: Int, of lanes: inout [Int]) -> Int {
                defer { lanes[gap] += 1 }
                return lanes[gap]
            }
            for index in edges.indices {
                let from = boxes[edges[index].from]
                let to = boxes[edges[index].to]
                var edge = edges[index]
                if from.column == to.column {
                    edge.fromSide = .right
                    edge.toSide = .right
                    edge.firstGap = from.column + 1
                } else if abs(from.column - to.column) == 1 {
                    edge.fromSide = to.column > from.column ? .right : .left
                    edge.toSide = to.column > from.column ? .left : .right
                    edge.firstGap = max(from.column, to.column)
                } else {
                    let rightwards = to.column > from.column
                    edge.fromSide = rightwards ? .right : .left
                    edge.toSide = rightwards ? .left : .right
                    edge.firstGap = rightwards ? from.column + 1 : from.column
                    edge.lastGap = rightwards ? to.column : to.column + 1
                    edge.rowGap = from.row == to.row ? from.row : max(from.row, to.row)
                }
                edge.firstLane = lane(in: edge.firstGap, of: &columnGapLanes)
                if let lastGap = edge.lastGap { edge.lastLane = lane(in: lastGap, of: &columnGapLanes) }
                if let rowGap = edge.rowGap { edge.rowLane = lane(in: rowGap, of: &rowGapLanes) }
                edges[index] = edge
            }
            self.columnGapLaneCounts = columnGapLanes
            self.rowGapLaneCounts = rowGapLanes
        }

        /// Every box side's attachments, in the order they are spread along the side: edges to
        /// higher rows higher up, so that fewer edges cross.
        private func attachments() -> (left: [[Attachment]], right: [[Attachment]]) {
            var left = [[Attachment]](repeating: [], count: boxes.count)
            var right = [[Attachment]](repeating: [], count: boxes.count)
            for (index, edge) in edges.enumerated() {
                let from = boxes[edge.from]
                let to = boxes[edge.to]
                let start = Attachment(edge: index, isStart: true, otherRow: to.row, otherColumn: to.column)
                let end = Attachment(edge: index, isStart: false, otherRow: from.row, otherColumn: from.column)
                if edge.fromSide == .left { left[edge.from].append(start) } else { right[edge.from].append(start) }
                if edge.toSide == .left { left[edge.to].append(end) } else { right[edge.to].append(end) }
            }
            func ordered(_ list: [Attachment]) -> [Attachment] {
                list.sorted {
                    ($0.otherRow, $0.otherColumn, $0.edge, $0.isStart ? 0 : 1)
                        < ($1.otherRow, $1.otherColumn, $1.edge, $1.isStart ? 0 : 1)
                }
            }
            return (left.map(ordered), right.map(ordered))
        }

        /// Box heights (tall enough for their edges), column and row sizes, and the gaps: wide
        /// enough for the labels next to the boxes and for their lanes.
        private mutating func measure() {
            let (left, right) = attachments()
            for index in boxes.indices {
                let mostEdges = max(left[index].count, right[index].count)
                boxes[index].height = max(
                    boxes[index].contentHeight, Double(mostEdges + 1) * Metrics.attachmentSpacing)
            }
            columnWidths = (0..<columnCount).map { column in
                boxes.filter { $0.column == column }.map(\.width).max() ?? 0
            }
            rowHeights = (0..<rowCount).map { row in
                boxes.filter { $0.row == row }.map(\.height).max() ?? 0
            }

            // Labels sit beside the box they belong to, between it and the lanes.
            func labelRoom(_ attachment: Attachment) -> Double {
                let edge = edges[attachment.edge]
                guard let label = attachment.isStart ? edge.fromLabel : edge.toLabel else { return 0 }
                return Metrics.labelWidth(label) + 2 * Metrics.labelGap
            }
            var x = 0.0
            for gap in 0...columnCount {
                var leftRoom = 0.0
                var rightRoom = 0.0
                if gap > 0 {
                    for (index, box) in boxes.enumerated() where box.column == gap - 1 {
                        // A box narrower than its column has some of the room already.
                        let spare = columnWidths[gap - 1] - box.width
                        for attachment in right[index] { leftRoom = max(leftRoom, labelRoom(attachment) - spare) }
                    }
                }
                if gap < columnCount {
                    for (index, box) in boxes.enumerated() where box.column == gap {
                        for attachment in left[index] { rightRoom = max(rightRoom, labelRoom(attachment)) }
                    }
                }
                let lanes = columnGapLaneCounts[gap]
                let laneRoom = lanes > 0 ? Double(lanes + 1) * Metrics.laneSpacing : 0
                let minimum = gap == 0 || gap == columnCount ? Metrics.margin : Metrics.minimumColumnGap
                let gapWidth = max(minimum, leftRoom + laneRoom + rightRoom)
                columnGapLaneStart.append(x + leftRoom + (gapWidth - leftRoom - laneRoom - rightRoom) / 2)
                x += gapWidth
                if gap < columnCount {
                    columnX.append(x)
                    x += columnWidths[gap]
                }
            }
            width = x

            var y = 0.0
            for gap in 0...rowCount {
                let lanes = rowGapLaneCounts[gap]
                let laneRoom = lanes > 0 ? Double(lanes + 1) * Metrics.laneSpacing : 0
                let minimum = gap == 0 || gap == rowCount ? Metrics.margin : Metrics.minimumRowGap
                let gapHeight = max(minimum, laneRoom)
                rowGapLaneStart.append(y + (gapHeight - laneRoom) / 2)
                y += gapHeight
                if gap < rowCount {
                    rowY.append(y)
                    y += rowHeights[gap]
                }
            }
            height = y

            for index in boxes.indices {
                boxes[index].x = columnX[boxes[index].column]
                boxes[index].y = rowY[boxes[index].row]
            }
        }

        /// Spreads each side's edges evenly along it.
        private mutating func attach() {
            let (left, right) = attachments()
            for (index, box) in boxes.enumerated() {
                for side in [left[index], right[index]] {
                    let step = box.height / Double(side.count + 1)
                    for (position, attachment) in side.enumerated() {
                        let y = box.y + step * Double(position + 1)
                        if attachment.isStart {
                            edges[attachment.edge].fromY = y
                        } else {
                            edges[attachment.edge].toY = y
                        }
                    }
                }
            }
        }

        private func sideX(of box: Box, _ side: Side) -> Double {
            side == .left ? box.x : box.x + box.width
        }

        private func laneX(gap: Int, lane: Int) -> Double {
            columnGapLaneStart[gap] + Double(lane + 1) * Metrics.laneSpacing
        }

        /// The corners of an edge's path, from its start box to its end box.
        private func points(of edge: Edge) -> [(x: Double, y: Double)] {
            let start = (x: sideX(of: boxes[edge.from], edge.fromSide), y: edge.fromY)
            let end = (x: sideX(of: boxes[edge.to], edge.toSide), y: edge.toY)
            let firstX = laneX(gap: edge.firstGap, lane: edge.firstLane)
            guard let lastGap = edge.lastGap, let rowGap = edge.rowGap else {
                return [start, (firstX, start.y), (firstX, end.y), end]
            }
            let lastX = laneX(gap: lastGap, lane: edge.lastLane)
            let crossingY = rowGapLaneStart[rowGap] + Double(edge.rowLane + 1) * Metrics.laneSpacing
            return [start, (firstX, start.y), (firstX, crossingY), (lastX, crossingY), (lastX, end.y), end]
        }

        // MARK: Writing

        func render() -> String {
            guard !boxes.isEmpty else {
                return document(
                    width: 200, height: 40,
                    body: [
                        "<text x=\"16\" y=\"24\" fill=\"#555555\">(no entities)</text>"
                    ])
            }
            var body: [String] = []
            body.append("<g class=\"edges\" fill=\"none\" stroke-width=\"1.2\">")
            for edge in edges {
                let path = points(of: edge).enumerated().map { index, point in
                    (index == 0 ? "M" : "L") + "\(number(point.x)),\(number(point.y))"
                }.joined(separator: " ")
                var element = "<path class=\"\(edge.kind.cssClass)\" d=\"\(path)\""
                element += edge.kind == .inheritance ? " stroke=\"#333333\"" : " stroke=\"#4a5d7a\""
                if let marker = edge.startMarker { element += " marker-start=\"url(#\(marker))\"" }
                if let marker = edge.endMarker { element += " marker-end=\"url(#\(marker))\"" }
                body.append(element + "/>")
            }
            body.append("</g>")

            body.append("<g class=\"entities\">")
            for box in boxes { body += boxElements(box) }
            body.append("</g>")

            body.append("<g class=\"labels\" font-size=\"\(number(Metrics.labelFontSize))\" fill=\"#1f2d44\">")
            for edge in edges {
                if let label = edge.fromLabel {
                    body.append(labelElement(label, box: boxes[edge.from], side: edge.fromSide, y: edge.fromY))
                }
                if let label = edge.toLabel {
                    body.append(labelElement(label, box: boxes[edge.to], side: edge.toSide, y: edge.toY))
                }
            }
            body.append("</g>")
            return document(width: width, height: height, body: body)
        }

        private func document(width: Double, height: Double, body: [String]) -> String {
            let (width, height) = (number(width), number(height))
            let font =
                "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"\(number(Metrics.fontSize))\""
            var lines = [
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>",
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(width)\" height=\"\(height)\""
                    + " viewBox=\"0 0 \(width) \(height)\" \(font)>",
                "<title>Entity-relationship diagram</title>",
                "<defs>",
                // The hollow triangle of inheritance, its tip on the superentity's side.
                Self.marker(
                    "inherits", width: 14, tipX: 14, path: "M0,0 L14,6 L0,12 Z", fill: "#ffffff", color: "#333333"),
                Self.marker("arrow", width: 10, tipX: 10, path: "M0,1 L10,6 L0,11"),
                // Crow's feet, toes on the box. A start marker needs its own drawing: `orient="auto"`
                // turns it away from its box, and SVG 1.1 has no `auto-start-reverse`.
                Self.marker("many-end", width: 12, tipX: 12, path: "M0,6 L12,0 M0,6 L12,12"),
                Self.marker("many-start", width: 12, tipX: 0, path: "M12,6 L0,0 M12,6 L0,12"),
                "</defs>",
                "<rect x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\" fill=\"#ffffff\"/>",
            ]
            lines += body
            lines.append("</svg>")
            return lines.joined(separator: "\n") + "\n"
        }

        /// A marker 12 pixels high, drawn at the same size whatever the line width, that meets
        /// its line at (`tipX`, 6).
        private static func marker(
            _ id: String, width: Int, tipX: Int, path: String, fill: String = "none", color: String = "#4a5d7a"
        ) -> String {
            "<marker id=\"\(id)\" viewBox=\"0 0 \(width) 12\" refX=\"\(tipX)\" refY=\"6\" markerWidth=\"\(width)\""
                + " markerHeight=\"12\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">"
                + "<path d=\"\(path)\" fill=\"\(fill)\" stroke=\"\(color)\" stroke-width=\"1.2\"/></marker>"
        }

        private func boxElements(_ box: Box) -> [String] {
            let x = number(box.x)
            let textX = number(box.x + Metrics.horizontalPadding)
            let frame = "x=\"\(x)\" y=\"\(number(box.y))\" width=\"\(number(box.width))\""
            let stroke = "stroke=\"#3b5b8c\" stroke-width=\"1.2\""
            let titleStyle =
                "fill=\"#ffffff\" font-weight=\"bold\"" + (box.entity.isAbstract ? " font-style=\"italic\"" : "")
            var elements = [
                "<g class=\"entity\">",
                "<rect \(frame) height=\"\(number(box.height))\" fill=\"#ffffff\" \(stroke)/>",
                "<rect \(frame) height=\"\(number(Metrics.headerHeight))\" fill=\"#3b5b8c\" \(stroke)/>",
                "<text x=\"\(textX)\" y=\"\(number(box.y + 16))\" \(titleStyle)>\(xmlEscaped(box.title))</text>",
            ]
            for (index, row) in box.rows.enumerated() {
                let baseline = box.y + Metrics.headerHeight + Double(index + 1) * Metrics.rowHeight - 5
                let style = row.isNote ? " fill=\"#555555\" font-style=\"italic\"" : " fill=\"#1f2d44\""
                elements.append("<text x=\"\(textX)\" y=\"\(number(baseline))\"\(style)>\(xmlEscaped(row.text))</text>")
            }
            elements.append("</g>")
            return elements
        }

        /// A label just above the edge, beside the box it enters.
        private func labelElement(_ label: String, box: Box, side: Side, y: Double) -> String {
            let x = side == .left ? box.x - Metrics.labelGap : box.x + box.width + Metrics.labelGap
            let anchor = side == .left ? "end" : "start"
            return "<text x=\"\(number(x))\" y=\"\(number(y - Metrics.labelGap - 3))\" text-anchor=\"\(anchor)\">"
                + "\(xmlEscaped(label))</text>"
        }

        /// A coordinate with at most one decimal, written the same on every machine and locale.
        private func number(_ value: Double) -> String {
            let rounded = (value * 10).rounded() / 10
            if rounded == rounded.rounded(), abs(rounded) < 1e9 { return String(Int(rounded)) }
            return String(rounded)
        }
    }
}
