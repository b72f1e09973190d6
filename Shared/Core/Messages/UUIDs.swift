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
    /// Eight digits at a time and without branches per digit: ids are random, so a branch on whether a digit
    /// is a letter is mispredicted about once per byte.
    public init?(bytes text: UnsafeRawBufferPointer) {
        guard text.count == 36, text[8] == 0x2D, text[13] == 0x2D, text[18] == 0x2D, text[23] == 0x2D else { return nil }
        let base = text.baseAddress!
        func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        func half(_ offset: Int) -> UInt64 { UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) }
        // The 32 digits as four words of eight: 8, 4+4, 4+4 (across the dashes), and the last 8 of the 12.
        guard let first = Self.hexWord(word(0)), let second = Self.hexWord(half(9) | half(14) << 32),
              let third = Self.hexWord(half(19) | half(24) << 32), let fourth = Self.hexWord(word(28)) else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { raw in
            raw.storeBytes(of: first.littleEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: second.littleEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: third.littleEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: fourth.littleEndian, toByteOffset: 12, as: UInt32.self)
        }
        self.init(uuid: uuid)
    }

    /// Eight hex digits (the first in the lowest byte) as four bytes (the first digit pair in the lowest),
    /// or nil when any byte is not a hex digit.
    @inline(__always)
    private static func hexWord(_ word: UInt64) -> UInt32? {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs = ones &* 0x80
        // With every lane below 0x80, `(x + (0x80 - low)) & ~(x + (0x7F - high))` sets a lane's high bit
        // exactly when low <= x <= high; no lane carries into the next.
        let lower = word | (ones &* 0x20)
        let digit = (word &+ ones &* (0x80 - 0x30)) & ~(word &+ ones &* (0x7F - 0x39))
        let letter = (lower &+ ones &* (0x80 - 0x61)) & ~(lower &+ ones &* (0x7F - 0x66))
        guard word & highs == 0, (digit | letter) & highs == highs else { return nil }
        // A digit's value is its low nibble, a letter's (either case, 0x4x or 0x6x) its low nibble plus 9.
        let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        // Each lane joined with the next (its high nibble, then it), and the even lanes gathered.
        let pairs = (nibbles << 4 | nibbles >> 8) & 0x00FF_00FF_00FF_00FF
        let gathered = (pairs | pairs >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: gathered | gathered >> 16)
    }

    /// `UUID(bytes:)` over a string's UTF-8.
    public init?(text: String) {
        var text = text
        guard let value = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = value
    }

    /// The 36-character form as `uuidString` spells it (upper case), written to the 36 bytes at `out`: four
    /// bytes of the UUID at a time, each to eight digits without a branch.
    public func write(to out: UnsafeMutableRawPointer) {
        withUnsafeBytes(of: uuid) { raw in
            func digits(_ offset: Int) -> UInt64 { Self.hexDigits(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) }
            let first = digits(0), second = digits(4), third = digits(8), fourth = digits(12)
            out.storeBytes(of: first.littleEndian, toByteOffset: 0, as: UInt64.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: second).littleEndian, toByteOffset: 9, as: UInt32.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: second >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: third).littleEndian, toByteOffset: 19, as: UInt32.self)
            out.storeBytes(of: UInt32(truncatingIfNeeded: third >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
            out.storeBytes(of: fourth.littleEndian, toByteOffset: 28, as: UInt64.self)
            for dash in [8, 13, 18, 23] { out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: dash, as: UInt8.self) }
        }
    }

    /// Four bytes (the first in the lowest) as eight upper-case hex digits (the first in the lowest byte).
    @inline(__always)
    private static func hexDigits(_ bytes: UInt32) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Each byte to the even lane of its own pair of lanes, then its high nibble there and its low one next.
        var spread = UInt64(bytes)
        spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
        spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
        let nibbles = (spread >> 4) & 0x000F_000F_000F_000F | (spread & 0x000F_000F_000F_000F) << 8
        // '0' + n, and 7 more for A-F: a lane's high bit is set in n + 0x76 exactly when n >= 10.
        let letters = ((nibbles &+ ones &* 0x76) >> 7) & ones
        return nibbles &+ ones &* 0x30 &+ letters &* 7
    }
}
