import Foundation
import Strata

/// Choices read from bytes, one byte each (two for more than 256 options); 0 once they run out.
struct ByteChoices: ChoiceSource {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private mutating func byte() -> Int {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return Int(bytes[position])
    }

    mutating func choose(_ count: Int) -> Int {
        if count <= 1 { return 0 }
        let value = count <= 256 ? byte() : byte() << 8 | byte()
        return value % count
    }
}
