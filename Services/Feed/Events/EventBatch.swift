import Foundation
import Shared

/// The body of `POST /v1/events`: `{"events": [...]}`, read by a small strict JSON reader (RFC 8259)
/// made for it. Each element is read on its own, so one bad event is rejected with its reason while the
/// rest of the batch goes through; only a body that is not JSON, or has no `events` array, fails whole.
/// `JSONDecoder` was half of a batch's cost in a profile; this reads the same input in a fraction of it.
enum EventBatch {
    static let maxEvents = 500
    static let maxBytes = 1 << 20

    enum Failure: Error, Equatable {
        /// Not JSON at all; the detail says where.
        case malformed(String)
        case notAnObject
        case missingEvents
        case eventsNotAnArray
        /// More than `maxEvents` elements in `events`: reading stopped at the first one past the cap.
        case tooManyEvents
    }

    /// Every element of `events`: the event, or why it cannot be one. Checks of content (time window,
    /// per-type fields) are `TrackingEvent.validationError`'s.
    static func parse(_ body: UnsafeRawBufferPointer) throws(Failure) -> [Result<TrackingEvent, EventRejection>] {
        var reader = JSONReader(body.bindMemory(to: UInt8.self))
        do {
            return try reader.batch()
        } catch {
            switch error {
            case .malformed(let offset, let what): throw .malformed("\(what) at byte \(offset)")
            case .notAnObject: throw .notAnObject
            case .missingEvents: throw .missingEvents
            case .eventsNotAnArray: throw .eventsNotAnArray
            case .tooManyEvents: throw .tooManyEvents
            }
        }
    }
}

struct EventRejection: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The fields of one event object as the reader found them. String values stay where they lie in the body
/// until the event is built, and ids, times and kinds are read from those bytes: a batch of 50 events
/// used to make some 300 short-lived strings.
struct EventFields {
    enum Value {
        case string(JSONString)
        case number(Double)
        /// Present but neither a string nor a number (or null, which counts as absent).
        case otherType
    }

    enum Field: Int, CaseIterable {
        case id, type, deviceId, touristId, occurredAt, platform, osVersion, model, appVersion
        case tourId, poiId, durationSeconds, dwellSeconds, via, url, mediaType

        var name: String { Self.names[rawValue] }

        static let names = ["id", "type", "deviceId", "touristId", "occurredAt", "platform", "osVersion", "model", "appVersion",
                            "tourId", "poiId", "durationSeconds", "dwellSeconds", "via", "url", "mediaType"]

        /// The field a key names, compared as bytes (no string is made for a key).
        static func named(_ key: UnsafeBufferPointer<UInt8>) -> Field? {
            func matches(_ name: StaticString) -> Bool { memcmp(key.baseAddress!, name.utf8Start, key.count) == 0 }
            switch key.count {
            case 2: return matches("id") ? .id : nil
            case 3: return matches("via") ? .via : matches("url") ? .url : nil
            case 4: return matches("type") ? .type : nil
            case 5: return matches("poiId") ? .poiId : matches("model") ? .model : nil
            case 6: return matches("tourId") ? .tourId : nil
            case 8: return matches("deviceId") ? .deviceId : matches("platform") ? .platform : nil
            case 9: return matches("touristId") ? .touristId : matches("osVersion") ? .osVersion : matches("mediaType") ? .mediaType : nil
            case 10: return matches("occurredAt") ? .occurredAt : matches("appVersion") ? .appVersion : nil
            case 12: return matches("dwellSeconds") ? .dwellSeconds : nil
            case 15: return matches("durationSeconds") ? .durationSeconds : nil
            default: return nil
            }
        }
    }

    /// By field; a field given twice keeps its last value; null removes it.
    private var values = InlineArray<16, Value?>(repeating: nil)

    subscript(field: Field) -> Value? {
        get { values[field.rawValue] }
        set { values[field.rawValue] = newValue }
    }

    /// The event these fields make, or the first reason they do not make one.
    func event() throws(EventRejection) -> TrackingEvent {
        guard let id = try uuid(.id) else { throw EventRejection("missing field id") }
        let typeText = try required(.type)
        guard let type = typeText.matching(Self.kinds) else {
            throw EventRejection("unknown type \"\(QueryParameters.shown(typeText.string))\"; known types: "
                                 + TrackingEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let deviceId = try required(.deviceId).string
        guard let occurredAt = try required(.occurredAt).withUTF8({ Timestamps.parse(utf8: $0) }) else {
            throw EventRejection("occurredAt must be an RFC 3339 date-time such as 2025-05-01T14:30:00Z")
        }
        var via: TrackingEvent.Via?
        if let text = try text(.via) {
            guard let value = text.matching(Self.vias) else {
                throw EventRejection("via must be one of " + TrackingEvent.Via.allCases.map(\.rawValue).joined(separator: ", "))
            }
            via = value
        }
        var mediaType: MediaType?
        if let text = try text(.mediaType) {
            guard let value = text.matching(Self.mediaTypes) else {
                throw EventRejection("mediaType must be one of " + MediaType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            mediaType = value
        }
        return TrackingEvent(id: id, type: type, deviceId: deviceId, touristId: try string(.touristId), occurredAt: occurredAt,
                             platform: try string(.platform), osVersion: try string(.osVersion), model: try string(.model),
                             appVersion: try string(.appVersion), tourId: try uuid(.tourId), poiId: try uuid(.poiId),
                             durationSeconds: try number(.durationSeconds), dwellSeconds: try number(.dwellSeconds),
                             via: via, url: try string(.url), mediaType: mediaType)
    }

    private static let kinds = TrackingEvent.Kind.allCases.map { (Array($0.rawValue.utf8), $0) }
    private static let vias = TrackingEvent.Via.allCases.map { (Array($0.rawValue.utf8), $0) }
    private static let mediaTypes = MediaType.allCases.map { (Array($0.rawValue.utf8), $0) }

    private func required(_ field: Field) throws(EventRejection) -> JSONString {
        guard let value = try text(field) else { throw EventRejection("missing field \(field.name)") }
        return value
    }

    private func text(_ field: Field) throws(EventRejection) -> JSONString? {
        switch self[field] {
        case nil: return nil
        case .string(let value): return value
        default: throw EventRejection("\(field.name) must be a string")
        }
    }

    private func string(_ field: Field) throws(EventRejection) -> String? {
        try text(field)?.string
    }

    private func uuid(_ field: Field) throws(EventRejection) -> UUID? {
        guard let text = try text(field) else { return nil }
        guard let value = text.withUTF8({ UUID(bytes: UnsafeRawBufferPointer($0)) }) else { throw EventRejection("\(field.name) must be a UUID") }
        return value
    }

    private func number(_ field: Field) throws(EventRejection) -> Double? {
        switch self[field] {
        case nil: return nil
        case .number(let value): return value
        default: throw EventRejection("\(field.name) must be a number")
        }
    }
}

/// A JSON string the reader found: its bytes in the body when it has no escapes (checked as UTF-8), else
/// the decoded text. Valid only while the body is.
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

    /// The value whose UTF-8 these bytes are, from a table of (UTF-8, value).
    func matching<T>(_ table: [([UInt8], T)]) -> T? {
        withUTF8 { utf8 in
            for (name, value) in table where name.count == utf8.count && name.withUnsafeBufferPointer({ memcmp($0.baseAddress!, utf8.baseAddress!, utf8.count) == 0 }) {
                return value
            }
            return nil
        }
    }
}

/// A strict, non-recursive-beyond-a-limit JSON reader over bytes, for `EventBatch`.
private struct JSONReader {
    enum Failure: Error {
        case malformed(offset: Int, what: String)
        case notAnObject, missingEvents, eventsNotAnArray, tooManyEvents
    }

    /// Nesting deeper than this inside an event is refused rather than followed (no stack exhaustion).
    static let maxDepth = 64

    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func batch() throws(Failure) -> [Result<TrackingEvent, EventRejection>] {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            // Valid JSON of another kind is "not an object"; anything else is malformed.
            try skipValue(depth: 0)
            try expectEnd()
            throw .notAnObject
        }
        offset += 1
        var events: [Result<TrackingEvent, EventRejection>]?
        var sawEventsOfAnotherKind = false
        try members { reader, key throws(Failure) in
            if key.equals("events") {
                if reader.peek() == UInt8(ascii: "[") {
                    events = try reader.eventArray()
                    sawEventsOfAnotherKind = false
                } else {
                    try reader.skipValue(depth: 1)
                    events = nil
                    sawEventsOfAnotherKind = true
                }
            } else {
                try reader.skipValue(depth: 1)
            }
        }
        try expectEnd()
        if sawEventsOfAnotherKind { throw .eventsNotAnArray }
        guard let events else { throw .missingEvents }
        return events
    }

    /// Reads `"key": value` pairs up to the closing brace (the opening one already read), calling
    /// `value` with the reader positioned at each value.
    private mutating func members(_ value: (inout JSONReader, JSONString) throws(Failure) -> Void) throws(Failure) {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            let key = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try value(&self, key)
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw malformed("expected , or } in an object")
            }
        }
    }

    /// Stops at the comma that would start element `maxEvents + 1`: nothing past the cap is read, so a
    /// body of a million tiny elements costs no more than one of `maxEvents`.
    private mutating func eventArray() throws(Failure) -> [Result<TrackingEvent, EventRejection>] {
        offset += 1
        var events: [Result<TrackingEvent, EventRejection>] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            offset += 1
            return events
        }
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "{") {
                events.append(try eventObject())
            } else {
                try skipValue(depth: 1)
                events.append(.failure(EventRejection("an event must be a JSON object")))
            }
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","):
                guard events.count < EventBatch.maxEvents else { throw .tooManyEvents }
            case UInt8(ascii: "]"): return events
            default: throw malformed("expected , or ] in an array")
            }
        }
    }

    /// One element of `events` that is an object: its known fields are kept, the rest read and dropped.
    /// Written out rather than through `members`, as this runs for every event.
    private mutating func eventObject() throws(Failure) -> Result<TrackingEvent, EventRejection> {
        offset += 1
        var fields = EventFields()
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            offset += 1
        } else {
            members: while true {
                skipWhitespace()
                let field = try string().withUTF8 { EventFields.Field.named($0) }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                if let field {
                    fields[field] = try scalar()
                } else {
                    try skipValue(depth: 2)
                }
                skipWhitespace()
                switch next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): break members
                default: throw malformed("expected , or } in an object")
                }
            }
        }
        do {
            return .success(try fields.event())
        } catch {
            return .failure(error)
        }
    }

    /// A field value: a string, a number, nil for null, `.otherType` for anything else (read and dropped).
    private mutating func scalar() throws(Failure) -> EventFields.Value? {
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default:
            try skipValue(depth: 2)
            return .otherType
        }
    }

    private mutating func skipValue(depth: Int) throws(Failure) {
        guard depth <= Self.maxDepth else { throw malformed("nesting deeper than \(Self.maxDepth)") }
        skipWhitespace()
        guard let first = peek() else { throw malformed("unexpected end") }
        switch first {
        case UInt8(ascii: "{"):
            offset += 1
            try members { reader, _ throws(Failure) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            offset += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                offset += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                skipWhitespace()
                switch next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): return
                default: throw malformed("expected , or ] in an array")
                }
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw malformed("unexpected character")
        }
    }

    private mutating func string() throws(Failure) -> JSONString {
        try expect(UInt8(ascii: "\""))
        let start = offset
        // Fast path: no escapes, the bytes stay in the body. Printable ASCII first: nearly every byte,
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

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() throws(Failure) -> Double {
        let start = offset
        if peek() == UInt8(ascii: "-") { offset += 1 }
        guard let first = peek(), isDigit(first) else { throw malformed("invalid number") }
        offset += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            offset += 1
            guard let digit = peek(), isDigit(digit) else { throw malformed("invalid number") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            offset += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
            guard let digit = peek(), isDigit(digit) else { throw malformed("invalid number") }
            skipDigits()
        }
        let digits = UnsafeBufferPointer(rebasing: bytes[start..<offset])
        // Whole numbers of up to 15 digits (durations, dwell times) are exact as Double: read them here.
        if digits.count <= 15, digits.allSatisfy(isDigit) {
            return Double(digits.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) })
        }
        // Out of Double's range reads as ±infinity, which every numeric check then refuses.
        return Double(String(decoding: digits, as: UTF8.self)) ?? .nan
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { offset += 1 }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw malformed("unexpected end") }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] {
            throw malformed("invalid literal")
        }
        offset += count
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard next() == byte else { throw malformed("expected \(Character(Unicode.Scalar(byte)))") }
    }

    private mutating func expectEnd() throws(Failure) {
        skipWhitespace()
        guard offset == bytes.count else { throw malformed("unexpected data after the JSON value") }
    }

    private func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func next() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    private func malformed(_ what: String) -> Failure { .malformed(offset: offset, what: what) }
}
