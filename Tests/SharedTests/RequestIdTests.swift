import NIOCore
import Shared
import Testing

@Suite("X-Request-Id")
struct RequestIdTests {
    @Test("a sane id is kept, written or returned")
    func keepsSaneIds() {
        for given in ["abc-123", "A", String(repeating: "f", count: 64)] {
            #expect(RequestId.id(given: given) == given)
            var buffer = ByteBuffer(string: "x")
            RequestId.write(given: given, to: &buffer)
            #expect(String(buffer: buffer) == "x" + given)
        }
    }

    @Test("an insane or missing id is replaced by prefix-counter in hex, one higher each time")
    func makesNewIds() throws {
        var ids: [String] = []
        for given in [nil, "", "a b", "ü", String(repeating: "f", count: 65), "x\r\nSet-Cookie: y"] {
            ids.append(RequestId.id(given: given))
            var buffer = ByteBuffer()
            RequestId.write(given: given, to: &buffer)
            ids.append(String(buffer: buffer))
        }
        let parts = ids.map { $0.split(separator: "-") }
        for part in parts {
            #expect(part.count == 2)
            #expect(part.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isHexDigit) && $0.lowercased() == $0 })
            #expect(part.count == 2 && !part[1].hasPrefix("0"), "the counter in hex has no leading zeros")
        }
        #expect(Set(parts.map { $0[0] }).count == 1)
        let counters = try parts.map { try #require(UInt64($0[1], radix: 16)) }
        // Other tests make ids meanwhile (the counter is the process's): never repeated, always rising.
        #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 < $1 })
    }
}
