import Foundation
import Shared

/// Writes the `tracking.events` message for an event: the suite's envelope (`Envelope<TrackingEvent>`,
/// read back by `EnvelopeDecoder`) with the event as `data`. The envelope's id is the event's id, so a
/// phone's retry and a broker redelivery dedupe the same way downstream. Written by hand because the
/// feed encodes tens of thousands per second; a test checks it decodes to the same value.
enum TrackingEnvelope {
    static let source = "feed"

    static func encode(_ event: TrackingEvent) -> [UInt8] {
        var json = JSONWriter(capacity: 512)
        json.beginObject()
        json.key("data")
        json.beginObject()
        if let value = event.appVersion { json.key("appVersion"); json.string(value) }
        json.key("deviceId"); json.string(event.deviceId)
        if let value = event.durationSeconds { json.key("durationSeconds"); json.number(value) }
        if let value = event.dwellSeconds { json.key("dwellSeconds"); json.number(value) }
        json.key("id"); json.uuid(event.id)
        if let value = event.mediaType { json.key("mediaType"); json.string(value.rawValue) }
        if let value = event.model { json.key("model"); json.string(value) }
        json.key("occurredAt"); json.date(event.occurredAt)
        if let value = event.osVersion { json.key("osVersion"); json.string(value) }
        if let value = event.platform { json.key("platform"); json.string(value) }
        if let value = event.poiId { json.key("poiId"); json.uuid(value) }
        if let value = event.tourId { json.key("tourId"); json.uuid(value) }
        if let value = event.touristId { json.key("touristId"); json.string(value) }
        json.key("type"); json.string(event.type.rawValue)
        if let value = event.url { json.key("url"); json.string(value) }
        if let value = event.via { json.key("via"); json.string(value.rawValue) }
        json.endObject()
        json.key("id"); json.uuid(event.id)
        json.key("occurredAt"); json.date(event.occurredAt)
        json.key("schemaVersion"); json.number(Envelope<TrackingEvent>.currentSchemaVersion)
        json.key("source"); json.string(source)
        json.key("type"); json.string(event.type.rawValue)
        json.endObject()
        return json.bytes
    }
}
