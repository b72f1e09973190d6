import Foundation
import Shared

/// Appends JSON straight to a byte array. The feed renders every response once per change and some per
/// request (nearby, search), so it writes bytes directly instead of going through `JSONEncoder`.
/// Callers write object members in sorted key order, the suite's convention for stable bytes.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Per open container: whether it has a member yet (so the next one needs a comma).
    private var hasMember: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        hasMember.append(false)
    }

    mutating func endObject() {
        hasMember.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        hasMember.append(false)
    }

    mutating func endArray() {
        hasMember.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &bytes)
    }

    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// The UUID as `uuidString` spells it (upper case), written from its bytes.
    mutating func uuid(_ value: UUID) {
        separate()
        Self.appendQuoted(value, to: &bytes)
    }

    static func appendQuoted(_ value: UUID, to bytes: inout [UInt8]) {
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

    /// RFC 3339 UTC with milliseconds, as `RFC3339.format` writes it.
    mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Timestamps.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func number(_ value: Double) {
        separate()
        // Swift's description is the shortest text that reads back as the same Double; JSON has no NaN.
        bytes.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
    }

    mutating func number(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func number(_ value: Int?) {
        if let value { number(value) } else { null() }
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Appends already-encoded JSON members or values as they are (the caller keeps them valid).
    mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasMember.indices.last else { return }
        if hasMember[last] { bytes.append(UInt8(ascii: ",")) }
        hasMember[last] = true
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, the rest as UTF-8.
    static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
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
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension Double {
    /// Rounded to `places` decimals, for distances and bearings that need no more.
    func rounded(places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
