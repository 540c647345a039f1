import Foundation

// MARK: - Public entry points

extension QueryPredicate {
    /// Parses an `NSPredicate`-style format string, substituting format specifiers with
    /// `arguments` in order.
    ///
    /// The grammar is `NSPredicate`'s: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`,
    /// `IN`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`, `MATCHES`, each optionally followed by
    /// `[c]`, `[d]` or `[cd]`), `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`,
    /// `FALSEPREDICATE`, the modifiers `ANY`/`SOME`, `ALL` and `NONE`, key paths with collection
    /// operators (`reviews.@avg.stars`), `SELF`, template variables (`$name`), `SUBQUERY`,
    /// string, number, Boolean and `nil` literals, lists (`{1, 2, 3}`) and dates written as
    /// `CAST(<seconds since 2001>, "NSDate")` (Core Data's form) or as
    /// `CAST("<ISO 8601 text>", "NSDate")`: a day (`"1999-12-31"`, midnight UTC), or a day and
    /// a time with an optional fraction of a second and zone (`"1999-12-31T23:59:59.999999Z"`,
    /// `"2000-01-01T01:00:00+01:00"`; UTC without one), read exactly. Keywords are
    /// case-insensitive; write `#IN` to use a reserved word as a key (after a dot, and for
    /// `SUBQUERY` and `CAST` when no `(` follows, the `#` is optional).
    ///
    /// Format specifiers consume the arguments in order:
    /// - `%@`: the argument's ``PredicateArgument/predicateExpression`` (a value, an object,
    ///   or a list for `IN`);
    /// - `%K`: a `String` argument used as a key path;
    /// - `%d`, `%i`, `%u`, `%ld`, `%lld`: an integer (a floating-point argument must hold an
    ///   exact integer);
    /// - `%f`, `%lf`, `%g`: a `Double` (integers are converted);
    /// - `%s`: a `String`.
    ///
    /// Arguments are never spliced into the text, so a value such as `"x'; DROP TABLE Movie"`
    /// stays one string constant. Inside a quoted string, specifiers are literal text and `%%`
    /// stands for one `%`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let predicate = try QueryPredicate(
    ///     format: "year >= %d AND %K BEGINSWITH[cd] %@ AND ANY reviews.stars > 3",
    ///     1990, "title", "the")
    /// ```
    ///
    /// - Complexity: O(*n*) in the length of the format string. Nesting (parentheses, `NOT`,
    ///   lists and subqueries) is limited to 200 levels.
    /// - Parameters:
    ///   - format: The format string.
    ///   - arguments: One value for each format specifier, in order.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` when the string
    ///   is malformed (a `CAST` to `NSDate` of text that is not an ISO 8601 date included),
    ///   when the number of arguments differs from the number of specifiers, or when an
    ///   argument does not suit its specifier. ``StrataError/offset`` gives the
    ///   0-based character offset of the problem.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses an `NSPredicate`-style format string with the format specifiers' arguments in an
    /// array.
    ///
    /// This is ``init(format:_:)`` for arguments gathered at run time.
    ///
    /// For example:
    ///
    /// ```swift
    /// let arguments: [Any] = ["title", "Alien"]
    /// let predicate = try QueryPredicate(format: "%K ==[c] %@", argumentArray: arguments)
    /// let mixed = try QueryPredicate(format: "name IN %@", argumentArray: [["Sam", 30] as [Any]])
    /// ```
    ///
    /// Each argument is a ``PredicateArgument`` (strings, numbers, dates, object IDs, managed
    /// objects…), `nil`, or an array or set of them — of mixed types if need be, as in Core Data.
    ///
    /// - Complexity: O(*n*) in the length of the format string.
    /// - Parameters:
    ///   - format: The format string.
    ///   - argumentArray: One value for each format specifier, in order.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` and an
    ///   ``StrataError/offset`` when the string or its arguments are invalid (an argument of a
    ///   type that cannot be a predicate value is named by its position).
    public init(format: String, argumentArray: [Any]) throws {
        let arguments = try argumentArray.enumerated().map { position, value in
            try PredicateArguments.argument(from: value, position: position + 1)
        }
        var parser = try PredicateParser(format: format, arguments: arguments)
        self = try parser.parse()
    }

    /// Returns the predicate with its template variables (`$name`) replaced by values.
    ///
    /// Variables bound by an enclosing `SUBQUERY` are not template variables and are left
    /// alone, as is any template variable that `variables` has no value for (substitute it
    /// later, or resolving the predicate fails). A variable followed by a key path
    /// (`$director.name`) can be given a key path (`"director"` as a ``QueryExpression/keyPath(_:)``)
    /// or `SELF`; the two are joined into one key path.
    ///
    /// For example:
    ///
    /// ```swift
    /// let template = try QueryPredicate(format: "year >= $from AND title BEGINSWITH $prefix")
    /// let predicate = try template.substituting(["from": 1990, "prefix": "The"])
    /// ```
    ///
    /// - Complexity: O(*n*) in the size of the tree.
    /// - Parameter variables: Values by variable name, without the `$`.
    /// - Returns: The predicate with the variables replaced.
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidPredicate`` when a
    ///   variable followed by a key path is given a constant value or list, which has no
    ///   properties to follow.
    public func substituting(_ variables: [String: any PredicateArgument]) throws -> QueryPredicate {
        try substituting(variables.mapValues(\.predicateExpression), bound: [])
    }
}
