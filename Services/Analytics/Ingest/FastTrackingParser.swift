import Foundation
import Shared

/// Reads a `tracking.events` message in one pass over its bytes, for the common case: a JSON object
/// whose strings have no escapes. Anything it is not sure of (an escape, a duplicate key, a long number,
/// a date in another form, malformed JSON) gives nil, and the message goes through JSONDecoder instead,
/// which decides and words any rejection. So this parser only has to be right when it answers.
///
/// Why: JSONDecoder spends about 15 µs on a message here; at tens of thousands of messages a second
/// that alone would take most of a core.
enum FastTrackingParser {
    struct Message {
        var type: String
        var schemaVersion: Int
        var event: TrackingEvent
    }

    static func parse(_ bytes: [UInt8]) -> Message? {
        bytes.withUnsafeBytes { buffer in
            var reader = Reader(bytes: buffer)
            guard let message = reader.envelope() else { return nil }
            reader.skipWhitespace()
            return reader.index == buffer.count ? message : nil
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// The bytes between the quotes of a string without escapes or control characters.
        mutating func rawString() -> Range<Int>? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }

        mutating func string() -> String? {
            guard let range = rawString() else { return nil }
            return String(validating: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        /// `null` (true), or something else left unread (false).
        mutating func null() -> Bool {
            skipWhitespace()
            guard index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
                  bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l") else { return false }
            index += 4
            return true
        }

        /// A number of at most 15 significant digits and no exponent: then mantissa / 10^k is the
        /// correctly rounded double, the same strtod gives. Anything else: nil.
        mutating func number() -> Double? {
            skipWhitespace()
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            var mantissa: Int64 = 0, digits = 0, fraction = 0, seenPoint = false
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte >= 0x30 && byte <= 0x39 {
                    mantissa = mantissa * 10 + Int64(byte - 0x30)
                    digits += 1
                    if seenPoint { fraction += 1 }
                } else if byte == UInt8(ascii: "."), !seenPoint, index > start {
                    seenPoint = true
                } else {
                    break
                }
                index += 1
            }
            guard digits > 0, digits <= 15, !(seenPoint && fraction == 0), index < bytes.count,
                  bytes[index] != UInt8(ascii: "e"), bytes[index] != UInt8(ascii: "E"),
                  !(bytes[start] == 0x30 && index > start + 1 && bytes[start + 1] != UInt8(ascii: ".")) else { return nil }
            let value = Double(mantissa) / Self.powersOfTen[fraction]
            return negative ? -value : value
        }

        static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }

        /// Plain digits, optionally negative: the form an Int has in JSON. Anything else: nil.
        mutating func integer() -> Int? {
            skipWhitespace()
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            let start = index
            var value = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, index - start < 15 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            guard index > start, index < bytes.count, !".eE0123456789".utf8.contains(bytes[index]),
                  !(bytes[start] == 0x30 && index > start + 1) else { return nil }
            return negative ? -value : value
        }

        /// Skips any JSON value (escapes allowed), checking it is well formed; false if it is not.
        mutating func skipValue(depth: Int = 0) -> Bool {
            skipWhitespace()
            guard index < bytes.count, depth < 32 else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") { index += 1; return true }
                    if byte < 0x20 { return false }
                    index += byte == UInt8(ascii: "\\") ? 2 : 1
                }
                return false
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let object = bytes[index] == UInt8(ascii: "{")
                let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                if consume(close) { return true }
                repeat {
                    if object { guard skipValue(depth: depth + 1), consume(UInt8(ascii: ":")) else { return false } }
                    guard skipValue(depth: depth + 1) else { return false }
                } while consume(UInt8(ascii: ","))
                return consume(close)
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return null()
            default:
                // Any number is fine to skip; check only its characters.
                let start = index
                while index < bytes.count, "+-.eE0123456789".utf8.contains(bytes[index]) { index += 1 }
                return index > start
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        func equals(_ range: Range<Int>, _ word: StaticString) -> Bool {
            guard range.count == word.utf8CodeUnitCount else { return false }
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != word.utf8Start[offset] { return false }
            return true
        }

        /// Calls `field` for each key of an object; false on malformed JSON, a duplicate key (keys are
        /// numbered by `field`'s answer, 0 meaning "skip the value"), or when `field` says so (nil).
        mutating func object(_ field: (inout Reader, Range<Int>) -> Int?) -> Bool {
            guard consume(UInt8(ascii: "{")) else { return false }
            if consume(UInt8(ascii: "}")) { return true }
            var seen: UInt32 = 0
            repeat {
                guard let key = rawString(), consume(UInt8(ascii: ":")) else { return false }
                guard let number = field(&self, key) else { return false }
                if number == 0 {
                    guard skipValue() else { return false }
                } else {
                    guard seen & (1 << number) == 0 else { return false }
                    seen |= 1 << number
                }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}"))
        }

        mutating func envelope() -> Message? {
            var type: String?, schemaVersion: Int?, event: TrackingEvent?
            let ok = object { reader, key in
                if reader.equals(key, "type") { type = reader.string(); return type == nil ? nil : 1 }
                if reader.equals(key, "schemaVersion") { schemaVersion = reader.integer(); return schemaVersion == nil ? nil : 2 }
                if reader.equals(key, "data") { event = reader.event(); return event == nil ? nil : 3 }
                return 0
            }
            guard ok, let type, let schemaVersion, let event else { return nil }
            return Message(type: type, schemaVersion: schemaVersion, event: event)
        }

        /// An optional field: null, or a value `read` accepts.
        mutating func optional<T>(_ read: (inout Reader) -> T?) -> T?? {
            if null() { return .some(nil) }
            return read(&self).map { .some($0) }
        }

        mutating func uuid() -> UUID? {
            guard let range = rawString() else { return nil }
            return UUID(bytes: UnsafeRawBufferPointer(rebasing: bytes[range]))
        }

        mutating func date() -> Date? {
            guard let range = rawString() else { return nil }
            return FastRFC3339.parse(UnsafeRawBufferPointer(rebasing: bytes[range]))
        }

        mutating func event() -> TrackingEvent? {
            var id: UUID?, kind: TrackingEvent.Kind?, deviceId: String?, occurredAt: Date?
            var touristId: String?, platform: String?, osVersion: String?, model: String?, appVersion: String?
            var tourId: UUID?, poiId: UUID?, duration: Double?, dwell: Double?, via: TrackingEvent.Via?, url: String?
            var mediaType: MediaType?
            // Reads an optional field into `target`; nil (give up) when present and unreadable.
            func take<T>(_ target: inout T?, _ number: Int, _ reader: inout Reader, _ read: (inout Reader) -> T?) -> Int? {
                guard let value = reader.optional(read) else { return nil }
                target = value
                return number
            }
            let ok = object { reader, key in
                switch key.count {
                case 2 where reader.equals(key, "id"): id = reader.uuid(); return id == nil ? nil : 1
                case 4 where reader.equals(key, "type"):
                    kind = reader.string().flatMap(TrackingEvent.Kind.init(rawValue:)); return kind == nil ? nil : 2
                case 8 where reader.equals(key, "deviceId"): deviceId = reader.string(); return deviceId == nil ? nil : 3
                case 10 where reader.equals(key, "occurredAt"): occurredAt = reader.date(); return occurredAt == nil ? nil : 4
                case 9 where reader.equals(key, "touristId"): return take(&touristId, 5, &reader) { $0.string() }
                case 8 where reader.equals(key, "platform"): return take(&platform, 6, &reader) { $0.string() }
                case 9 where reader.equals(key, "osVersion"): return take(&osVersion, 7, &reader) { $0.string() }
                case 5 where reader.equals(key, "model"): return take(&model, 8, &reader) { $0.string() }
                case 10 where reader.equals(key, "appVersion"): return take(&appVersion, 9, &reader) { $0.string() }
                case 6 where reader.equals(key, "tourId"): return take(&tourId, 10, &reader) { $0.uuid() }
                case 5 where reader.equals(key, "poiId"): return take(&poiId, 11, &reader) { $0.uuid() }
                case 15 where reader.equals(key, "durationSeconds"): return take(&duration, 12, &reader) { $0.number() }
                case 12 where reader.equals(key, "dwellSeconds"): return take(&dwell, 13, &reader) { $0.number() }
                case 3 where reader.equals(key, "via"): return take(&via, 14, &reader) { $0.string().flatMap(TrackingEvent.Via.init(rawValue:)) }
                case 3 where reader.equals(key, "url"): return take(&url, 15, &reader) { $0.string() }
                case 9 where reader.equals(key, "mediaType"):
                    return take(&mediaType, 16, &reader) { $0.string().flatMap(MediaType.init(rawValue:)) }
                default: return 0
                }
            }
            guard ok, let id, let kind, let deviceId, let occurredAt else { return nil }
            return TrackingEvent(id: id, type: kind, deviceId: deviceId, touristId: touristId, occurredAt: occurredAt,
                                 platform: platform, osVersion: osVersion, model: model, appVersion: appVersion,
                                 tourId: tourId, poiId: poiId, durationSeconds: duration, dwellSeconds: dwell,
                                 via: via, url: url, mediaType: mediaType)
        }
    }
}
