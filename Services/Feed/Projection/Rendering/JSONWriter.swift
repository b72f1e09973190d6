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

    mutating func beginObject() { begin(UInt8(ascii: "{")) }
    mutating func endObject() { end(UInt8(ascii: "}")) }
    mutating func beginArray() { begin(UInt8(ascii: "[")) }
    mutating func endArray() { end(UInt8(ascii: "]")) }

    /// An array of strings (or of UUIDs, by `uuidString`), as one value.
    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    mutating func uuids(_ values: [UUID]) {
        beginArray()
        for value in values { uuid(value) }
        endArray()
    }

    private mutating func begin(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        hasMember.append(false)
    }

    private mutating func end(_ bracket: UInt8) {
        hasMember.removeLast()
        bytes.append(bracket)
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
        JSONBytes.appendQuoted(value, to: &bytes)
    }

    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// The UUID as `uuidString` spells it (upper case).
    mutating func uuid(_ value: UUID) {
        separate()
        JSONBytes.appendQuoted(value, to: &bytes)
    }

    /// RFC 3339 UTC with milliseconds, as `RFC3339.format` writes it.
    mutating func date(_ value: Date) {
        separate()
        JSONBytes.appendQuoted(value, to: &bytes)
    }

    mutating func number(_ value: Double) {
        separate()
        JSONBytes.append(value, to: &bytes)
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
}

extension Double {
    /// Rounded to `places` decimals, for distances and bearings that need no more.
    func rounded(places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
