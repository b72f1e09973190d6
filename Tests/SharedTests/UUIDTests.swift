import Foundation
import Shared
import Testing

@Suite("UUIDs")
struct UUIDTests {
    /// A generator that hands out fixed words: the bits a UUID gets can be checked one by one.
    struct FixedWords: RandomNumberGenerator {
        var words: [UInt64]
        mutating func next() -> UInt64 { words.removeFirst() }
    }

    @Test("random UUIDs are version 4, RFC 9562's variant, read back by Foundation, and distinct")
    func randomAreVersion4() throws {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.random()
            let text = id.uuidString
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
            #expect(UUID(uuidString: text) == id)
            #expect(UUID(text: text.lowercased()) == id)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }

    @Test("Foundation's UUID.random(using:), which UUID.random() draws through, takes every bit but version and variant from the generator")
    func bitsFromGenerator() {
        var ones = FixedWords(words: [.max, .max])
        #expect(UUID.random(using: &ones).uuidString == "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")
        var zeros = FixedWords(words: [0, 0])
        #expect(UUID.random(using: &zeros).uuidString == "00000000-0000-4000-8000-000000000000")
    }
}
