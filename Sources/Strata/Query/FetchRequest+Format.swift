import Foundation

extension FetchRequest {
    /// Creates a request whose predicate is an `NSPredicate`-style format string.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = try FetchRequest<Movie>(format: "title BEGINSWITH[c] %@ AND reviews.@count > 3", "the")
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` for a malformed string (with its offset).
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        self.init(
            entityName: Model.entity.name,
            predicate: FetchPredicate(try QueryPredicate(format: format, argumentArray: arguments)))
    }

    /// Creates a request whose predicate is a format string with arguments gathered at run time
    /// (`NSPredicate(format:argumentArray:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let arguments: [Any] = ["name", ["Sam", 30]]
    /// let request = try FetchRequest<Person>(format: "%K IN %@", argumentArray: arguments)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` for a malformed string or an argument
    ///   that cannot be a predicate value.
    public init(format: String, argumentArray: [Any]) throws {
        self.init(
            entityName: Model.entity.name,
            predicate: FetchPredicate(try QueryPredicate(format: format, argumentArray: argumentArray)))
    }

    /// The request with a format-string predicate, replacing any other.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = try FetchRequest<Movie>().where(format: "title BEGINSWITH[c] %@", "the")
    /// ```
    public func `where`(format: String, _ arguments: any PredicateArgument...) throws -> Self {
        self.where(FetchPredicate(try QueryPredicate(format: format, argumentArray: arguments)))
    }

    /// The request with a format-string predicate added (with `AND`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = try FetchRequest<Movie>(predicate: \.year >= 1990).andWhere(format: "reviews.@count > %d", 3)
    /// ```
    public func andWhere(format: String, _ arguments: any PredicateArgument...) throws -> Self {
        andWhere(FetchPredicate(try QueryPredicate(format: format, argumentArray: arguments)))
    }
}

extension FetchPredicate {
    /// Creates a predicate from an `NSPredicate`-style format string.
    ///
    /// For example:
    ///
    /// ```swift
    /// let predicate = try FetchPredicate<Movie>(format: "title BEGINSWITH[c] %@ AND year > %d", "the", 1990)
    /// ```
    ///
    /// Keys are checked against the entity when the predicate is used in a fetch.
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` for a malformed string, with the offset
    ///   of the problem and what was expected.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        self.init(try QueryPredicate(format: format, argumentArray: arguments))
    }

    /// Creates a predicate from a format string with arguments gathered at run time.
    ///
    /// For example:
    ///
    /// ```swift
    /// let arguments: [Any] = ["title", ["Heat", "Ronin"]]
    /// let predicate = try FetchPredicate<Movie>(format: "%K IN %@", argumentArray: arguments)
    /// ```
    ///
    /// - Throws: ``StrataError/Code/invalidPredicate`` for a malformed string or an argument
    ///   that cannot be a predicate value.
    public init(format: String, argumentArray: [Any]) throws {
        self.init(try QueryPredicate(format: format, argumentArray: argumentArray))
    }
}

extension FetchRequest {
    /// Creates a request whose predicate is a Foundation `#Predicate`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let request = try FetchRequest(#Predicate<Movie> { $0.boxOffice > 100 && $0.title.starts(with: "The") })
    /// ```
    ///
    /// - Throws: ``StrataError/Code/unsupportedPredicate`` naming a construct Strata cannot
    ///   translate; ``StrataError/Code/unknownKey`` for a property that is not stored.
    public init(_ predicate: Foundation.Predicate<Model>, sortDescriptors: [FetchSortDescriptor<Model>] = []) throws {
        self.init(predicate: try FetchPredicate(predicate), sortDescriptors: sortDescriptors)
    }
}
