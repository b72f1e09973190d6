import Foundation
import Shared

/// Turns a `tracking.events` message into a `TrackingEvent`, or says why it cannot be counted.
///
/// One decode per message: the envelope and its event in one pass (EnvelopeDecoder would parse the bytes
/// twice), with a date parser for the suite's own RFC 3339 form that skips Foundation's general one. Both
/// matter at tens of thousands of messages a second.
enum TrackingMessageDecoder {
    enum Outcome: Sendable {
        case event(TrackingEvent)
        case rejected(Rejection)
    }

    struct Rejection: Error, Sendable {
        enum Kind: String, Sendable {
            /// Not JSON, not an envelope, or not a tracking event (unknown type, wrong field types).
            case undecodable
            /// Decodes, but breaks the contract (a missing field for its type, a value out of range).
            case invalid
        }

        let kind: Kind
        let reason: String
    }

    /// The envelope with only the fields analytics reads.
    private struct Message: Decodable {
        let type: String
        let schemaVersion: Int
        let data: TrackingEvent
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = FastRFC3339.parse(text) ?? RFC3339.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 date-time: \(text)")
            }
            return date
        }
        return decoder
    }()

    static func decode(_ bytes: [UInt8]) -> Outcome {
        let type: String, schemaVersion: Int, event: TrackingEvent
        if let message = FastTrackingParser.parse(bytes) {
            (type, schemaVersion, event) = (message.type, message.schemaVersion, message.event)
        } else {
            do {
                let message = try decoder.decode(Message.self, from: Data(bytes))
                (type, schemaVersion, event) = (message.type, message.schemaVersion, message.data)
            } catch {
                // A newer schema may have changed the event's shape: then name the version, not a field.
                do { _ = try EnvelopeDecoder.header(bytes) } catch { return reject(.undecodable, error.description) }
                return reject(.undecodable, "undecodable message: \(JSONCoding.describe(error))")
            }
        }
        guard (1...Envelope<Int>.currentSchemaVersion).contains(schemaVersion) else {
            return reject(.undecodable, EnvelopeError.unsupportedSchemaVersion(schemaVersion).description)
        }
        guard type == event.type.rawValue else {
            return reject(.invalid, "envelope type \(type) does not match event type \(event.type.rawValue)")
        }
        // The feed checked the event's age when it accepted it; judged again now, a replay or a long lag
        // would throw away events that were valid. So every rule but the age window applies here.
        if let reason = event.validationError(now: event.occurredAt) {
            return reject(.invalid, reason)
        }
        // Postgres text cannot hold NUL: such an event could never be stored, and retrying its batch
        // forever would stop the ingest behind it.
        for (name, value) in [("deviceId", event.deviceId), ("touristId", event.touristId), ("platform", event.platform),
                              ("osVersion", event.osVersion), ("model", event.model), ("appVersion", event.appVersion), ("url", event.url)]
        where value?.utf8.contains(0) == true {
            return reject(.invalid, "\(name) must not contain NUL characters")
        }
        return .event(event)
    }

    private static func reject(_ kind: Rejection.Kind, _ reason: String) -> Outcome {
        .rejected(Rejection(kind: kind, reason: reason))
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the form the suite writes (RFC3339.format), to the same
/// millisecond-rounded Date as `RFC3339.parse`. Anything else gives nil and goes to the general parser.
enum FastRFC3339 {
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> Date? {
        guard bytes.count >= 20, bytes[bytes.count - 1] == UInt8(ascii: "Z"), bytes[4] == UInt8(ascii: "-"),
              bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":") else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let digit = Int(bytes[index]) &- 48
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), day >= 1, day <= Day.daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var milliseconds = 0.0
        if bytes.count > 20 {
            // ".fraction" up to the Z: rounded to milliseconds, as RFC3339.parse does.
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            var fraction = 0.0
            var scale = 0.1
            for index in 20..<(bytes.count - 1) {
                let digit = Int(bytes[index]) &- 48
                guard digit >= 0 && digit <= 9 else { return nil }
                fraction += Double(digit) * scale
                scale /= 10
            }
            milliseconds = (fraction * 1_000).rounded()
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = Day.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
        return Date(timeIntervalSince1970: (Double(seconds * 1_000) + milliseconds) / 1_000)
    }
}
