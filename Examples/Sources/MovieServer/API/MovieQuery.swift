import Foundation
import Hummingbird
import Strata

/// The query parameters of `GET /movies`, `GET /movies/count` and `GET /movies/live`, as a
/// Strata fetch request.
///
/// | parameter | meaning |
/// | --- | --- |
/// | `where` | a Strata predicate format string over the model's keys: `rating > 8 AND director.name == "Michael Mann"` |
/// | `sort` | keys separated by commas, each ascending or, with a leading `-`, descending: `-year,title` (default `title`) |
/// | `limit` | the most movies to return, 1 to 1000 (default 100) |
///
/// Results are always ordered completely: `id` breaks ties, so a live query's results do not
/// reorder between two fetches of the same data.
public struct MovieQuery: Sendable, Equatable {
    /// The most movies a request may ask for.
    public static let maximumLimit = 1000
    /// How many movies a request returns when it does not say.
    public static let defaultLimit = 100

    /// The predicate, if the request gave one.
    public var predicate: FetchPredicate<Movie>?
    /// The order of the results.
    public var sortDescriptors: [FetchSortDescriptor<Movie>]
    /// The most movies to return.
    public var limit: Int

    /// Reads the query from a request's query parameters.
    ///
    /// Parameters are read as HTML forms and `curl --data-urlencode` write them: `+` is a
    /// space, and `%2B` a plus sign.
    ///
    /// - Throws: ``APIError`` (`400 Bad Request`) for a malformed predicate, sort or limit.
    public init(request: Request) throws(APIError) {
        let parameters = Self.formParameters(request.uri.query ?? "")
        try self.init(where: parameters["where"], sort: parameters["sort"], limit: parameters["limit"])
    }

    /// The parameters of a URL query, decoded as a form (the first value of each name).
    static func formParameters(_ query: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decoded(parts[0])
            if parameters[name] == nil {
                parameters[name] = parts.count > 1 ? decoded(parts[1]) : ""
            }
        }
        return parameters
    }

    /// Reads the query from the parameters' text.
    ///
    /// Keys the model does not have are found when the request runs.
    ///
    /// - Throws: ``APIError`` (`400 Bad Request`) for a malformed predicate, sort or limit.
    public init(where format: String?, sort: String?, limit: String?) throws(APIError) {
        if let format, !format.trimmingCharacters(in: CharacterSet.whitespaces).isEmpty {
            do {
                predicate = try FetchPredicate<Movie>(format: format)
            } catch {
                throw APIError(RepositoryError(error))
            }
        }
        sortDescriptors = try Self.sortDescriptors(sort ?? "title")
        if let limit {
            guard let value = Int(limit), (1...Self.maximumLimit).contains(value) else {
                throw APIError.badParameter("limit", "'\(limit)' is not a whole number from 1 to \(Self.maximumLimit).")
            }
            self.limit = value
        } else {
            self.limit = Self.defaultLimit
        }
    }

    /// Parses `sort`: keys separated by commas, `-` before a key for descending order.
    static func sortDescriptors(_ text: String) throws(APIError) -> [FetchSortDescriptor<Movie>] {
        var descriptors: [FetchSortDescriptor<Movie>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            var key = part.trimmingCharacters(in: .whitespaces)
            var ascending = true
            if key.hasPrefix("-") {
                ascending = false
                key.removeFirst()
            } else if key.hasPrefix("+") {
                key.removeFirst()
            }
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_."))
            guard !key.isEmpty, key.unicodeScalars.allSatisfy(allowed.contains) else {
                throw APIError.badParameter(
                    "sort", "'\(text)' is not a list of keys such as 'title' or '-year,title'.")
            }
            descriptors.append(FetchSortDescriptor(key: key, ascending: ascending))
        }
        if !descriptors.contains(where: { $0.key == "id" }) {
            descriptors.append(FetchSortDescriptor(key: "id"))
        }
        return descriptors
    }

    /// The fetch request for the query.
    public var fetchRequest: FetchRequest<Movie> {
        FetchRequest(predicate: predicate, sortDescriptors: sortDescriptors).limit(limit)
    }
}
