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

    /// UUID(bytes:)'s answer spelled out one character at a time: four dashes where the form has them, hex
    /// digits of either case everywhere else.
    static func reference(_ text: [UInt8]) -> UUID? {
        guard text.count == 36 else { return nil }
        var digits: [UInt8] = []
        for (index, byte) in text.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digits.append(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digits.append(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { bytes[index] = digits[2 * index] << 4 | digits[2 * index + 1] }
        return bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    @Test("UUID(bytes:) reads what the reference reads, and refuses every byte the reference refuses, in every position")
    func readsAsReference() {
        var generator = SplitMix64(seed: 36)
        for round in 0..<12 {
            let id = UUID.random(using: &generator)
            // Upper, lower and mixed case.
            var text = Array(id.uuidString.utf8)
            if round % 3 == 1 { text = Array(id.uuidString.lowercased().utf8) }
            if round % 3 == 2 { text = text.map { $0 >= UInt8(ascii: "A") && Bool.random(using: &generator) ? $0 | 0x20 : $0 } }
            #expect(text.withUnsafeBytes { UUID(bytes: $0) } == id)
            // Each position changed to each byte value in turn.
            for position in 0..<36 {
                for byte in 0...255 {
                    var changed = text
                    changed[position] = UInt8(byte)
                    let read = changed.withUnsafeBytes { UUID(bytes: $0) }
                    if read != Self.reference(changed) {
                        Issue.record("\(String(decoding: changed, as: UTF8.self)): \(String(describing: read)) at \(position)")
                    }
                }
            }
        }
        for length in [0, 35, 37] {
            let text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            #expect(text.withUnsafeBytes { UUID(bytes: $0) } == nil)
        }
    }

    @Test("UUID.write(to:) spells uuidString")
    func writesUUIDString() {
        var generator = SplitMix64(seed: 37)
        let edges = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                     UUID(uuid: (0x09, 0x0A, 0x9A, 0xA9, 0xF0, 0x0F, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x01, 0x23))]
        for id in edges + (0..<1_000).map({ _ in UUID.random(using: &generator) }) {
            var text = [UInt8](repeating: 0, count: 36)
            text.withUnsafeMutableBytes { id.write(to: $0.baseAddress!) }
            #expect(String(decoding: text, as: UTF8.self) == id.uuidString)
        }
    }
}

