import Foundation

extension UUID {
    /// A new random (version 4) UUID, as `UUID()` makes, from the standard library's generator: Foundation's
    /// `UUID()` opens, reads and closes /dev/urandom for each one on Linux, a twentieth of catalog's CPU while
    /// it imported a city, where every event's envelope takes one.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// The 36-character form, either case; nil otherwise. What `UUID(uuidString:)` accepts, without its
    /// cost on Linux (it parses with sscanf: an eighth of the feed's CPU under a stream of event batches).
    public init?(bytes text: UnsafeRawBufferPointer) {
        guard text.count == 36, text[8] == 0x2D, text[13] == 0x2D, text[18] == 0x2D, text[23] == 0x2D else { return nil }
        // Where each byte's two hex digits start, dashes skipped; any invalid digit sets a high bit in `invalid`.
        let starts: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var invalid: UInt8 = 0
        withUnsafeBytes(of: starts) { starts in
            withUnsafeMutableBytes(of: &uuid) { raw in
                for output in 0..<16 {
                    let start = starts.load(fromByteOffset: output * MemoryLayout<Int>.stride, as: Int.self)
                    let high = Self.hexValue(text[start]), low = Self.hexValue(text[start + 1])
                    invalid |= high | low
                    raw[output] = high << 4 | (low & 0x0F)
                }
            }
        }
        guard invalid & 0xF0 == 0 else { return nil }
        self.init(uuid: uuid)
    }

    /// `UUID(bytes:)` over a string's UTF-8.
    public init?(text: String) {
        var text = text
        guard let value = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = value
    }

    /// A hex digit's value, or 0xFF.
    private static func hexValue(_ byte: UInt8) -> UInt8 {
        let digit = byte &- 0x30
        if digit < 10 { return digit }
        let letter = (byte | 0x20) &- 0x61
        return letter < 6 ? letter + 10 : 0xFF
    }
}
