import Foundation
import Shared

/// Writes the `tracking.events` message for an event: the suite's envelope (`Envelope<TrackingEvent>`,
/// read back by `EnvelopeDecoder`) with the event as `data`. The envelope's id is the event's id, so a
/// phone's retry and a broker redelivery dedupe the same way downstream. Written by hand, keys as
/// literal bytes in sorted order, because the feed encodes over a hundred thousand a second; a test
/// checks it decodes to the same value.
enum TrackingEnvelope {
    static let source = "feed"

    static func encode(_ event: TrackingEvent) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(480)
        func literal(_ text: StaticString) {
            bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        func string(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            literal(key)
            JSONWriter.appendQuoted(value, to: &bytes)
        }
        func uuid(_ key: StaticString, _ value: UUID?) {
            guard let value else { return }
            literal(key)
            JSONWriter.appendQuoted(value, to: &bytes)
        }
        func number(_ key: StaticString, _ value: Double?) {
            guard let value else { return }
            literal(key)
            // Validation admits finite values only; Swift's description reads back as the same Double.
            bytes.append(contentsOf: value.description.utf8)
        }
        func date(_ key: StaticString, _ value: Date) {
            literal(key)
            bytes.append(UInt8(ascii: "\""))
            Timestamps.append(value, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }

        // appVersion is the only key that sorts before deviceId, which every event has: it carries the
        // comma, and every key after deviceId starts with one.
        literal(#"{"data":{"#)
        if let appVersion = event.appVersion {
            string(#""appVersion":"#, appVersion)
            literal(",")
        }
        string(#""deviceId":"#, event.deviceId)
        number(#","durationSeconds":"#, event.durationSeconds)
        number(#","dwellSeconds":"#, event.dwellSeconds)
        uuid(#","id":"#, event.id)
        string(#","mediaType":"#, event.mediaType?.rawValue)
        string(#","model":"#, event.model)
        date(#","occurredAt":"#, event.occurredAt)
        string(#","osVersion":"#, event.osVersion)
        string(#","platform":"#, event.platform)
        uuid(#","poiId":"#, event.poiId)
        uuid(#","tourId":"#, event.tourId)
        string(#","touristId":"#, event.touristId)
        string(#","type":"#, event.type.rawValue)
        string(#","url":"#, event.url)
        string(#","via":"#, event.via?.rawValue)
        uuid(#"},"id":"#, event.id)
        date(#","occurredAt":"#, event.occurredAt)
        literal(#","schemaVersion":"#)
        bytes.append(contentsOf: String(Envelope<TrackingEvent>.currentSchemaVersion).utf8)
        string(#","source":"#, source)
        string(#","type":"#, event.type.rawValue)
        literal("}")
        return bytes
    }
}
