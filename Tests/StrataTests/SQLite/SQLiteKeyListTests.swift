import Foundation
import Testing

@testable import Strata

/// The JSON key lists batch requests bind for `json_each`.
@Suite struct SQLiteKeyListTests {
    @Test func keyListsAreJSONArraysOfTheKeys() throws {
        #expect(SQLiteStore.keyList([]) == "[]")
        #expect(SQLiteStore.keyList([0]) == "[0]")
        #expect(SQLiteStore.keyList([1, 22, 333, -4]) == "[1,22,333,-4]")
        let extremes: [Int64] = [.max, .min, 10, 9, 100_000_000_000]
        let text = SQLiteStore.keyList(extremes)
        #expect(text == "[" + extremes.map(String.init).joined(separator: ",") + "]")
        let decoded = try JSONDecoder().decode([Int64].self, from: Data(text.utf8))
        #expect(decoded == extremes)
    }
}
