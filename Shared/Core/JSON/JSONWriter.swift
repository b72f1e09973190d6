import Foundation

/// Appends JSON straight to a byte array, for the writers that skip `JSONEncoder`: the feed renders every
/// response once per change and some per request (nearby, search), and the message codecs write a city's
/// worth of content at once. Callers write object members in a fixed order (sorted keys, or a content type's
/// coding keys), the suite's convention for stable bytes. Inlinable: the feed's renderers call it for every value they write.
public struct JSONWriter {
    /// What has been written.
    public var bytes: [UInt8] { output }
    @usableFromInline var output: [UInt8] = []
    /// Per open container: whether it has a member yet (so the next one needs a comma).
    @usableFromInline var hasMember: [Bool] = []
    @usableFromInline var afterKey = false

    @inlinable
    public init(capacity: Int = 256) {
        output.reserveCapacity(capacity)
    }

    @inlinable
    public mutating func beginObject() { begin(UInt8(ascii: "{")) }
    @inlinable
    public mutating func endObject() { end(UInt8(ascii: "}")) }
    @inlinable
    public mutating func beginArray() { begin(UInt8(ascii: "[")) }
    @inlinable
    public mutating func endArray() { end(UInt8(ascii: "]")) }

    /// An array of strings (or of UUIDs, by `uuidString`), as one value.
    @inlinable
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// An array of objects, one per element, `members` writing each one's keys and values.
    @inlinable
    public mutating func objects<Elements: Sequence>(_ elements: Elements, _ members: (inout JSONWriter, Elements.Element) -> Void) {
        beginArray()
        for element in elements {
            beginObject()
            members(&self, element)
            endObject()
        }
        endArray()
    }

    @inlinable
    public mutating func uuids(_ values: [UUID]) {
        beginArray()
        for value in values { uuid(value) }
        endArray()
    }

    @inlinable
    mutating func begin(_ bracket: UInt8) {
        separate()
        output.append(bracket)
        hasMember.append(false)
    }

    @inlinable
    mutating func end(_ bracket: UInt8) {
        hasMember.removeLast()
        output.append(bracket)
    }

    @inlinable
    public mutating func key(_ name: StaticString) {
        separate()
        output.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { output.append(contentsOf: $0) }
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// A key known only at run time (a `CodingKey`'s name), escaped as any string.
    public mutating func key(dynamic name: String) {
        separate()
        JSONBytes.appendQuoted(name, to: &output)
        output.append(UInt8(ascii: ":"))
        afterKey = true
    }

    @inlinable
    public mutating func string(_ value: String) {
        separate()
        JSONBytes.appendQuoted(value, to: &output)
    }

    @inlinable
    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// The UUID as `uuidString` spells it (upper case).
    @inlinable
    public mutating func uuid(_ value: UUID) {
        separate()
        JSONBytes.appendQuoted(value, to: &output)
    }

    /// RFC 3339 UTC with milliseconds, as `RFC3339.format` writes it.
    @inlinable
    public mutating func date(_ value: Date) {
        separate()
        JSONBytes.appendQuoted(value, to: &output)
    }

    @inlinable
    public mutating func number(_ value: Double) {
        separate()
        JSONBytes.append(value, to: &output)
    }

    @inlinable
    public mutating func number(_ value: Int) {
        separate()
        JSONBytes.append(value, to: &output)
    }

    @inlinable
    public mutating func number(_ value: Int?) {
        if let value { number(value) } else { null() }
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separate()
        output.append(contentsOf: (value ? "true" : "false").utf8)
    }

    @inlinable
    public mutating func null() {
        separate()
        output.append(contentsOf: "null".utf8)
    }

    /// Appends already-encoded JSON members or values as they are (the caller keeps them valid).
    @inlinable
    public mutating func raw(_ json: [UInt8]) {
        separate()
        output.append(contentsOf: json)
    }

    @inlinable
    mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasMember.indices.last else { return }
        if hasMember[last] { output.append(UInt8(ascii: ",")) }
        hasMember[last] = true
    }
}
