import NIOCore
import Synchronization

/// The suite's `X-Request-Id` rule, for `RequestIdMiddleware` and for answers made beside the router (the
/// feed's pipeline): the caller's id when it is sane (1 to 64 ASCII letters, digits and dashes), else a
/// new one, unique in this process and unlikely to repeat across processes (a random 64-bit prefix and a
/// counter, in hex).
public enum RequestId {
    public static func id(given: String?) -> String {
        if let given, isSane(given) { return given }
        var buffer = ByteBuffer()
        write(given: nil, to: &buffer)
        return String(buffer: buffer)
    }

    /// `id(given:)`, written at the end of `buffer`: the feed's pipeline writes one per answer.
    public static func write(given: String?, to buffer: inout ByteBuffer) {
        if let given, isSane(given) {
            buffer.writeString(given)
            return
        }
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        buffer.writeString(prefix)
        buffer.writeInteger(UInt8(ascii: "-"))
        let digits = max(1, (UInt64.bitWidth - number.leadingZeroBitCount + 3) / 4)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: digits) { out in
            for index in 0..<digits {
                let nibble = UInt8(truncatingIfNeeded: number >> UInt64(4 * (digits - 1 - index))) & 0xF
                out[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return digits
        }
    }

    public static func isSane(_ given: String) -> Bool {
        !given.isEmpty && given.utf8.count <= 64 && given.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x2D
        }
    }

    private static let prefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private static let counter = Atomic<UInt64>(0)
}
