import Foundation

/// JSON values written straight to bytes, for the writers that skip `JSONEncoder` (the feed's renderer,
/// the message codecs): they write hundreds of thousands of values a second. `Cursor` writes each value
/// into memory sized beforehand (the message codecs: no capacity check per byte); the `append` functions
/// put the same bytes at the end of an array.
public enum JSONBytes {
    /// The most bytes a quoted string of `utf8Count` bytes takes: every byte a `\u00XX` escape, and quotes.
    public static func quotedCapacity(utf8Count: Int) -> Int { utf8Count * 6 + 2 }
    /// The most bytes `Cursor.quoted(UUID)`, `quoted(Date)`, and `number(Double)` or `integer(Int)` write.
    public static let quotedUUIDCapacity = 38, quotedDateCapacity = RFC3339.maxLength + 2, numberCapacity = 32

    /// Whether a byte of a string's UTF-8 is written escaped: quotes, backslashes and control characters.
    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    /// Where the next byte goes, in memory the caller sized with the capacities above. Debug builds check
    /// every write against the end of that memory.
    public struct Cursor {
        public private(set) var position: UnsafeMutablePointer<UInt8>
        private let end: UnsafeMutablePointer<UInt8>

        public init(_ memory: UnsafeMutableBufferPointer<UInt8>) {
            position = memory.baseAddress!
            end = position + memory.count
        }

        @inline(__always)
        private mutating func advance(_ count: Int) -> UnsafeMutablePointer<UInt8> {
            assert(end - position >= count, "JSONBytes.Cursor: the memory was sized too small")
            defer { position += count }
            return position
        }

        @inline(__always)
        public mutating func byte(_ value: UInt8) {
            advance(1).initialize(to: value)
        }

        @inline(__always)
        public mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
            guard let base = source.baseAddress else { return }
            advance(source.count).initialize(from: base, count: source.count)
        }

        /// A JSON string literal: quotes, backslashes and control characters escaped, the rest as UTF-8.
        public mutating func quoted(utf8: UnsafeBufferPointer<UInt8>) {
            byte(UInt8(ascii: "\""))
            var plain = 0  // where the run of bytes that need no escape began
            for index in utf8.indices where needsEscape(utf8[index]) {
                bytes(UnsafeBufferPointer(rebasing: utf8[plain..<index]))
                plain = index + 1
                let value = utf8[index]
                byte(UInt8(ascii: "\\"))
                switch value {
                case 0x0A: byte(UInt8(ascii: "n"))
                case 0x0D: byte(UInt8(ascii: "r"))
                case 0x09: byte(UInt8(ascii: "t"))
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(value)
                default:
                    let hex: StaticString = "0123456789abcdef"
                    byte(UInt8(ascii: "u")); byte(UInt8(ascii: "0")); byte(UInt8(ascii: "0"))
                    byte(hex.utf8Start[Int(value >> 4)]); byte(hex.utf8Start[Int(value & 0xF)])
                }
            }
            bytes(UnsafeBufferPointer(rebasing: utf8[plain..<utf8.count]))
            byte(UInt8(ascii: "\""))
        }

        public mutating func quoted(_ value: String) {
            var value = value
            value.withUTF8 { quoted(utf8: $0) }
        }

        /// The UUID quoted, as `uuidString` spells it (upper case), written from its bytes.
        public mutating func quoted(_ value: UUID) {
            byte(UInt8(ascii: "\""))
            value.write(to: advance(36))
            byte(UInt8(ascii: "\""))
        }

        /// The date quoted, as `RFC3339.format` writes it.
        public mutating func quoted(_ value: Date) {
            byte(UInt8(ascii: "\""))
            assert(end - position >= RFC3339.maxLength, "JSONBytes.Cursor: the memory was sized too small")
            position += RFC3339.write(value, to: position)
            byte(UInt8(ascii: "\""))
        }

        public mutating func integer(_ value: Int) {
            if value < 0 { byte(UInt8(ascii: "-")) }
            digits(UInt64(value.magnitude))
        }

        /// Decimal digits, without a sign or leading zeros.
        private mutating func digits(_ value: UInt64) {
            var rest = value, count = 1
            while rest >= 10 {
                rest /= 10
                count += 1
            }
            let start = advance(count)
            rest = value
            for index in (0..<count).reversed() {
                start[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            }
        }

        /// Swift's description: the shortest text that reads back as the same Double; whole numbers (counts,
        /// seconds) without making one (below 1e15 the description is the digits and ".0"). JSON has no NaN
        /// or infinity: those are null.
        public mutating func number(_ value: Double) {
            guard value.isFinite, value.rounded(.towardZero) == value, value.magnitude < 1e15 else {
                var text = value.isFinite ? value.description : "null"
                return text.withUTF8 { bytes($0) }
            }
            if value.sign == .minus { byte(UInt8(ascii: "-")) }
            digits(UInt64(value.magnitude))
            byte(UInt8(ascii: ".")); byte(UInt8(ascii: "0"))
        }
    }

    /// `Cursor.quoted(utf8:)` at the end of `bytes`.
    public static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            // Room for exactly what is written: two more bytes for each short escape, five for a \u00XX.
            var count = utf8.count + 2
            for byte in utf8 where needsEscape(byte) {
                count += byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") ? 1 : 5
            }
            append(capacity: count, to: &bytes) { $0.quoted(utf8: utf8) }
        }
    }

    public static func appendQuoted(_ value: UUID, to bytes: inout [UInt8]) {
        append(capacity: quotedUUIDCapacity, to: &bytes) { $0.quoted(value) }
    }

    public static func appendQuoted(_ value: Date, to bytes: inout [UInt8]) {
        append(capacity: quotedDateCapacity, to: &bytes) { $0.quoted(value) }
    }

    public static func append(_ value: Double, to bytes: inout [UInt8]) {
        append(capacity: numberCapacity, to: &bytes) { $0.number(value) }
    }

    public static func append(_ value: Int, to bytes: inout [UInt8]) {
        append(capacity: numberCapacity, to: &bytes) { $0.integer(value) }
    }

    /// What `write` puts through a cursor, at most `capacity` bytes, written in place at the end of `bytes`.
    public static func append(capacity: Int, to bytes: inout [UInt8], _ write: (inout Cursor) -> Void) {
        bytes.append(addingCapacity: capacity) { span in
            span.withUnsafeMutableBufferPointer { memory, initialized in
                var cursor = Cursor(UnsafeMutableBufferPointer(rebasing: memory[initialized...]))
                write(&cursor)
                initialized = cursor.position - memory.baseAddress!
            }
        }
    }
}
