import Foundation

// How a controller applies a batch of changed objects to its result and describes the batch.
//
// An object that left its place is removed; an object that matches is inserted where its key
// sorts. The description then reports, for objects both removed and inserted, a move only when
// their order relative to the objects that did not change is different (or their section is);
// otherwise an update. The remaining objects keep their relative order, which is what makes the
// index paths valid for a table view's batch update and the `CollectionDifference` applicable.
extension FetchedResultsController {
    /// An object that leaves its old place (`index` in the old result).
    struct Removal {
        var object: Model
        var index: Int
    }

    /// An object that takes a new place (`index` in the new result).
    struct Insertion {
        var object: Model
        var key: SortKey
        var index = 0
    }

    /// An updated object whose key did not change.
    struct InPlace {
        var object: Model
        var oldIndex: Int
        var newIndex = 0
    }

    /// How the sections of the old and new results correspond.
    struct SectionMapping {
        /// For each old section, its index in the new result, or `nil` when it was deleted.
        var newIndexOfOld: [Int?]
        /// For each new section, whether it was inserted.
        var isInserted: [Bool]
    }

    /// Applies a batch: `touched` objects were inserted, updated or deleted (or re-keyed);
    /// `updated` names the ones whose values changed.
    func apply(touched: [ManagedObject], updated: Set<ObjectIdentifier>) {
        if fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 {
            refetch(updated: updated)
            return
        }
        assignUnsavedOrder(to: touched)
        var removals: [Removal] = []
        var insertions: [Insertion] = []
        var inPlace: [InPlace] = []
        for object in touched {
            let id = ObjectIdentifier(object)
            let model = object as? Model
            let newKey = model.flatMap { matches(object) ? sortKey(for: $0) : nil }
            guard let oldKey = keyByObject[id] else {
                if let model, let newKey { insertions.append(Insertion(object: model, key: newKey)) }
                continue
            }
            guard let model, let oldIndex = position(of: oldKey) else {
                // The result lost track of the object; start again rather than report nonsense.
                refetch(updated: updated)
                return
            }
            if let newKey, compare(oldKey, newKey) == 0 {
                if updated.contains(id) { inPlace.append(InPlace(object: model, oldIndex: oldIndex)) }
                continue
            }
            removals.append(Removal(object: model, index: oldIndex))
            if let newKey { insertions.append(Insertion(object: model, key: newKey)) }
        }
        guard !removals.isEmpty || !insertions.isEmpty || !inPlace.isEmpty else { return }

        delegate?.controllerWillChangeContent(self)
        let oldLayout = layout
        removals.sort { $0.index < $1.index }
        insertions.sort { compare($0.key, $1.key) < 0 }
        mutate(removals: removals, insertions: &insertions)
        // Objects that left keep no place among unsaved objects: their identifiers may be reused.
        for object in touched where keyByObject[ObjectIdentifier(object)] == nil {
            unsavedOrder[ObjectIdentifier(object)] = nil
        }
        let mapping = updateLayout(from: oldLayout, removals: removals, insertions: insertions)
        for index in inPlace.indices {
            let key = keyByObject[ObjectIdentifier(inPlace[index].object)]
            inPlace[index].newIndex = key.flatMap(position(of:)) ?? inPlace[index].oldIndex
        }
        announce(
            describe(
                removals: removals, insertions: insertions, inPlace: inPlace, updated: updated,
                oldLayout: oldLayout, mapping: mapping))
    }

    /// Removes and inserts objects in the ordered arrays, recording each insertion's index.
    private func mutate(removals: [Removal], insertions: inout [Insertion]) {
        for removal in removals { keyByObject[ObjectIdentifier(removal.object)] = nil }
        if removals.count + insertions.count <= 64 {
            for removal in removals.reversed() {
                fetchedObjects.remove(at: removal.index)
                keys.remove(at: removal.index)
            }
            // In ascending key order, a later insertion never shifts an earlier one.
            for index in insertions.indices {
                let point = insertionPoint(of: insertions[index].key)
                fetchedObjects.insert(insertions[index].object, at: point)
                keys.insert(insertions[index].key, at: point)
                insertions[index].index = point
            }
        } else {
            // Many changes: one merging pass instead of many array shifts.
            var objects: [Model] = []
            var newKeys: [SortKey] = []
            objects.reserveCapacity(keys.count - removals.count + insertions.count)
            newKeys.reserveCapacity(objects.capacity)
            var nextRemoval = 0
            var nextInsertion = 0
            for index in keys.indices {
                if nextRemoval < removals.count, removals[nextRemoval].index == index {
                    nextRemoval += 1
                    continue
                }
                while nextInsertion < insertions.count, compare(insertions[nextInsertion].key, keys[index]) < 0 {
                    insertions[nextInsertion].index = objects.count
                    objects.append(insertions[nextInsertion].object)
                    newKeys.append(insertions[nextInsertion].key)
                    nextInsertion += 1
                }
                objects.append(fetchedObjects[index])
                newKeys.append(keys[index])
            }
            while nextInsertion < insertions.count {
                insertions[nextInsertion].index = objects.count
                objects.append(insertions[nextInsertion].object)
                newKeys.append(insertions[nextInsertion].key)
                nextInsertion += 1
            }
            fetchedObjects = objects
            keys = newKeys
        }
        for insertion in insertions { keyByObject[ObjectIdentifier(insertion.object)] = insertion.key }
    }

    /// Adjusts the sections for the batch: counts change, empty sections go, new ones come.
    private func updateLayout(
        from oldLayout: FetchedResultsLayout, removals: [Removal], insertions: [Insertion]
    ) -> SectionMapping {
        guard isSectioned else {
            layout = FetchedResultsLayout(sections: [
                .init(name: "", indexTitle: oldLayout.sections.first?.indexTitle, key: nil, start: 0, count: keys.count)
            ])
            return SectionMapping(newIndexOfOld: [0], isInserted: [false])
        }
        var work = oldLayout.sections.enumerated().map { (oldIndex: Optional($0.offset), section: $0.element) }
        for removal in removals {
            work[oldLayout.sectionIndex(forFlatIndex: removal.index)].section.count -= 1
        }
        for insertion in insertions {
            var low = 0
            var high = work.count
            while low < high {
                let middle = (low + high) / 2
                if let key = work[middle].section.key, compareSections(key, insertion.key) < 0 {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            if low < work.count, let key = work[low].section.key, compareSections(key, insertion.key) == 0 {
                work[low].section.count += 1
            } else {
                let name = sectionName(of: insertion.key)
                let section = FetchedResultsLayout.Section(
                    name: name, indexTitle: sectionIndexTitle(name), key: insertion.key, start: 0, count: 1)
                work.insert((nil, section), at: low)
            }
        }
        var mapping = SectionMapping(newIndexOfOld: Array(repeating: nil, count: oldLayout.sections.count), isInserted: [])
        var sections: [FetchedResultsLayout.Section] = []
        var start = 0
        for var entry in work where entry.section.count > 0 {
            entry.section.start = start
            start += entry.section.count
            if let oldIndex = entry.oldIndex { mapping.newIndexOfOld[oldIndex] = sections.count }
            mapping.isInserted.append(entry.oldIndex == nil)
            sections.append(entry.section)
        }
        layout = FetchedResultsLayout(sections: sections)
        return mapping
    }

    /// Fetches the result again and reports the difference (requests with a limit or offset).
    func refetch(updated: Set<ObjectIdentifier>) {
        guard let objects = try? managedObjectContext.fetch(fetchRequest) else { return }
        delegate?.controllerWillChangeContent(self)
        let oldLayout = layout
        let oldObjects = fetchedObjects
        load(objects)
        let insertions = fetchedObjects.indices.map { Insertion(object: fetchedObjects[$0], key: keys[$0], index: $0) }
        let removals = oldObjects.enumerated().map { Removal(object: $0.element, index: $0.offset) }
        // Every object counts as moved-or-not; the description keeps the longest run in place.
        announce(
            describe(
                removals: removals, insertions: insertions, inPlace: [], updated: updated, oldLayout: oldLayout,
                mapping: sectionMapping(from: oldLayout, to: layout)))
    }

    /// Pairs old and new sections by their key, walking both in order.
    private func sectionMapping(from old: FetchedResultsLayout, to new: FetchedResultsLayout) -> SectionMapping {
        guard isSectioned else { return SectionMapping(newIndexOfOld: [0], isInserted: [false]) }
        var mapping = SectionMapping(
            newIndexOfOld: Array(repeating: nil, count: old.sections.count),
            isInserted: Array(repeating: true, count: new.sections.count))
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < old.sections.count, newIndex < new.sections.count {
            guard let oldKey = old.sections[oldIndex].key, let newKey = new.sections[newIndex].key else { break }
            let order = compareSections(oldKey, newKey)
            if order == 0 {
                mapping.newIndexOfOld[oldIndex] = newIndex
                mapping.isInserted[newIndex] = false
                oldIndex += 1
                newIndex += 1
            } else if order < 0 {
                oldIndex += 1
            } else {
                newIndex += 1
            }
        }
        return mapping
    }

    /// The batch as a ``FetchedResultsChange`` and the objects of its object changes.
    private func describe(
        removals: [Removal], insertions: [Insertion], inPlace: [InPlace], updated: Set<ObjectIdentifier>,
        oldLayout: FetchedResultsLayout, mapping: SectionMapping
    ) -> (change: FetchedResultsChange, objects: [Model]) {
        let removedIndexes = removals.map(\.index)  // ascending
        let insertedIndexes = insertions.map(\.index).sorted()
        func countBefore(_ index: Int, in sorted: [Int]) -> Int {
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < index { low = middle + 1 } else { high = middle }
            }
            return low
        }
        var newIndexByObject: [ObjectIdentifier: Int] = [:]
        for insertion in insertions { newIndexByObject[ObjectIdentifier(insertion.object)] = insertion.index }

        // Objects both removed and inserted: which of them stay where they were?
        var groups: [Int: [(removal: Removal, newIndex: Int)]] = [:]
        var moved: [(removal: Removal, newIndex: Int)] = []
        var deletedOnly: [Removal] = []
        for removal in removals {
            guard let newIndex = newIndexByObject.removeValue(forKey: ObjectIdentifier(removal.object)) else {
                deletedOnly.append(removal)
                continue
            }
            let oldGap = removal.index - countBefore(removal.index, in: removedIndexes)
            let newGap = newIndex - countBefore(newIndex, in: insertedIndexes)
            let oldSection = oldLayout.sectionIndex(forFlatIndex: removal.index)
            let sameSection = mapping.newIndexOfOld[oldSection] == layout.sectionIndex(forFlatIndex: newIndex)
            if oldGap == newGap, sameSection {
                groups[oldGap, default: []].append((removal, newIndex))
            } else {
                moved.append((removal, newIndex))
            }
        }
        var stayed: [(removal: Removal, newIndex: Int)] = []
        for candidates in groups.values {
            let keep = Self.longestIncreasingRun(candidates.map(\.newIndex))
            for (index, candidate) in candidates.enumerated() {
                if keep.contains(index) {
                    stayed.append((candidate.removal, candidate.newIndex))
                } else {
                    moved.append((candidate.removal, candidate.newIndex))
                }
            }
        }
        let insertedOnly = insertions.filter { newIndexByObject[ObjectIdentifier($0.object)] != nil }

        // Sections.
        var sectionChanges: [FetchedResultsChange.SectionChange] = []
        for (index, newIndex) in mapping.newIndexOfOld.enumerated().reversed() where newIndex == nil {
            let section = oldLayout.sections[index]
            sectionChanges.append(.init(type: .delete, index: index, name: section.name, indexTitle: section.indexTitle))
        }
        for (index, isInserted) in mapping.isInserted.enumerated() where isInserted {
            let section = layout.sections[index]
            sectionChanges.append(.init(type: .insert, index: index, name: section.name, indexTitle: section.indexTitle))
        }
        func oldSectionDeleted(_ index: Int) -> Bool {
            mapping.newIndexOfOld[oldLayout.sectionIndex(forFlatIndex: index)] == nil
        }
        func newSectionInserted(_ index: Int) -> Bool { mapping.isInserted[layout.sectionIndex(forFlatIndex: index)] }

        // Objects, in batch-update order.
        var entries: [(change: FetchedResultsChange.ObjectChange, object: Model)] = []
        var deletions: [(Int, Model)] = deletedOnly.filter { !oldSectionDeleted($0.index) }.map { ($0.index, $0.object) }
        var additions: [(Int, Model)] = insertedOnly.filter { !newSectionInserted($0.index) }.map { ($0.index, $0.object) }
        var moves: [(from: Int, to: Int, object: Model)] = []
        for (removal, newIndex) in moved {
            switch (oldSectionDeleted(removal.index), newSectionInserted(newIndex)) {
            case (true, true): break
            case (true, false): additions.append((newIndex, removal.object))
            case (false, true): deletions.append((removal.index, removal.object))
            case (false, false): moves.append((removal.index, newIndex, removal.object))
            }
        }
        for (index, object) in deletions.sorted(by: { $0.0 > $1.0 }) {
            entries.append(
                (.init(type: .delete, objectID: object.objectID, indexPath: oldLayout.indexPath(forFlatIndex: index)), object))
        }
        for (index, object) in additions.sorted(by: { $0.0 < $1.0 }) {
            entries.append(
                (.init(type: .insert, objectID: object.objectID, newIndexPath: layout.indexPath(forFlatIndex: index)), object))
        }
        for move in moves.sorted(by: { $0.to < $1.to }) {
            entries.append(
                (
                    .init(
                        type: .move, objectID: move.object.objectID, indexPath: oldLayout.indexPath(forFlatIndex: move.from),
                        newIndexPath: layout.indexPath(forFlatIndex: move.to)), move.object
                ))
        }
        var updates: [(from: Int, to: Int, object: Model)] = inPlace.map { ($0.oldIndex, $0.newIndex, $0.object) }
        for (removal, newIndex) in stayed where updated.contains(ObjectIdentifier(removal.object)) {
            updates.append((removal.index, newIndex, removal.object))
        }
        for update in updates.sorted(by: { $0.from < $1.from }) {
            entries.append(
                (
                    .init(
                        type: .update, objectID: update.object.objectID,
                        indexPath: oldLayout.indexPath(forFlatIndex: update.from),
                        newIndexPath: layout.indexPath(forFlatIndex: update.to)), update.object
                ))
        }

        // The flat difference: every removal and insertion, sections regardless.
        var steps: [CollectionDifference<ObjectID>.Change] = []
        for removal in deletedOnly { steps.append(.remove(offset: removal.index, element: removal.object.objectID, associatedWith: nil)) }
        for insertion in insertedOnly {
            steps.append(.insert(offset: insertion.index, element: insertion.object.objectID, associatedWith: nil))
        }
        for (removal, newIndex) in moved {
            steps.append(.remove(offset: removal.index, element: removal.object.objectID, associatedWith: newIndex))
            steps.append(.insert(offset: newIndex, element: removal.object.objectID, associatedWith: removal.index))
        }
        let difference =
            CollectionDifference(steps)
            ?? fetchedObjects.map(\.objectID).difference(from: [])  // unreachable: the steps are consistent
        let change = FetchedResultsChange(
            sectionChanges: sectionChanges, objectChanges: entries.map(\.change), difference: difference)
        return (change, entries.map(\.object))
    }

    /// The positions of a longest strictly increasing subsequence of `values` (O(m log m)).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []  // positions in `values` ending the best run of each length
        var previous = Array(repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run = Set<Int>()
        var position = tails.last ?? -1
        while position >= 0 {
            run.insert(position)
            position = previous[position]
        }
        return run
    }

    /// Tells the delegate, the iterations of ``changes`` and the observable wrapper.
    /// (The delegate heard `controllerWillChangeContent` before the result changed.)
    private func announce(_ batch: (change: FetchedResultsChange, objects: [Model])) {
        let change = batch.change
        if let delegate {
            defer { delegate.controllerDidChangeContent(self) }
            guard !change.isEmpty else { return }
            for section in change.sectionChanges {
                delegate.controller(self, didChange: section, atSectionIndex: section.index, for: section.type)
            }
            for (objectChange, object) in zip(change.objectChanges, batch.objects) {
                delegate.controller(
                    self, didChange: object, at: objectChange.indexPath, for: objectChange.type,
                    newIndexPath: objectChange.newIndexPath)
            }
        }
        guard !change.isEmpty else { return }
        delegate?.controller(self, didChangeContentWith: change)
        streams.post(change)
        changeHandler?(change)
    }
}
