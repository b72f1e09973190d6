import Foundation
import HummingbirdTesting
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

@Suite("Dead letters and replay", .serialized, .stopsIfHung)
struct DeadLetterAndReplayTests {
    @Test("undecodable and invalid messages go to dead-letters with the reason, are counted in a metric, and count nothing")
    func deadLetters() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 11, count: 300)
        let now = Date()
        var wrongType = TrackingEvent(type: .poiViewed, deviceId: "d", occurredAt: now, poiId: UUID(), via: .list)
        wrongType.via = nil
        var withNul = TrackingEvent(type: .tourStarted, deviceId: "phone\u{0}1", occurredAt: now, tourId: UUID())
        withNul.touristId = "t"
        var searchWithNul = TrackingEvent(type: .searchPerformed, deviceId: "d", occurredAt: now)
        searchWithNul.query = "caf\u{0}é"
        searchWithNul.resultCount = 0
        let bad = [
            "{ not json",
            String(decoding: try Envelope(id: withNul.id, type: "tour.started", source: "feed", data: withNul).encoded(), as: UTF8.self),
            #"{"id":"\#(UUID())","type":"tour.started","schemaVersion":1,"occurredAt":"2025-01-01T00:00:00Z","source":"feed","data":{"id":"\#(UUID())","type":"tour.started","occurredAt":"2025-01-01T00:00:00Z"}}"#,
            String(decoding: try Envelope(type: "poi.viewed", source: "feed", data: wrongType).encoded(), as: UTF8.self),
            // Postgres text cannot hold NUL: counted, it would fail every batch it is in.
            String(decoding: try Envelope(id: searchWithNul.id, type: "search.performed", source: "feed", data: searchWithNul).encoded(), as: UTF8.self),
        ]
        try await harness.produce(Array(workload.events.prefix(150)))
        try await harness.produceRaw(bad)
        try await harness.produce(Array(workload.events.dropFirst(150)))
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(workload.events.count)
            let letters = try await TestServices.deadLetters(harness.kafka, count: bad.count)
            #expect(Set(letters.map(\.data.value)) == Set(bad))
            #expect(letters.allSatisfy { $0.data.consumer == "analytics" && $0.data.topic == harness.trackingTopic })
            let reasons = letters.map(\.data.reason).sorted()
            #expect(reasons.contains { $0.contains("malformed JSON") })
            #expect(reasons.contains { $0.contains("deviceId") })
            #expect(reasons.contains("missing field via for poi.viewed"))
            #expect(reasons.contains("deviceId must not contain NUL characters"))
            #expect(reasons.contains("query must not contain NUL characters"))
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("itour_analytics_events_rejected_total{reason=\"invalid\"}"))
            #expect(metrics.contains("itour_analytics_events_rejected_total{reason=\"undecodable\"}"))
            #expect(metrics.contains("itour_dead_letters_total{consumer=\"analytics\"}"))
            let truth = Truth(events: workload.events)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 12, count: 2))
        }
    }

    @Test("hostile messages written straight to tracking.events (a deviceId, touristId or query of 4 000 combining marks) are set aside with their field named, and an ordinary event after them is counted within 5 s")
    func hostileMessages() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 31, count: 200)
        try await harness.produce(workload.events)
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(workload.events.count)
            let now = Date()
            let marks = String(repeating: "\u{0301}", count: 4_000)
            var search = TrackingEvent(type: .searchPerformed, deviceId: "d", occurredAt: now)
            search.query = marks
            search.resultCount = 0
            let hostile = [TrackingEvent(type: .tourStarted, deviceId: "R" + marks, occurredAt: now, tourId: UUID()),
                           TrackingEvent(type: .tourStarted, deviceId: "d", touristId: "T" + marks, occurredAt: now, tourId: UUID()), search]
            // As an attacker with access to the broker would write them: the feed never let them through.
            try await harness.produceRaw(try hostile.map { String(decoding: try Envelope(id: $0.id, type: $0.type.rawValue, source: "feed", data: $0).encoded(),
                                                                                as: UTF8.self) })
            let ordinary = TrackingEvent(type: .poiViewed, deviceId: "after-the-hostile-ones", occurredAt: Date(), poiId: workload.pois[0], via: .list)
            let sent = ContinuousClock.now
            try await harness.produce([ordinary])
            try await harness.waitUntilCounted(workload.events.count + 1)
            let elapsed = ContinuousClock.now - sent
            #expect(elapsed < .seconds(5), "the next event was counted \(elapsed) after it was sent")
            let letters = try await TestServices.deadLetters(harness.kafka, count: 3)
            #expect(Set(letters.map(\.data.reason)) == ["deviceId must be 1 to 128 bytes (UTF-8)", "touristId must be 1 to 128 bytes (UTF-8)",
                                                        "query must be 1 to 800 bytes (UTF-8)"])
            // The figure docs/FAULTS.md quotes ("Hostile messages").
            print("hostile messages: \(letters.count) set aside; the next event counted \(elapsed) after it was sent")
            let truth = Truth(events: workload.events + [ordinary])
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 32, count: 2))
        }
    }

    @Test("an event the database refuses is found in its batch by halving and set aside with the reason; every other event of the batch is counted once")
    func eventTheDatabaseRefuses() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 41, count: 1_000)
        let poison = TrackingEvent(type: .poiViewed, deviceId: "poison", occurredAt: Date(), poiId: workload.pois[0], via: .list)
        // A rule the codec knows nothing of, as an index limit or a constraint added later would be: Postgres alone refuses it.
        try await harness.withLiveStore { client, _ in
            try await client.query(PostgresQuery(unsafeSQL: """
                ALTER TABLE analytics.processed_events ADD CONSTRAINT refuse_one CHECK (id <> '\(poison.id.uuidString.lowercased())')
                """), logger: TestServices.logger)
        }
        var mixed = workload.events
        mixed.insert(poison, at: 617)
        let events = mixed
        // One batch holds them all: the halving, not batch boundaries, must find the poison.
        try await harness.produce(events)
        try await harness.app().test(.router) { client in
            let started = ContinuousClock.now
            try await harness.waitUntilCounted(workload.events.count)
            print("refused event: \(events.count) events with one the database refuses counted in \(ContinuousClock.now - started) from the service's start")
            let letters = try await TestServices.deadLetters(harness.kafka, count: 1)
            #expect(letters.count == 1)
            #expect(letters.first?.data.reason.hasPrefix("analytics could not store this event: ") == true)
            #expect(letters.first?.data.reason.hasSuffix("(SQLSTATE 23514)") == true, "\(letters.map(\.data.reason))")
            #expect(letters.first?.data.value.lowercased().contains(poison.id.uuidString.lowercased()) == true)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("itour_analytics_events_rejected_total{reason=\"refused\"} 1"))
            // Later events still flow, and nothing was counted twice or lost.
            let later = Workload(seed: 42, count: 100)
            try await harness.produce(later.events)
            try await harness.waitUntilCounted(workload.events.count + later.events.count)
            let truth = Truth(events: workload.events + later.events)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 43, count: 2))
        }
    }

    @Test("replay rebuilds every report from the topic's beginning and from a file into fresh tables; activating it swaps them in under a running service")
    func replay() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 21, count: 2_000)
        let deliveries = workload.deliveries(seed: 22)
        let truth = Truth(events: workload.events)
        let queries = workload.queries(seed: 23, count: 3)
        try await harness.produce(deliveries)
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(truth.all.count)

            // From the topic, into the default replay schema.
            var settings = try harness.settings()
            settings.logLevel = .warning
            try await ReplayTool(command: .fromBeginning(.replay), settings: settings, pseudonyms: AnalyticsHarness.pseudonyms).run()
            #expect(try await harness.counted(schema: .replay) == truth.all.count)
            try await harness.withPostgres { postgres in
                try await AnalyticsHarness.expectReports(PostgresReportRepository(client: postgres, schema: .replay, logger: TestServices.logger),
                                                         equal: truth, for: queries)
            }

            // From a file mixing bare events and envelopes, into another schema.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            var lines: [String] = []
            for (index, event) in deliveries.enumerated() {
                let bytes = index % 2 == 0 ? try JSONCoding.encoder.encode(event)
                    : Data(try Envelope(id: event.id, type: event.type.rawValue, source: "feed", data: event).encoded())
                lines.append(String(decoding: bytes, as: UTF8.self))
            }
            lines.insert("garbage", at: 5)
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let fromFile = try #require(AnalyticsSchema("analytics_from_file"))
            try await ReplayTool(command: .file(file.path, fromFile), settings: settings, pseudonyms: AnalyticsHarness.pseudonyms).run()
            try await harness.withPostgres { postgres in
                try await AnalyticsHarness.expectReports(PostgresReportRepository(client: postgres, schema: fromFile, logger: TestServices.logger),
                                                         equal: truth, for: queries)
            }

            // Events that arrive after the replay stopped are counted by the service in the old tables only.
            // Swap the replay in while the service runs: the service sees the stored offsets behind it,
            // reads again from them, and counts those events and later ones in the new tables.
            let between = Workload(seed: 27, count: 300)
            try await harness.produce(between.events)
            try await harness.waitUntilCounted(truth.all.count + between.events.count)
            #expect(try await harness.counted(schema: .replay) == truth.all.count)
            try await ReplayTool(command: .activate(.replay), settings: settings, pseudonyms: AnalyticsHarness.pseudonyms).run()
            let more = Workload(seed: 24, count: 500)
            try await harness.produce(more.deliveries(seed: 25))
            let everything = Truth(events: workload.events + between.events + more.events)
            try await harness.waitUntilCounted(everything.all.count)
            try await AnalyticsHarness.expectReports(client, equal: everything, for: more.queries(seed: 26, count: 2))
            try await harness.withPostgres { postgres in
                let previous = try await postgres.fetch("SELECT count(*)::bigint FROM pg_namespace WHERE nspname LIKE 'analytics_previous_%'", as: Int.self, logger: TestServices.logger)
                #expect(previous.first == 1, "the replaced tables are kept")
            }
        }
    }
}
