import Foundation

/// JSON values written straight to bytes, for the writers that skip `JSONEncoder` (the feed's renderer,
/// the message codecs): they write hundreds of thousands of values a second.
public enum JSONBytes {
    /// A JSON string literal: quotes, backslashes and control characters escaped, the rest as UTF-8.
    public static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy their UTF-8 in one go.
        var value = value
        let plain = value.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        let hex: StaticString = "0123456789abcdef"
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The UUID quoted, as `uuidString` spells it (upper case), written from its bytes.
    public static func appendQuoted(_ value: UUID, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let hex: StaticString = "0123456789ABCDEF"
        // Written into 36 bytes on the stack, then appended at once.
        var text: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            withUnsafeBytes(of: value.uuid) { raw in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = hex.utf8Start[Int(raw[index] >> 4)]
                    out[position + 1] = hex.utf8Start[Int(raw[index] & 0x0F)]
                    position += 2
                }
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: out[0..<36]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The date quoted, as `RFC3339.format` writes it.
    public static func appendQuoted(_ value: Date, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Swift's description: the shortest text that reads back as the same Double. JSON has no NaN or
    /// infinity: those are null.
    public static func append(_ value: Double, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
    }
}
