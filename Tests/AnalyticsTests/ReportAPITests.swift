import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Analytics

@Suite("Reports API", .serialized, .stopsIfHung)
struct ReportAPITests {
    @Test("the token is required; bad ranges, tour ids and formats are 400 problems naming the parameter; CSV on request")
    func api() async throws {
        let harness = try await AnalyticsHarness.make()
        let tour = UUID()
        let today = Day(containing: Date())
        let now = Date()
        let events = [
            TrackingEvent(type: .deviceRegistered, deviceId: "d1", occurredAt: now, platform: "ios", osVersion: "17.4",
                          model: "=HYPERLINK(\"x\")", appVersion: "2.1.0"),
            TrackingEvent(type: .tourStarted, deviceId: "d1", touristId: "t1", occurredAt: now, tourId: tour),
            TrackingEvent(type: .tourCompleted, deviceId: "d1", occurredAt: now, tourId: tour, durationSeconds: 1_800),
            TrackingEvent(type: .poiViewed, deviceId: "d2", occurredAt: now, tourId: tour, poiId: UUID(), via: .map),
        ]
        try await harness.produce(events)
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(events.count)
            let range = "from=\(today)&to=\(today)"
            let auth: HTTPFields = [.authorization: "Bearer \(AnalyticsHarness.token)"]

            let anonymous = try await client.execute(uri: "/v1/reports/summary?\(range)", method: .get)
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.headers[.contentType] == "application/problem+json")
            #expect(anonymous.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            let wrong = try await client.execute(uri: "/v1/reports/summary?\(range)", method: .get, headers: [.authorization: "Bearer nope"])
            #expect(wrong.status == .unauthorized)

            for (query, mentions) in [("", "from"), ("from=\(today)", "to"), ("from=2025-02-30&to=2025-03-01", "from"),
                                      ("from=2025-3-1&to=2025-03-02", "from"), ("from=\(today)&to=yesterday", "to"),
                                      ("from=2025-03-02&to=2025-03-01", "after"), ("from=2000-01-01&to=2025-01-01", "longer"),
                                      ("\(range)&tourId=42", "tourId"), ("\(range)&format=xml", "format")] {
                let response = try await client.execute(uri: "/v1/reports/pois?\(query)", method: .get, headers: auth)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.headers[.contentType] == "application/problem+json")
                let problem = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect((problem?["detail"] as? String)?.contains(mentions) == true, "\(query): \(String(describing: problem))")
                #expect(problem?["status"] as? Int == 400)
            }

            let json = try await client.execute(uri: "/v1/reports/summary?\(range)", method: .get, headers: auth)
            #expect(json.headers[.contentType] == "application/json")
            let summary = try JSONSerialization.jsonObject(with: Data(buffer: json.body)) as? [String: Any]
            #expect(summary?["toursStarted"] as? Int == 1)
            #expect(summary?["completionRate"] as? Double == 1)
            #expect(summary?["uniqueDevices"] as? Int == 2)
            #expect(summary?["uniqueTourists"] as? Int == 1)
            #expect(summary?["from"] as? String == today.description)

            let csv = try await client.execute(uri: "/v1/reports/tours?\(range)&format=csv", method: .get, headers: auth)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(csv.headers[.contentDisposition]?.contains("attachment") == true)
            #expect(String(buffer: csv.body) == """
                tourId,name,starts,completions,completionRate,uniqueDevices,averageDurationSeconds\r
                "\(tour.lowercased)",,1,1,1.000,2,1800\r

                """)
            var accept = auth
            accept[.accept] = "text/csv"
            let devices = try await client.execute(uri: "/v1/reports/devices?\(range)", method: .get, headers: accept)
            let lines = String(buffer: devices.body).split(separator: "\r\n")
            #expect(lines.first == "dimension,value,devices")
            #expect(lines.contains("\"platform\",\"ios\",1"))
            #expect(lines.contains("\"platform\",\"unknown\",1"))
            // Every text field is quoted; a model that would start a spreadsheet formula is neutralised too.
            #expect(lines.contains("\"model\",\"'=HYPERLINK(\"\"x\"\")\",1"))

            let filtered = try await AnalyticsHarness.get(client, "daily", ReportQuery(from: today.adding(days: -2), to: today, tourId: tour),
                                                          as: AnalyticsHarness.DayList.self)
            #expect(filtered.days.map(\.date) == [today.adding(days: -2), today.adding(days: -1), today].map(\.description))
            #expect(filtered.days.last?.uniqueDevices == 2)
            #expect(filtered.days.last?.poiViews == 1)
        }
    }
}

@Suite("Report building blocks")
struct ReportUnitTests {
    @Test("days parse only as real YYYY-MM-DD dates and print back the same")
    func days() {
        #expect(Day("1970-01-01")?.number == 0)
        #expect(Day("2024-02-29")?.description == "2024-02-29")
        #expect(Day("2023-02-29") == nil)
        #expect(Day("2024-13-01") == nil)
        #expect(Day("2024-1-01") == nil)
        #expect(Day("2024-01-01T00:00:00Z") == nil)
        #expect(Day("１９７０-01-01") == nil)
        var random = SplitMix(seed: 3)
        for _ in 0..<2_000 {
            let day = Day(number: Int32(random.next(100_000)) - 30_000)
            #expect(Day(day.description) == day)
            #expect(Day(containing: day.start) == day)
            #expect(Day(containing: day.start.addingTimeInterval(86_399.999)) == day)
        }
    }

    @Test("messages are decoded, or rejected with the reason")
    func decoding() throws {
        let event = TrackingEvent(type: .poiLeft, deviceId: "d", occurredAt: Date(timeIntervalSince1970: 1_000), poiId: UUID(), dwellSeconds: 12.5)
        let good = try Envelope(id: event.id, type: "poi.left", source: "feed", data: event).encoded()
        guard case .event(let decoded) = TrackingCodec.readMessage(good) else { Issue.record("not decoded"); return }
        #expect(decoded == event)
        func reason(_ bytes: [UInt8]) -> TrackingCodec.MessageRejection? {
            if case .rejected(let rejection) = TrackingCodec.readMessage(bytes) { rejection } else { nil }
        }
        #expect(reason(Array("not json".utf8))?.kind == .undecodable)
        #expect(reason(try Envelope(type: "poi.left", schemaVersion: 9, source: "feed", data: event).encoded())?.reason.contains("schemaVersion 9") == true)
        var missing = event
        missing.dwellSeconds = nil
        #expect(reason(try Envelope(type: "poi.left", source: "feed", data: missing).encoded())?.reason == "missing field dwellSeconds for poi.left")
        #expect(reason(try Envelope(type: "poi.viewed", source: "feed", data: event).encoded())?.kind == .invalid)
        let unknownType = String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"type\":\"poi.left\"", with: "\"type\":\"poi.licked\"")
        #expect(reason(Array(unknownType.utf8))?.kind == .undecodable)
        // Old events are still counted: the age window was the feed's to apply, when it accepted them.
        var old = event
        old.occurredAt = Date(timeIntervalSinceNow: -90 * 86_400)
        guard case .event = TrackingCodec.readMessage(try Envelope(type: "poi.left", source: "feed", data: old).encoded()) else {
            Issue.record("an old event was rejected"); return
        }
    }

    @Test("the codec reads what JSONEncoder writes, and JSON's other spellings of the same message")
    func codecReadsJSONEncoder() throws {
        for event in Workload(seed: 5, count: 2_000).events {
            let bytes = try Envelope(id: event.id, type: event.type.rawValue, source: "feed", data: event).encoded()
            guard case .event(let decoded) = TrackingCodec.readMessage(bytes) else { Issue.record("\(String(decoding: bytes, as: UTF8.self))"); continue }
            #expect(decoded == event)
        }
        let id = UUID()
        func message(_ data: String, envelope: String = "") -> [UInt8] {
            Array(#"{"id":"\#(UUID())","type":"poi.viewed","schemaVersion":1,"occurredAt":"2025-01-01T00:00:00Z","source":"feed"\#(envelope),"data":{\#(data)}}"#.utf8)
        }
        func read(_ bytes: [UInt8]) -> TrackingEvent? {
            if case .event(let event) = TrackingCodec.readMessage(bytes) { event } else { nil }
        }
        let base = #""id":"\#(id)","type":"poi.viewed","deviceId":"d","occurredAt":"2025-01-01T00:00:00.5Z","poiId":"\#(id)","via":"map""#
        #expect(read(message(base))?.occurredAt == RFC3339.parse("2025-01-01T00:00:00.500Z"))
        // Unknown fields and nulls are fine; escapes, exponents, offsets; a key given twice is refused.
        #expect(read(message(base + #","extra":[1,{"a":"\"x"}],"touristId":null,"dwellSeconds":12.25"#))?.dwellSeconds == 12.25)
        #expect(read(message(base + #","model":"a\"b""#))?.model == "a\"b")
        #expect(read(message(base + #","touristId":"t\u00e9""#))?.touristId == "té")
        #expect(read(message(base + #","dwellSeconds":1e3"#))?.dwellSeconds == 1_000)
        #expect(read(message(base.replacingOccurrences(of: "00.5Z", with: "00+01:00")))?.occurredAt == RFC3339.parse("2024-12-31T23:00:00Z"))
        func rejection(_ bytes: [UInt8]) -> TrackingCodec.MessageRejection? {
            if case .rejected(let rejection) = TrackingCodec.readMessage(bytes) { rejection } else { nil }
        }
        #expect(rejection(message(base) + Array(" x".utf8))?.kind == .undecodable)
        #expect(rejection(message(base, envelope: #","schemaVersion":2"#))?.reason.contains("schemaVersion 2") == true)
        #expect(rejection(message(base.replacingOccurrences(of: #""poiId":"\#(id)""#, with: #""poiId":5"#)))?.kind == .undecodable)
        #expect(rejection(message(base.replacingOccurrences(of: #""deviceId":"d""#, with: #""deviceId":"a\u0000b""#)))?.reason
                == "deviceId must not contain NUL characters")
        #expect(rejection(message(base + #","deviceId":"e""#))?.reason == "undecodable message: data: field deviceId given twice")
    }

    @Test("CSV text fields are always quoted, quotes doubled, formula starts neutralised")
    func csv() {
        #expect(CSVTable.escape("plain") == "\"plain\"")
        #expect(CSVTable.escape("a,b") == "\"a,b\"")
        #expect(CSVTable.escape("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVTable.escape("line\nbreak") == "\"line\nbreak\"")
        #expect(CSVTable.escape("+1") == "\"'+1\"")
        #expect(CSVTable.escape("@x") == "\"'@x\"")
    }
}
