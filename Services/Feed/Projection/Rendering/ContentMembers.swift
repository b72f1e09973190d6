import Foundation
import Shared

extension JSONWriter {
    /// Writes `content`'s members into the object open here, as its `Encodable` conformance names and orders
    /// them: the feed's detail answers carry a record's content with each key spelled once, in the content type,
    /// and add what the feed works out (ids, versions, places by name) after it. An absent optional is `null` at
    /// this level, as the feed's contract has always written it, and left out in nested values, as the
    /// catalog's codec does. `except` names members the caller writes its own way.
    mutating func members<Content: Encodable>(of content: Content, except skipped: Set<String> = []) {
        let output = ContentMemberEncoder.Output(writer: self)
        self = JSONWriter(capacity: 0)
        defer { self = output.writer }
        // The content types' conformances write values only; none of them throws.
        let encoder = ContentMemberEncoder(output: output, skipped: skipped, depth: 0)
        try? content.encode(to: encoder)
        encoder.close()
    }
}

/// An `Encoder` that streams into a `JSONWriter` instead of building a tree: each value is written when it is
/// encoded, and the container a nested value opened is closed when its `encode(to:)` returns. A container asked
/// for with `nestedContainer` is closed before its parent's next member (streaming cannot go back to it).
private final class ContentMemberEncoder: Encoder {
    final class Output {
        var writer: JSONWriter
        init(writer: JSONWriter) { self.writer = writer }
    }

    private enum Opened { case nothing, object, array }

    let output: Output
    let skipped: Set<String>
    /// 0: the members of the object the caller opened.
    let depth: Int
    private var opened = Opened.nothing
    private var children: [ContentMemberEncoder] = []
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(output: Output, skipped: Set<String>, depth: Int) {
        self.output = output
        self.skipped = skipped
        self.depth = depth
    }

    func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
        if depth > 0, opened == .nothing {
            output.writer.beginObject()
            opened = .object
        }
        return KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if opened == .nothing {
            output.writer.beginArray()
            opened = .array
        }
        return Unkeyed(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }

    /// Deeper than any content type goes; a conformance that keeps handing itself down ends here as null.
    static let maximumDepth = 16

    /// One value: the leaves directly, anything else through its own conformance one level down.
    func write<Value: Encodable>(_ value: Value) {
        switch value {
        case let text as String: output.writer.string(text)
        case let flag as Bool: output.writer.bool(flag)
        case let id as UUID: output.writer.uuid(id)
        case let date as Date: output.writer.date(date)
        case let url as URL: output.writer.string(url.absoluteString)
        case let texts as [String]: output.writer.strings(texts)
        case let number as any BinaryInteger:
            if let exact = Int(exactly: number) { output.writer.number(exact) } else { output.writer.raw(Array(String(describing: number).utf8)) }
        case let number as any BinaryFloatingPoint: output.writer.number(Double(number))
        case _ where depth >= Self.maximumDepth: output.writer.null()
        default:
            let nested = ContentMemberEncoder(output: output, skipped: [], depth: depth + 1)
            try? value.encode(to: nested)
            nested.close()
        }
    }

    /// A nested container, open until its parent's next member.
    func child() -> ContentMemberEncoder {
        let child = ContentMemberEncoder(output: output, skipped: [], depth: depth + 1)
        children.append(child)
        return child
    }

    func closeChildren() {
        for child in children.reversed() { child.close() }
        children.removeAll()
    }

    func close() {
        closeChildren()
        switch opened {
        case .nothing: break
        case .object: output.writer.endObject()
        case .array: output.writer.endArray()
        }
        opened = .nothing
    }

    func include(_ key: some CodingKey) -> Bool { depth > 0 || !skipped.contains(key.stringValue) }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ContentMemberEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) {
            guard encoder.include(key) else { return }
            encoder.closeChildren()
            encoder.output.writer.key(dynamic: key.stringValue)
            encoder.output.writer.null()
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {
            guard encoder.include(key) else { return }
            encoder.closeChildren()
            encoder.output.writer.key(dynamic: key.stringValue)
            encoder.write(value)
        }

        /// Absent: `null` in the caller's object, left out below it.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) { encodeIfPresent(value, key) }

        // The synthesized conformances call these overloads; each goes to the generic one.
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) { encodeIfPresent(value as String?, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) { encodeIfPresent(value as Int?, key) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) { encodeIfPresent(value as Double?, key) }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) { encodeIfPresent(value as Bool?, key) }
        private mutating func encodeIfPresent<T: Encodable>(_ value: T?, _ key: Key) {
            if let value { encode(value, forKey: key) } else if encoder.depth == 0 { encodeNil(forKey: key) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            encoder.closeChildren()
            encoder.output.writer.key(dynamic: key.stringValue)
            return encoder.child().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.closeChildren()
            encoder.output.writer.key(dynamic: key.stringValue)
            return encoder.child().unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey _: Key) -> any Encoder { encoder }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let encoder: ContentMemberEncoder
        var codingPath: [any CodingKey] { [] }
        var count = 0

        mutating func encodeNil() {
            encoder.closeChildren()
            encoder.output.writer.null()
            count += 1
        }

        mutating func encode<T: Encodable>(_ value: T) {
            encoder.closeChildren()
            encoder.write(value)
            count += 1
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            encoder.closeChildren()
            count += 1
            return encoder.child().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            encoder.closeChildren()
            count += 1
            return encoder.child().unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { encoder }
    }

    private struct Single: SingleValueEncodingContainer {
        let encoder: ContentMemberEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() { encoder.output.writer.null() }
        mutating func encode<T: Encodable>(_ value: T) { encoder.write(value) }
    }
}
