import Foundation

/// A strict JSON reader (RFC 8259) over bytes, for the message codecs: it reads in place, makes a string
/// only for text that has escapes or is asked for, and refuses nesting deeper than `maxDepth` rather than
/// following it (no stack exhaustion). Duplicate keys are the callers' to refuse: both codecs do, since readers
/// disagree on which value counts.
public struct JSONReader {
    public struct Failure: Error {
        let offset: Int
        let what: String

        public var description: String { "\(what) at byte \(offset)" }
    }

    static let maxDepth = 64

    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads `"key": value` pairs up to the closing brace (the opening one already read), calling `value`
    /// with the reader positioned at each value, which it must read; `value` answers false to stop there
    /// (then so does this).
    @inline(__always)
    mutating func members(_ value: (inout JSONReader, JSONString) throws(Failure) -> Bool) throws(Failure) -> Bool {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return true
        }
        while true {
            skipWhitespace()
            let key = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            guard try value(&self, key) else { return false }
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return true
            default: throw malformed("expected , or } in an object")
            }
        }
    }

    /// Reads values up to the closing bracket (the opening one already read), calling `element` with the
    /// reader positioned at each; `element` answers false to stop before reading one (nothing of it is read).
    @inline(__always)
    mutating func elements(_ element: (inout JSONReader) throws(Failure) -> Bool) throws(Failure) -> Bool {
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return true
        }
        while true {
            skipWhitespace()
            guard try element(&self) else { return false }
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return true
            default: throw malformed("expected , or ] in an array")
            }
        }
    }

    /// Reads and drops one value; `depth` is the nesting it starts at.
    mutating func skipValue(depth: Int) throws(Failure) {
        guard depth <= Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth)") }
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "{"):
            offset += 1
            _ = try members { reader, _ throws(Failure) in
                try reader.skipValue(depth: depth + 1)
                return true
            }
        case UInt8(ascii: "["):
            offset += 1
            _ = try elements { reader throws(Failure) in
                try reader.skipValue(depth: depth + 1)
                return true
            }
        default: _ = try scalar()
        }
    }

    /// A string, a number, true, false or null (`.null`); anything else is malformed.
    mutating func scalar() throws(Failure) -> JSONScalar {
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case 0 where offset == bytes.count: throw malformed("unexpected end")
        default: throw malformed("unexpected character")
        }
    }

    /// Any value, as a tree.
    mutating func value(depth: Int = 0) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth)") }
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "{"):
            offset += 1
            var members: [(String, JSONValue)] = []
            _ = try self.members { reader, key throws(Failure) in
                members.append((key.string, try reader.value(depth: depth + 1)))
                return true
            }
            return .object(members)
        case UInt8(ascii: "["):
            offset += 1
            var elements: [JSONValue] = []
            _ = try self.elements { reader throws(Failure) in
                elements.append(try reader.value(depth: depth + 1))
                return true
            }
            return .array(elements)
        default:
            switch try scalar() {
            case .string(let text): return .string(text.string)
            case .number(let number): return .number(number)
            case .bool(let bool): return .bool(bool)
            case .null: return .null
            }
        }
    }

    mutating func string() throws(Failure) -> JSONString {
        try expect(UInt8(ascii: "\""))
        let start = offset
        // Fast path: no escapes, the bytes stay where they are. Printable ASCII first: nearly every byte,
        // eight at a time while none of them ends the run.
        var ascii = true
        while offset + 8 <= bytes.count, Self.plainASCII(UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)) {
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte &- 0x20 < 0x60, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                offset += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                offset += 1
                guard ascii || String(validating: raw, as: UTF8.self) != nil else { throw malformed("invalid UTF-8 in a string") }
                return .raw(raw)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw malformed("control character in a string") }
            ascii = false
            offset += 1
        }
        var decoded = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else { throw malformed("invalid UTF-8 in a string") }
                return .decoded(text)
            case UInt8(ascii: "\\"):
                guard let escape = next() else { throw malformed("unexpected end in a string") }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by \u and a low one.
                        guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else { throw malformed("lone surrogate") }
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw malformed("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw malformed("lone surrogate") }
                    decoded.append(contentsOf: String(unicode).utf8)
                default: throw malformed("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw malformed("control character in a string") }
                decoded.append(byte)
            }
        }
        throw malformed("unterminated string")
    }

    /// True when none of the eight bytes is a quote, a backslash, a control character or non-ASCII
    /// (the SWAR zero-byte test: a lane's high bit is set in `(x - 0x01…) & ~x & 0x80…` when the lane is 0,
    /// and the lowest such lane is exact, which is all a yes/no needs).
    private static func plainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        let control = (word &- 0x2020_2020_2020_2020) & ~word & highs  // a lane below 0x20 (or at/above 0x80, caught next)
        return word & highs == 0 && control == 0
            && !hasZeroByte(word ^ (ones &* 0x22)) && !hasZeroByte(word ^ (ones &* 0x5C))
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = next() else { throw malformed("unexpected end in \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw malformed("invalid \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as the nearest Double; out of Double's range
    /// it reads as ±infinity, which every numeric check then refuses.
    mutating func number() throws(Failure) -> Double {
        let start = offset
        let negative = peek() == UInt8(ascii: "-")
        if negative { offset += 1 }
        guard let first = peek(), Self.isDigit(first) else { throw malformed("invalid number") }
        var mantissa: Int64 = 0, digits = 0, fractionDigits = 0
        offset += 1
        mantissa = Int64(first &- UInt8(ascii: "0"))
        digits = 1
        if first != UInt8(ascii: "0") { accumulate(&mantissa, &digits) }
        if peek() == UInt8(ascii: ".") {
            offset += 1
            guard let digit = peek(), Self.isDigit(digit) else { throw malformed("invalid number") }
            let before = digits
            accumulate(&mantissa, &digits)
            fractionDigits = digits - before
        }
        var exponent = false
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            exponent = true
            offset += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
            guard let digit = peek(), Self.isDigit(digit) else { throw malformed("invalid number") }
            while let byte = peek(), Self.isDigit(byte) { offset += 1 }
        }
        // Up to 15 digits without an exponent: both the digits and the power of ten are exact Doubles,
        // so one division is correctly rounded, the value strtod gives.
        if !exponent, digits <= 15 {
            let value = Double(mantissa) / Self.powersOfTen[fractionDigits]
            return negative ? -value : value
        }
        return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)) ?? .nan
    }

    private static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }

    /// Digits from here on, into `mantissa` while it has fewer than 16 (more only count).
    @inline(__always)
    private mutating func accumulate(_ mantissa: inout Int64, _ digits: inout Int) {
        while let byte = peek(), Self.isDigit(byte) {
            if digits < 16 { mantissa = mantissa &* 10 &+ Int64(byte &- UInt8(ascii: "0")) }
            digits += 1
            offset += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw malformed("unexpected end") }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] {
            throw malformed("invalid literal")
        }
        offset += count
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(Failure) {
        guard next() == byte else { throw expected(byte) }
    }

    private func expected(_ byte: UInt8) -> Failure { malformed("expected \(Character(Unicode.Scalar(byte)))") }

    mutating func expectEnd() throws(Failure) {
        skipWhitespace()
        guard offset == bytes.count else { throw malformed("unexpected data after the JSON value") }
    }

    @inline(__always)
    func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

    @inline(__always)
    mutating func next() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    func malformed(_ what: String) -> Failure { Failure(offset: offset, what: what) }
}

/// A JSON string the reader found: its bytes in the input when it has no escapes (checked as UTF-8), else
/// the decoded text. Valid only while the input is.
enum JSONString {
    case raw(UnsafeBufferPointer<UInt8>)
    case decoded(String)

    func withUTF8<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        switch self {
        case .raw(let bytes): return body(bytes)
        case .decoded(var text): return text.withUTF8(body)
        }
    }

    var string: String {
        switch self {
        case .raw(let bytes): String(decoding: bytes, as: UTF8.self)
        case .decoded(let text): text
        }
    }

    func equals(_ text: StaticString) -> Bool {
        withUTF8 { $0.count == text.utf8CodeUnitCount && ($0.isEmpty || memcmp($0.baseAddress!, text.utf8Start, $0.count) == 0) }
    }
}

enum JSONScalar {
    case string(JSONString)
    case number(Double)
    case bool(Bool)
    case null
}

/// A whole JSON value. Object members keep their order and any duplicate keys, as written.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// Reads one JSON document (whitespace around it allowed, nothing else), or throws why it is not one.
    public static func read(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONReader.Failure) in
            var reader = JSONReader(buffer)
            let value = try reader.value()
            try reader.expectEnd()
            return value
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b || a.isNaN && b.isNaN
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}

extension JSONReader.Failure: CustomStringConvertible {}
