import Foundation

/// Setters that write only when the value changes, and say whether they wrote: the data-stack
/// kit's `Updatable`.
///
/// Conform a model class to get them; there is nothing to implement.
///
/// ```swift
/// extension Person: Updatable {}
///
/// rc.update(\.age, value: 15)                       // true: now 15
/// rc.updateIfAvailable(\.age, value: nil)           // false: still 15, never nil
/// rc.update(\.age, value: 16, minimumChange: 2)     // false: a change of 1 is too small
/// rc.add(\.friends, relation: dan)                  // true: the inverse knows too
/// rc.add(\.friends, relation: nil)                  // false: nobody's there
/// rc.remove(\.friends, relation: dan)               // true
/// ```
///
/// In Core Data an assignment marks the object changed even when the value is the same, so
/// the kit exists to keep `hasChanges` believable. Strata already ignores equal writes (see
/// ``ManagedObject/hasChanges``); these setters still help by returning whether they wrote, by
/// skipping `nil`, by ignoring changes below a threshold, and by adding or removing
/// relationship members without rebuilding the collection by hand. Relationship changes go
/// through the relationship's setter, so inverses are kept in step.
public protocol Updatable: ManagedObject {}

// MARK: - Single values

extension Updatable {
    /// Sets a property to `value` unless it already holds it.
    ///
    /// For example:
    ///
    /// ```swift
    /// if movie.update(\.title, value: row.title) { print("renamed") }   // false when the title was the same
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The property (an attribute or a to-one relationship).
    ///   - value: The value to write.
    /// - Returns: Whether the property was written.
    @discardableResult
    public func update<Value: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, Value>, value: Value) -> Bool {
        guard self[keyPath: keyPath] != value else { return false }
        self[keyPath: keyPath] = value
        return true
    }

    /// Sets a property to `value` unless `value` is `nil` or the property already holds it.
    ///
    /// For example:
    ///
    /// ```swift
    /// let newTitle: String? = nil                         // a field missing from the import
    /// movie.updateIfAvailable(\.title, value: newTitle)   // false: the title is kept
    /// ```
    ///
    /// - Returns: Whether the property was written.
    @discardableResult
    public func updateIfAvailable<Value: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, Value>, value: Value?)
        -> Bool
    {
        guard let value else { return false }
        return update(keyPath, value: value)
    }

    /// Sets a number to `value` unless it differs from the current one by `minimumChange` or
    /// less (the kit's threshold, inclusive: a change of exactly `minimumChange` is not written).
    ///
    /// For example:
    ///
    /// ```swift
    /// reading.update(\.celsius, value: 21.04, minimumChange: 0.1)   // false while it reads 21.0
    /// ```
    ///
    /// A negative `minimumChange` counts as its magnitude; the difference is computed without
    /// overflowing, so extreme integers never trap.
    ///
    /// - Returns: Whether the property was written.
    @discardableResult
    public func update<Value: Numeric & Comparable>(
        _ keyPath: ReferenceWritableKeyPath<Self, Value>, value: Value, minimumChange: Value
    ) -> Bool {
        guard !ThresholdCheck.isWithin(self[keyPath: keyPath], value, minimumChange) else { return false }
        self[keyPath: keyPath] = value
        return true
    }

    /// Sets an optional number to `value` unless it holds a number within `minimumChange` of
    /// it; a property holding `nil` is always written.
    ///
    /// For example:
    ///
    /// ```swift
    /// student.credits = nil
    /// student.update(\.credits, value: 12, minimumChange: 1)   // true: nil is always replaced
    /// student.update(\.credits, value: 13, minimumChange: 1)   // false: within 1 of 12
    /// ```
    ///
    /// - Returns: Whether the property was written.
    @discardableResult
    public func update<Value: Numeric & Comparable>(
        _ keyPath: ReferenceWritableKeyPath<Self, Value?>, value: Value, minimumChange: Value
    ) -> Bool {
        if let current = self[keyPath: keyPath], ThresholdCheck.isWithin(current, value, minimumChange) { return false }
        self[keyPath: keyPath] = value
        return true
    }

    /// Sets a number unless `value` is `nil` or within `minimumChange` of the current one.
    ///
    /// For example:
    ///
    /// ```swift
    /// let rating: Double? = feed["rating"]
    /// movie.updateIfAvailable(\.rating, value: rating, minimumChange: 0.1)   // false for nil or a small change
    /// ```
    ///
    /// - Returns: Whether the property was written.
    @discardableResult
    public func updateIfAvailable<Value: Numeric & Comparable>(
        _ keyPath: ReferenceWritableKeyPath<Self, Value>, value: Value?, minimumChange: Value
    ) -> Bool {
        guard let value else { return false }
        return update(keyPath, value: value, minimumChange: minimumChange)
    }

    /// Sets an optional number unless `value` is `nil` or within `minimumChange` of the current
    /// one.
    ///
    /// For example:
    ///
    /// ```swift
    /// let credits: Int16? = 12
    /// student.updateIfAvailable(\.credits, value: credits, minimumChange: 0)   // false only when nil or already 12
    /// ```
    ///
    /// - Returns: Whether the property was written.
    @discardableResult
    public func updateIfAvailable<Value: Numeric & Comparable>(
        _ keyPath: ReferenceWritableKeyPath<Self, Value?>, value: Value?, minimumChange: Value
    ) -> Bool {
        guard let value else { return false }
        return update(keyPath, value: value, minimumChange: minimumChange)
    }
}

// MARK: - To-many relationships

extension Updatable {
    /// Adds `relation` to a to-many relationship unless it is a member already.
    ///
    /// For example:
    ///
    /// ```swift
    /// let review = Review(context: context)
    /// movie.add(\.reviews, relation: review)   // true; review.movie is now movie
    /// movie.add(\.reviews, relation: review)   // false: already there
    /// ```
    ///
    /// - Returns: Whether it was added.
    @discardableResult
    public func add<Related: Hashable>(_ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Related) -> Bool {
        guard !self[keyPath: keyPath].contains(relation) else { return false }
        self[keyPath: keyPath].insert(relation)
        return true
    }

    /// Adds `relation` to a to-many relationship unless it is `nil` or a member already.
    ///
    /// For example:
    ///
    /// ```swift
    /// let review = movie.reviews.first { $0.stars == 5 }   // Review?
    /// movie.add(\.reviews, relation: review)               // false when there is no such review
    /// ```
    ///
    /// - Returns: Whether it was added.
    @discardableResult
    public func add<Related: Hashable>(_ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Related?) -> Bool {
        guard let relation else { return false }
        return add(keyPath, relation: relation)
    }

    /// Adds every member of `relation` that is not a member already, in one write.
    ///
    /// For example:
    ///
    /// ```swift
    /// let reviews = try context.fetch(Review.self, where: \.movie == nil)
    /// movie.add(\.reviews, relation: reviews)   // true when any was not there yet
    /// ```
    ///
    /// - Returns: Whether any was added.
    @discardableResult
    public func add<Related: Hashable, Members: Collection<Related>>(
        _ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Members
    ) -> Bool {
        let new = Set(relation).subtracting(self[keyPath: keyPath])
        guard !new.isEmpty else { return false }
        self[keyPath: keyPath].formUnion(new)
        return true
    }

    /// Removes `relation` from a to-many relationship if it is a member.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.remove(\.reviews, relation: review)   // true; review.movie is now nil
    /// ```
    ///
    /// - Returns: Whether it was removed.
    @discardableResult
    public func remove<Related: Hashable>(_ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Related)
        -> Bool
    {
        guard self[keyPath: keyPath].contains(relation) else { return false }
        self[keyPath: keyPath].remove(relation)
        return true
    }

    /// Removes `relation` from a to-many relationship unless it is `nil` or not a member.
    ///
    /// For example:
    ///
    /// ```swift
    /// let oneStar = movie.reviews.first { $0.stars == 1 }
    /// movie.remove(\.reviews, relation: oneStar)   // false when there is none
    /// ```
    ///
    /// - Returns: Whether it was removed.
    @discardableResult
    public func remove<Related: Hashable>(_ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Related?)
        -> Bool
    {
        guard let relation else { return false }
        return remove(keyPath, relation: relation)
    }

    /// Removes every member of `relation` that is a member, in one write.
    ///
    /// For example:
    ///
    /// ```swift
    /// let unrated = movie.reviews.filter { $0.stars == 0 }
    /// movie.remove(\.reviews, relation: unrated)   // one write for all of them
    /// ```
    ///
    /// - Returns: Whether any was removed.
    @discardableResult
    public func remove<Related: Hashable, Members: Collection<Related>>(
        _ keyPath: ReferenceWritableKeyPath<Self, Set<Related>>, relation: Members
    ) -> Bool {
        let current = self[keyPath: keyPath]
        let leaving = current.intersection(relation)
        guard !leaving.isEmpty else { return false }
        self[keyPath: keyPath] = current.subtracting(leaving)
        return true
    }
}

// MARK: - Ordered to-many relationships

extension Updatable {
    /// Appends `relation` to an ordered to-many relationship unless it is a member already.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.add(\.cast, relation: person)   // appended last; false when already in the cast
    /// ```
    ///
    /// - Returns: Whether it was added.
    @discardableResult
    public func add<Related: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, [Related]>, relation: Related) -> Bool {
        guard !self[keyPath: keyPath].contains(relation) else { return false }
        self[keyPath: keyPath].append(relation)
        return true
    }

    /// Appends `relation` unless it is `nil` or a member already.
    ///
    /// For example:
    ///
    /// ```swift
    /// let lead = try context.fetch(Person.self, where: \.name == "Al Pacino", limit: 1).first
    /// movie.add(\.cast, relation: lead)   // false when nobody was found
    /// ```
    ///
    /// - Returns: Whether it was added.
    @discardableResult
    public func add<Related: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, [Related]>, relation: Related?) -> Bool {
        guard let relation else { return false }
        return add(keyPath, relation: relation)
    }

    /// Appends, in order, every member of `relation` that is not a member already, in one
    /// write.
    ///
    /// For example:
    ///
    /// ```swift
    /// let people = try context.fetch(Person.self, where: (\Person.name).in(["Al Pacino", "Robert De Niro"]))
    /// movie.add(\.cast, relation: people)   // appended, except those already cast
    /// ```
    ///
    /// - Returns: Whether any was added.
    @discardableResult
    public func add<Related: Hashable, Members: Collection<Related>>(
        _ keyPath: ReferenceWritableKeyPath<Self, [Related]>, relation: Members
    ) -> Bool {
        var members = self[keyPath: keyPath]
        var present = Set(members)
        for candidate in relation where present.insert(candidate).inserted { members.append(candidate) }
        guard members.count != self[keyPath: keyPath].count else { return false }
        self[keyPath: keyPath] = members
        return true
    }

    /// Removes `relation` from an ordered to-many relationship if it is a member.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.remove(\.cast, relation: person)   // the others keep their order
    /// ```
    ///
    /// - Returns: Whether it was removed.
    @discardableResult
    public func remove<Related: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, [Related]>, relation: Related)
        -> Bool
    {
        guard self[keyPath: keyPath].contains(relation) else { return false }
        self[keyPath: keyPath].removeAll { $0 == relation }
        return true
    }

    /// Removes `relation` unless it is `nil` or not a member.
    ///
    /// For example:
    ///
    /// ```swift
    /// movie.remove(\.cast, relation: movie.cast.last)   // false for an empty cast
    /// ```
    ///
    /// - Returns: Whether it was removed.
    @discardableResult
    public func remove<Related: Equatable>(_ keyPath: ReferenceWritableKeyPath<Self, [Related]>, relation: Related?)
        -> Bool
    {
        guard let relation else { return false }
        return remove(keyPath, relation: relation)
    }
}

/// Whether two numbers differ by the threshold or less, without trapping on overflow.
enum ThresholdCheck {
    static func isWithin<Value: Numeric & Comparable>(_ current: Value, _ new: Value, _ threshold: Value) -> Bool {
        if current == new { return true }
        let (low, high) = current < new ? (current, new) : (new, current)
        if let low = low as? any FixedWidthInteger, let answer = integerWithin(low, high, threshold) { return answer }
        let limit = threshold < 0 ? 0 - threshold : threshold
        return high - low <= limit
    }

    /// The same for fixed-width integers, whose differences and magnitudes can overflow.
    private static func integerWithin<Integer: FixedWidthInteger>(_ low: Integer, _ high: Any, _ threshold: Any) -> Bool? {
        guard let high = high as? Integer, let threshold = threshold as? Integer else { return nil }
        let (difference, overflow) = high.subtractingReportingOverflow(low)
        if overflow { return false }  // further apart than any threshold of the type
        let limit = threshold >= 0 ? threshold : (threshold == .min ? .max : 0 - threshold)
        return difference <= limit
    }
}
