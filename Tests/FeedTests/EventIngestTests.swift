import Foundation
import Shared
import Testing
@testable import Feed

@Suite("Tracking event batches")
struct EventBatchTests {
    func candidates(_ json: String) throws -> [Result<TrackingEvent, EventRejection>] {
        try JSONDecoder().decode(EventBatch.self, from: Data(json.utf8)).events.map(\.event)
    }

    func reason(_ result: Result<TrackingEvent, EventRejection>, now: Date = Date()) -> String? {
        switch result {
        case .failure(let rejection): rejection.reason
        case .success(let event): event.validationError(now: now)
        }
    }

    @Test("each bad event gets its own reason; good ones pass")
    func reasons() throws {
        let now = Date()
        let recent = RFC3339.format(now.addingTimeInterval(-60))
        let id = UUID().uuidString, poi = UUID().uuidString
        let results = try candidates("""
            {"events": [
              {"id": "\(id)", "type": "poi.viewed", "deviceId": "d1", "occurredAt": "\(recent)", "poiId": "\(poi)", "via": "map"},
              42,
              {"type": "poi.viewed", "deviceId": "d1", "occurredAt": "\(recent)"},
              {"id": "not-a-uuid", "type": "poi.viewed", "deviceId": "d1", "occurredAt": "\(recent)"},
              {"id": "\(id)", "type": "poi.teleported", "deviceId": "d1", "occurredAt": "\(recent)"},
              {"id": "\(id)", "type": "poi.viewed", "deviceId": 7, "occurredAt": "\(recent)"},
              {"id": "\(id)", "type": "poi.viewed", "deviceId": "d1", "occurredAt": "yesterday"},
              {"id": "\(id)", "type": "poi.viewed", "deviceId": "d1", "occurredAt": "\(recent)", "poiId": "\(poi)", "via": "teleport"},
              {"id": "\(id)", "type": "poi.viewed", "deviceId": "d1", "occurredAt": "\(recent)", "via": "map"},
              {"id": "\(id)", "type": "tour.started", "deviceId": "d1", "occurredAt": "2001-01-01T00:00:00Z", "tourId": "\(poi)"},
              {"id": "\(id)", "type": "tour.started", "deviceId": "d1", "occurredAt": "\(RFC3339.format(now.addingTimeInterval(600)))", "tourId": "\(poi)"},
              {"id": "\(id)", "type": "poi.left", "deviceId": "d1", "occurredAt": "\(recent)", "poiId": "\(poi)", "dwellSeconds": "long"},
              {"id": "\(id)", "type": "device.registered", "deviceId": "d1", "occurredAt": "\(recent)", "platform": "iOS", "osVersion": "17.4",
               "model": "iPhone15,2", "appVersion": "2.0.1", "touristId": "t-9", "extra": true}
            ]}
            """)
        let reasons = results.map { reason($0, now: now) }
        #expect(reasons[0] == nil)
        #expect(reasons[1] == "an event must be a JSON object")
        #expect(reasons[2] == "missing field id")
        #expect(reasons[3] == "id must be a UUID")
        #expect(reasons[4]?.hasPrefix("unknown type \"poi.teleported\"") == true)
        #expect(reasons[5] == "deviceId must be a string")
        #expect(reasons[6]?.hasPrefix("occurredAt must be an RFC 3339 date-time") == true)
        #expect(reasons[7]?.hasPrefix("via must be one of") == true)
        #expect(reasons[8] == "missing field poiId for poi.viewed")
        #expect(reasons[9] == "occurredAt is more than 30 days old")
        #expect(reasons[10] == "occurredAt is more than 5 minutes in the future")
        #expect(reasons[11] == "dwellSeconds must be a number")
        #expect(reasons[12] == nil)
    }

    @Test("the produced message is the suite's envelope and decodes to the same event")
    func envelope() throws {
        let event = TrackingEvent(type: .mediaPlayed, deviceId: "device \"7\"", touristId: "t1", occurredAt: RFC3339.parse("2025-05-01T14:30:00.123Z") ?? Date(),
                                  tourId: UUID(), poiId: UUID(), durationSeconds: 12.5, url: "https://example.edu/a.mp3", mediaType: .audio)
        let decoded = try EnvelopeDecoder.decode(TrackingEvent.self, from: TrackingEnvelope.encode(event))
        #expect(decoded.data == event)
        #expect(decoded.id == event.id)
        #expect(decoded.type == "media.played")
        #expect(decoded.source == "feed")
        #expect(decoded.occurredAt == event.occurredAt)
        let viaEvent = TrackingEvent(type: .poiViewed, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_700_000_000), poiId: UUID(), via: .nearby)
        #expect(try EnvelopeDecoder.decode(TrackingEvent.self, from: TrackingEnvelope.encode(viaEvent)).data == viaEvent)
    }

    @Test("per-device rate: a batch passes whole or not at all, tokens come back over time and on refund")
    func rateLimit() throws {
        let limiter = DeviceRateLimiter(eventsPerMinute: 60)
        try limiter.take(["a": 50, "b": 10], now: 100)
        #expect(throws: DeviceRateLimiter.Limited.self) { try limiter.take(["b": 1, "a": 20], now: 100) }
        // Nothing was taken from b by the refused batch.
        try limiter.take(["b": 50], now: 100)
        do {
            try limiter.take(["a": 20], now: 101)
            Issue.record("a should be limited")
        } catch {
            #expect(error.deviceId == "a")
            #expect(error.retryAfterSeconds == 9)
            #expect(!error.batchExceedsAllowance)
        }
        try limiter.take(["a": 20], now: 110)
        limiter.refund(["a": 20])
        try limiter.take(["a": 20], now: 110)
        do {
            try limiter.take(["c": 61], now: 100)
            Issue.record("over a minute's allowance in one batch")
        } catch {
            #expect(error.batchExceedsAllowance)
        }
        try DeviceRateLimiter(eventsPerMinute: 0).take(["a": 100_000])
    }
}
