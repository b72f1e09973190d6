import Foundation
import Shared

/// The body of `POST /v1/events`: `{"events": [...]}`. Each element decodes on its own, so one bad event
/// is rejected with its reason while the rest of the batch goes through; only a body that is not JSON,
/// or has no `events` array, fails as a whole.
struct EventBatch: Decodable {
    let events: [EventCandidate]

    static let maxEvents = 500
    static let maxBytes = 1 << 20
}

/// One element of a batch: a valid-looking `TrackingEvent`, or the reason it could not be read.
/// Checks of content (time window, per-type fields) are `TrackingEvent.validationError`'s.
struct EventCandidate: Decodable {
    let event: Result<TrackingEvent, EventRejection>

    private enum Field: String, CodingKey {
        case id, type, deviceId, touristId, occurredAt, platform, osVersion, model, appVersion
        case tourId, poiId, durationSeconds, dwellSeconds, via, url, mediaType
    }

    init(from decoder: any Decoder) {
        do {
            event = .success(try Self.read(decoder))
        } catch let rejection as EventRejection {
            event = .failure(rejection)
        } catch {
            event = .failure(EventRejection(JSONCoding.describe(error)))
        }
    }

    private static func read(_ decoder: any Decoder) throws -> TrackingEvent {
        guard let fields = try? decoder.container(keyedBy: Field.self) else {
            throw EventRejection("an event must be a JSON object")
        }
        guard let id = try uuid(fields, .id) else { throw EventRejection("missing field id") }
        let typeName = try requiredString(fields, .type)
        guard let type = TrackingEvent.Kind(rawValue: typeName) else {
            throw EventRejection("unknown type \"\(QueryParameters.shown(typeName))\"; known types: "
                                 + TrackingEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let deviceId = try requiredString(fields, .deviceId)
        let occurredText = try requiredString(fields, .occurredAt)
        guard let occurredAt = RFC3339.parse(occurredText) else {
            throw EventRejection("occurredAt must be an RFC 3339 date-time such as 2025-05-01T14:30:00Z")
        }
        var via: TrackingEvent.Via?
        if let text = try string(fields, .via) {
            guard let value = TrackingEvent.Via(rawValue: text) else {
                throw EventRejection("via must be one of " + TrackingEvent.Via.allCases.map(\.rawValue).joined(separator: ", "))
            }
            via = value
        }
        var mediaType: MediaType?
        if let text = try string(fields, .mediaType) {
            guard let value = MediaType(rawValue: text) else {
                throw EventRejection("mediaType must be one of " + MediaType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            mediaType = value
        }
        return TrackingEvent(id: id, type: type, deviceId: deviceId, touristId: try string(fields, .touristId), occurredAt: occurredAt,
                             platform: try string(fields, .platform), osVersion: try string(fields, .osVersion),
                             model: try string(fields, .model), appVersion: try string(fields, .appVersion),
                             tourId: try uuid(fields, .tourId), poiId: try uuid(fields, .poiId),
                             durationSeconds: try number(fields, .durationSeconds), dwellSeconds: try number(fields, .dwellSeconds),
                             via: via, url: try string(fields, .url), mediaType: mediaType)
    }

    private static func requiredString(_ fields: KeyedDecodingContainer<Field>, _ field: Field) throws -> String {
        guard let value = try string(fields, field) else { throw EventRejection("missing field \(field.rawValue)") }
        return value
    }

    /// The field's string; nil when absent or null.
    private static func string(_ fields: KeyedDecodingContainer<Field>, _ field: Field) throws -> String? {
        guard fields.contains(field), (try? fields.decodeNil(forKey: field)) == false else { return nil }
        guard let value = try? fields.decode(String.self, forKey: field) else {
            throw EventRejection("\(field.rawValue) must be a string")
        }
        return value
    }

    private static func uuid(_ fields: KeyedDecodingContainer<Field>, _ field: Field) throws -> UUID? {
        guard let text = try string(fields, field) else { return nil }
        guard let value = UUID(uuidString: text) else { throw EventRejection("\(field.rawValue) must be a UUID") }
        return value
    }

    private static func number(_ fields: KeyedDecodingContainer<Field>, _ field: Field) throws -> Double? {
        guard fields.contains(field), (try? fields.decodeNil(forKey: field)) == false else { return nil }
        guard let value = try? fields.decode(Double.self, forKey: field) else {
            throw EventRejection("\(field.rawValue) must be a number")
        }
        return value
    }
}

struct EventRejection: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
