import Foundation
import NIOCore
import Shared
import Testing
@testable import Feed

@Suite("Tracking event batches")
struct EventBatchTests {
    func candidates(_ json: String) throws -> [Result<TrackingEvent, TrackingCodec.Rejection>] {
        try Array(json.utf8).withUnsafeBytes { bytes in try TrackingCodec.readBatch(bytes) }
    }

    func failure(_ json: String) -> TrackingCodec.BatchFailure? {
        do {
            _ = try candidates(json)
            return nil
        } catch let error as TrackingCodec.BatchFailure {
            return error
        } catch {
            return nil
        }
    }

    func reason(_ result: Result<TrackingEvent, TrackingCodec.Rejection>, now: Date = Date()) -> String? {
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
               "model": "iPhone15,2", "appVersion": "2.0.1", "touristId": "t-9", "extra": true},
              {"id": "\(id)", "type": "tour.started", "deviceId": "d1", "occurredAt": "\(recent)", "tourId": "\(poi)", "deviceId": "d2"}
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
        #expect(reasons[13] == "field deviceId given twice")
    }

    @Test("the reader takes any valid JSON and refuses anything else as a whole")
    func reader() throws {
        let event = #"{"id": "0b5f3c2e-6d1a-4f7e-9c3b-2a1d5e8f7a90", "type": "poi.arrived", "deviceId": "d\u00e9v\ud83d\ude00\n", "occurredAt": "2025-05-01T14:30:00Z", "poiId": "0b5f3c2e-6d1a-4f7e-9c3b-2a1d5e8f7a91", "extra": {"deep": [1, 2.5e-3, -0, true, false, null, "x"]}}"#
        let read = try candidates(" \n{\"other\": [{}], \"events\": [\(event), [1], \"s\", 1e999, null, {\"durationSeconds\": true}]}\t")
        #expect(read.count == 6)
        #expect(try read[0].get().deviceId == "dév😀\n")
        #expect(read[1...4].allSatisfy { if case .failure(let rejection) = $0 { rejection.reason == "an event must be a JSON object" } else { false } })
        if case .failure(let rejection) = read[5] { #expect(rejection.reason == "missing field id") } else { Issue.record("not rejected") }
        // Duplicate keys: the last one counts.
        #expect(try candidates(#"{"events": 1, "events": []}"#).isEmpty)
        #expect(failure(#"{"events": [], "events": 7}"#) == .eventsNotAnArray)
        #expect(failure("[]") == .notAnObject)
        #expect(failure("null") == .notAnObject)
        #expect(failure(#"{"other": 1}"#) == .missingEvents)
        for malformed in ["", "{", #"{"events": [}"#, #"{"events": []} x"#, "{\"events\": [\"\u{1}\"]}", #"{"events": ["\x"]}"#,
                          #"{"events": [01]}"#, #"{"events": [1.]}"#, #"{"events": ["\ud800"]}"#, #"{'events': []}"#,
                          "{\"events\": [" + String(repeating: "[", count: 100_000) + "]}", #"{"events": [tru]}"#] {
            if case .malformed = failure(malformed) {} else { Issue.record("not malformed: \(malformed.prefix(40))") }
        }
        let invalidUTF8: [UInt8] = Array(#"{"events": [""#.utf8) + [0xFF, 0xFE] + Array(#""]}"#.utf8)
        let outcome = invalidUTF8.withUnsafeBytes { bytes in Result { () throws(TrackingCodec.BatchFailure) in try TrackingCodec.readBatch(bytes) } }
        if case .failure(.malformed) = outcome {} else { Issue.record("invalid UTF-8 accepted") }
    }

    /// The reader scans plain ASCII eight bytes at a time: whatever ends or breaks a run must be seen
    /// at every position of a word.
    @Test("strings read the same wherever a quote, escape, control or non-ASCII byte falls")
    func stringScanning() throws {
        func deviceId(_ raw: String) throws -> String {
            let event = #"{"id": "0b5f3c2e-6d1a-4f7e-9c3b-2a1d5e8f7a90", "type": "tour.started", "occurredAt": "2025-05-01T14:30:00Z", "deviceId": "\#(raw)"}"#
            return try candidates("{\"events\": [\(event)]}")[0].get().deviceId
        }
        for position in 0..<20 {
            let before = String(repeating: "a", count: position), after = String(repeating: "b", count: 19 - position)
            #expect(try deviceId(before + after) == before + after)
            #expect(try deviceId(before + "é" + after) == before + "é" + after)
            #expect(try deviceId(before + #"\""# + after) == before + "\"" + after)
            #expect(try deviceId(before + #"\\"# + after) == before + "\\" + after)
            #expect(try deviceId(before + "\u{7F}" + after) == before + "\u{7F}" + after)
            for control in ["\u{1}", "\t", "\u{1F}"] {
                if case .malformed = failure("{\"events\": [\"" + before + control + after + "\"]}") {} else {
                    Issue.record("control character at \(position) accepted")
                }
            }
            let invalid = Array("{\"events\": [\"\(before)".utf8) + [0xFF] + Array("\(after)\"]}".utf8)
            let outcome = invalid.withUnsafeBytes { bytes in Result { () throws(TrackingCodec.BatchFailure) in try TrackingCodec.readBatch(bytes) } }
            if case .failure(.malformed) = outcome {} else { Issue.record("invalid UTF-8 at \(position) accepted") }
        }
    }

    @Test("the produced message is the suite's envelope and decodes to the same event")
    func envelope() throws {
        let event = TrackingEvent(type: .mediaPlayed, deviceId: "device \"7\"", touristId: "t1", occurredAt: RFC3339.parse("2025-05-01T14:30:00.123Z") ?? Date(),
                                  tourId: UUID(), poiId: UUID(), durationSeconds: 12.5, url: "https://example.edu/a.mp3", mediaType: .audio)
        let decoded = try EnvelopeDecoder.decode(TrackingEvent.self, from: TrackingCodec.writeMessage(event))
        #expect(decoded.data == event)
        #expect(decoded.id == event.id)
        #expect(decoded.type == "media.played")
        #expect(decoded.source == "feed")
        #expect(decoded.occurredAt == event.occurredAt)
        let viaEvent = TrackingEvent(type: .poiViewed, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_700_000_000), poiId: UUID(), via: .nearby)
        #expect(try EnvelopeDecoder.decode(TrackingEvent.self, from: TrackingCodec.writeMessage(viaEvent)).data == viaEvent)
    }

    @Test("reading stops at the 501st element: the cap's failure, never a parse failure of what follows")
    func capStopsReading() throws {
        let five00 = Array(repeating: "{}", count: EventBatch.maxEvents).joined(separator: ",")
        #expect(try candidates("{\"events\": [\(five00)]}").count == EventBatch.maxEvents)
        #expect(failure("{\"events\": [\(five00), 1]}") == .tooManyEvents)
        // The 501st and 502nd elements are malformed, and the body ends early: none of it is read.
        #expect(failure("{\"events\": [\(five00), {\"id\": ]], tru") == .tooManyEvents)
        #expect(failure("{\"events\": [\(five00), 1, nonsense") == .tooManyEvents)
        // Elements 1..500 are still read: a malformed one among them is a parse failure.
        #expect(failure("{\"events\": [\(Array(repeating: "1", count: 499).joined(separator: ",")), nonsense, 1, 1]}") != .tooManyEvents)
    }

    @Test("client addresses are limited as IPv4 addresses, IPv6 /64s (IPv4-mapped ones as IPv4)")
    func clientKeys() throws {
        #expect(EventIngest.clientKey(try SocketAddress(ipAddress: "203.0.113.7", port: 1)) == "203.0.113.7")
        let one = EventIngest.clientKey(try SocketAddress(ipAddress: "2001:db8:1:2:3:4:5:6", port: 1))
        #expect(one == "2001:db8:1:2::/64")
        #expect(EventIngest.clientKey(try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 2)) == one)
        #expect(EventIngest.clientKey(try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1)) != one)
        #expect(EventIngest.clientKey(try SocketAddress(ipAddress: "::ffff:198.51.100.9", port: 1)) == "198.51.100.9")
        #expect(EventIngest.clientKey(nil) == "unknown")
    }

    @Test("per-device rate: a batch passes whole or not at all, tokens come back over time and on refund")
    func rateLimit() throws {
        let limiter = EventRateLimiter(eventsPerMinute: 60)
        try limiter.take(["a": 50, "b": 10], now: 100)
        #expect(throws: EventRateLimiter.Limited.self) { try limiter.take(["b": 1, "a": 20], now: 100) }
        // Nothing was taken from b by the refused batch.
        try limiter.take(["b": 50], now: 100)
        do {
            try limiter.take(["a": 20], now: 101)
            Issue.record("a should be limited")
        } catch {
            #expect(error.key == "a")
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
        try EventRateLimiter(eventsPerMinute: 0).take(["a": 100_000])
    }
}
