import Foundation
import Shared
import Testing

@Suite("JSON values written to bytes")
struct JSONBytesTests {
    private static func text(_ write: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        write(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("numbers are written as Swift's description spells them, whole ones by the fast path too; NaN and infinities are null")
    func numbersAsDescription() {
        var generator = SplitMix64(seed: 15)
        let edges: [Double] = [0, -0.0, 1, -1, 0.1, 30, 604_800, 1e15 - 1, -(1e15 - 1), 1e15, 1e15 + 2, 9_007_199_254_740_992,
                               .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 123_456_789.5, 1e-7]
        let random = (0..<2_000).map { index -> Double in
            let magnitude = Double(generator.next() % 1_000_000_000_000_000)
            return index % 2 == 0 ? magnitude : -magnitude / 8
        }
        for value in edges + random {
            #expect(Self.text { JSONBytes.append(value, to: &$0) } == value.description, "\(value)")
        }
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(Self.text { JSONBytes.append(value, to: &$0) } == "null")
        }
        for value in [0, 1, -1, 42, Int.max, Int.min] {
            #expect(Self.text { JSONBytes.append(value, to: &$0) } == String(value))
        }
    }

    @Test("strings escaped as JSONSerialization reads them back, within the room counted for them (the cursor checks it in debug builds)")
    func stringsRoundTrip() throws {
        let samples = ["", "plain", "quote \" and \\ backslash", "lines\n\r\ttabs", "\u{0}\u{1}\u{1F}", "é€😀", "\u{7F}</script>",
                       String(repeating: "\"", count: 300), String(repeating: "\u{1}", count: 200)]
        for sample in samples {
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            JSONBytes.appendQuoted(sample, to: &bytes)
            bytes.append(UInt8(ascii: "]"))
            let read = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String]
            #expect(read == [sample])
        }
    }

    @Test("dates outside years 0-9999 are written whole, through Foundation's formatter")
    func farDates() {
        #expect(Self.text { JSONBytes.appendQuoted(Date(timeIntervalSince1970: 253_402_300_800), to: &$0) } == "\"10000-01-01T00:00:00.000Z\"")
        for seconds in [-62_198_755_200.0, 86_400 * 69_000_000_000.0, -86_400 * 69_000_000_000.0] {
            let text = Self.text { JSONBytes.appendQuoted(Date(timeIntervalSince1970: seconds), to: &$0) }
            #expect(text.hasSuffix("T00:00:00.000Z\"") && text.count <= RFC3339.maxLength + 2, "\(text)")
        }
    }
}
