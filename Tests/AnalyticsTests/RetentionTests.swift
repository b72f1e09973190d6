import Foundation
import Logging
import PostgresNIO
import Shared
import Synchronization
import Testing
import TestSupport
@testable import Analytics

/// docs/ANALYTICS.md "Retention": pruning removes exactly what is older than the retention, and nothing a redelivery
/// could need; aggregates stay.
@Suite("Retention", .serialized, .stopsIfHung)
struct RetentionTests {
    static let pseudonyms = AnalyticsHarness.pseudonyms
    /// The instant the pruning runs at: noon UTC, so "today" is unambiguous.
    static let now = Date(timeIntervalSince1970: Double(Day("2026-06-15")!.number) * 86_400 + 12 * 3_600)
    static let policy = RetentionPolicy(eventDays: 400)

    /// A fresh, migrated schema (no rows to convert) and its ingest store.
    static func withStore(_ body: @Sendable (PostgresClient, PostgresIngestStore) async throws -> Void) async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            try await IdConversion(client: client, schema: .live, pseudonyms: pseudonyms, logger: TestServices.logger).run()
            try await body(client, PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger))
        }
    }

    /// Rows of `table` as text, with the UTC day each is filed under.
    static func rows(_ client: PostgresClient, _ table: String, day: String) async throws -> [(row: String, day: Day)] {
        try await client.fetch(PostgresQuery(unsafeSQL: "SELECT t::text, to_char(\(day), 'YYYY-MM-DD') FROM analytics.\(table) t"),
                               as: (String, String).self, logger: TestServices.logger).map { ($0, Day($1)!) }
    }

    @Test("a pass removes exactly the event-level rows older than the retention and the ids counted before the dedupe window")
    func exactRows() async throws {
        let first = Self.policy.firstEventDay(now: Self.now)
        let firstDedupe = try #require(Self.policy.firstDedupeDay(now: Self.now))
        let tour = UUID(), poi = UUID(), otherPoi = UUID()
        func at(_ day: Day, _ hour: Double) -> Date { day.start.addingTimeInterval(hour * 3_600) }
        func registered(_ device: String, _ time: Date) -> TrackingEvent {
            TrackingEvent(type: .deviceRegistered, deviceId: device, occurredAt: time, platform: "ios", osVersion: "17", model: "m", appVersion: "1")
        }
        // "old": everything before the first day kept. "edge": a start late on the day before, a tourless arrival just after
        // midnight (credited across the boundary), registered long ago. "recent": registered before the horizon, active now.
        var oldEvents = [registered("old", at(first.adding(days: -3), 9)),
                   TrackingEvent(type: .tourStarted, deviceId: "old", occurredAt: at(first.adding(days: -1), 10), tourId: tour),
                   TrackingEvent(type: .poiArrived, deviceId: "old", occurredAt: at(first.adding(days: -1), 11), poiId: poi),
                   TrackingEvent(type: .poiArrived, deviceId: "old", occurredAt: at(first.adding(days: -1), 12), tourId: tour, poiId: otherPoi)]
        var edgeEvents = [registered("edge", at(first.adding(days: -10), 8)),
                    TrackingEvent(type: .tourStarted, deviceId: "edge", occurredAt: at(first.adding(days: -1), 23), tourId: tour),
                    TrackingEvent(type: .poiArrived, deviceId: "edge", occurredAt: at(first, 0.5), poiId: poi),
                    TrackingEvent(type: .poiViewed, deviceId: "edge", occurredAt: at(first, 1), tourId: tour, poiId: poi, via: .map)]
        let recent = [registered("recent", at(first.adding(days: -5), 8)),
                      TrackingEvent(type: .tourStarted, deviceId: "recent", occurredAt: at(Day(containing: Self.now).adding(days: -1), 9), tourId: tour),
                      TrackingEvent(type: .poiArrived, deviceId: "recent", occurredAt: at(Day(containing: Self.now).adding(days: -1), 10), poiId: poi),
                      TrackingEvent(type: .poiArrived, deviceId: "recent", occurredAt: at(Day(containing: Self.now).adding(days: -1), 11),
                                    tourId: tour, poiId: otherPoi)]
        for index in oldEvents.indices { oldEvents[index].touristId = "tourist-old" }
        for index in edgeEvents.indices { edgeEvents[index].touristId = "tourist-edge" }
        let old = oldEvents, edge = edgeEvents
        let events = old + edge + recent
        try await Self.withStore { client, store in
            let logger = TestServices.logger
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(events), topic: "t", nextOffsets: [0: Int64(events.count)]))
            // Counting days: old's ids the day before the dedupe window, edge's its first day, recent's today.
            try await client.query("UPDATE analytics.processed_events SET counted_on = \(firstDedupe.adding(days: -1).description)::date WHERE id = ANY(\(old.map(\.id)))",
                                   logger: logger)
            try await client.query("UPDATE analytics.processed_events SET counted_on = \(firstDedupe.description)::date WHERE id = ANY(\(edge.map(\.id)))",
                                   logger: logger)
            let dayTables = [("tour_marks", "(occurred_at AT TIME ZONE 'UTC')::date"), ("untoured_events", "(occurred_at AT TIME ZONE 'UTC')::date"),
                             ("device_days", "day"), ("stop_visits", "day"), ("credited_members", "day")]
            var before: [String: [(row: String, day: Day)]] = [:]
            for (table, day) in dayTables { before[table] = try await Self.rows(client, table, day: day) }
            #expect(before["tour_marks"]!.contains { $0.day < first } && before["untoured_events"]!.contains { $0.day < first }
                    && before["device_days"]!.contains { $0.day < first } && before["stop_visits"]!.contains { $0.day < first })
            let aggregates = ["day_poi_stats", "day_tour_stats", "day_device_counts", "day_languages", "day_view_sources", "hour_visits", "active_day_pairs",
                              "funnel_day_pairs", "registration_day_pairs"]
            var sums: [String: Set<String>] = [:]
            for table in aggregates { sums[table] = Set(try await Self.rows(client, table, day: "day").map(\.row)) }
            let reports = PostgresReportRepository(client: client, schema: .live, logger: logger)
            let wholeSpan = ReportQuery(from: first.adding(days: -20), to: Day(containing: Self.now), tourId: tour)
            let hoursBefore = try await reports.hours(wholeSpan)

            var configured = PostgresPruningStore(client: client, schema: .live, logger: logger)
            configured.batchSize = 2
            let pruning = configured
            // Another replica's pass in progress: this one skips.
            try await client.withConnection { other in
                let lock = "itour.analytics.prune.analytics"
                #expect(try await other.fetch("SELECT pg_try_advisory_lock(hashtext(\(lock)))", as: Bool.self, logger: logger) == [true])
                #expect(try await pruning.pass(Self.policy, now: Self.now) == nil)
                // Nor does it ask the broker for the policy (only the replica holding the pass does).
                let asked = Mutex(false)
                #expect(try await pruning.pass(now: Self.now, policy: { asked.withLock { $0 = true }; return Self.policy }) == nil)
                #expect(!asked.withLock { $0 })
                try await other.query("SELECT pg_advisory_unlock(hashtext(\(lock)))", logger: logger)
            }
            // An activity row with no day before the horizon (recent's on the tour; its all-events row has its registration's
            // day) is neither changed nor locked by the pass: its xmin and xmax stay.
            let untouched = PostgresQuery(unsafeSQL: "SELECT xmin::text || '/' || xmax::text FROM analytics.device_activity "
                + "WHERE scope = '\(tour.lowercased)' AND device_id = '\(Self.pseudonyms.pseudonym("recent"))'")
            let recentVersions = try await client.fetch(untouched, as: String.self, logger: logger)
            #expect(recentVersions.count == 1)
            let pruned = try #require(try await pruning.pass(Self.policy, now: Self.now))
            #expect(try await client.fetch(untouched, as: String.self, logger: logger) == recentVersions)
            #expect(pruned["processed_events"] == old.count)

            for (table, day) in dayTables {
                let after = try await Self.rows(client, table, day: day).map(\.row).sorted()
                #expect(after == before[table]!.filter { $0.day >= first }.map(\.row).sorted(), "\(table)")
                #expect(pruned[table] == before[table]!.count { $0.day < first }, "\(table)")
            }
            let p = { (id: String) in Self.pseudonyms.pseudonym(id) }
            let activity = try await client.fetch("SELECT device_id, scope, days::text FROM analytics.device_activity", as: (String, UUID, String).self,
                                                  logger: logger)
            let all = AggregateDelta.Scope.all
            let yesterday = Day(containing: Self.now).adding(days: -1)
            let found: Set<String> = Set(activity.map { "\($0.0) \($0.1.lowercased) \($0.2)" })
            let edgeDays = "{[\(first),\(first.adding(days: 1)))}", recentDays = "{[\(yesterday),\(yesterday.adding(days: 1)))}"
            let expectedActivity: Set<String> = [
                "\(p("edge")) \(all.lowercased) \(edgeDays)", "\(p("edge")) \(tour.lowercased) \(edgeDays)",
                "\(p("recent")) \(all.lowercased) \(recentDays)", "\(p("recent")) \(tour.lowercased) \(recentDays)",
            ]
            #expect(found == expectedActivity)
            // The funnel's days (migration 15) are cut at the horizon as the activity rows are: old's rows gone, none left before it.
            #expect(pruned["funnel_activity"] ?? 0 > 0)
            #expect(try await client.fetch("SELECT count(*)::bigint FROM analytics.funnel_activity WHERE lower(days) < \(first.description)::date",
                                           as: Int.self, logger: logger).first == 0)
            #expect(try await client.fetch("SELECT count(*)::bigint FROM analytics.funnel_activity WHERE device_id = \(p("old"))::uuid",
                                           as: Int.self, logger: logger).first == 0)
            let tourists = try await client.fetch("SELECT tourist_id, days::text FROM analytics.tourist_activity WHERE scope = \(all)",
                                                  as: (String, String).self, logger: logger)
            #expect(tourists.map { "\($0.0) \($0.1)" } == ["\(p("tourist-edge")) {[\(first),\(first.adding(days: 1)))}"])
            let registrations: [String] = try await client.fetch("SELECT device_id FROM analytics.devices", as: String.self, logger: logger)
            #expect(Set(registrations) == Set([p("edge"), p("recent")]))
            let ids: [UUID] = try await client.fetch("SELECT id FROM analytics.processed_events", as: UUID.self, logger: logger)
            #expect(Set(ids) == Set((edge + recent).map(\.id)))

            // Aggregates stay (a tour's credited arrivals were in its hour_visits already).
            for table in aggregates {
                let kept: [String] = try await Self.rows(client, table, day: "day").map(\.row)
                #expect(Set(kept) == sums[table]!, "\(table)")
            }
            #expect(try await reports.hours(wholeSpan) == hoursBefore)
            #expect(try await reports.summary(ReportQuery(from: first.adding(days: -20), to: Day(containing: Self.now))).poiVisits == 5)

            // Whatever a redelivery could bring is still recognised: every kept id counts nothing again.
            #expect(try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(edge + recent), topic: "t", nextOffsets: [0: 99]))
                    == .applied(new: 0, duplicates: edge.count + recent.count))
            // A second pass finds nothing.
            #expect(try #require(try await pruning.pass(Self.policy, now: Self.now)).values.allSatisfy { $0 == 0 })
        }
    }

    @Test("after pruning a workload across the horizon, every report over kept days equals the truth, and sums over any range do")
    func reportsAfterPruning() async throws {
        let workload = Workload(seed: 81, count: 3_000, days: 10, now: Self.now.addingTimeInterval(-395 * 86_400))
        let truth = Truth(events: workload.events)
        let first = Self.policy.firstEventDay(now: Self.now)
        try #require(workload.events.contains { Day(containing: $0.occurredAt) < first } && workload.events.contains { Day(containing: $0.occurredAt) >= first })
        try await Self.withStore { client, store in
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(workload.events), topic: "t", nextOffsets: [0: 1]))
            var pruning = PostgresPruningStore(client: client, schema: .live, logger: TestServices.logger)
            pruning.batchSize = 50
            _ = try #require(try await pruning.pass(Self.policy, now: Self.now))
            let reports = PostgresReportRepository(client: client, schema: .live, logger: TestServices.logger)
            let queries = workload.queries(seed: 82, count: 8)
            let kept = queries.filter { $0.from >= first }
            try #require(!kept.isEmpty)
            try await AnalyticsHarness.expectReports(reports, equal: truth, for: kept)
            for query in queries where query.from < first {
                var summary = try await reports.summary(query), expected = truth.summary(query)
                (summary.uniqueDevices, summary.uniqueTourists, expected.uniqueDevices, expected.uniqueTourists) = (0, 0, 0, 0)
                #expect(summary.matches(expected), "summary \(query)")
                #expect(try await reports.pois(query).matches(truth.pois(query)), "pois \(query)")
                #expect(try await reports.hours(query) == truth.hours(query), "hours \(query)")
                #expect(try await reports.languages(query) == truth.languages(query), "languages \(query)")
                if query.tourId == nil { #expect(try await reports.daily(query) == truth.daily(query), "daily \(query)") }
            }
        }
    }

    /// Every report over every range of `days`, for the whole app and for `tour`, as JSON (keys sorted) keyed by report
    /// and range.
    static func everyReport(_ client: PostgresClient, days: ClosedRange<Int>, tour: UUID) async throws -> [String: String] {
        let reports = PostgresReportRepository(client: client, schema: .live, logger: TestServices.logger)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func json(_ report: some Encodable) throws -> String { String(decoding: try encoder.encode(report), as: UTF8.self) }
        var answers: [String: String] = [:]
        for from in days {
            for to in from...days.upperBound {
                for tourId in [nil, tour] {
                    let query = ReportQuery(from: Day(number: Int32(from)), to: Day(number: Int32(to)), tourId: tourId)
                    let key = "\(query.from)...\(query.to) \(tourId == nil ? "all" : "tour")"
                    answers["summary \(key)"] = try json(await reports.summary(query))
                    answers["pois \(key)"] = try json(await reports.pois(query))
                    answers["tours \(key)"] = try json(await reports.tours(query))
                    answers["devices \(key)"] = try json(await reports.devices(query))
                    answers["daily \(key)"] = try json(await reports.daily(query))
                    answers["hours \(key)"] = try json(await reports.hours(query))
                    answers["searches \(key)"] = try json(await reports.searches(query))
                    answers["views \(key)"] = try json(await reports.views(query))
                    answers["languages \(key)"] = try json(await reports.languages(query))
                    if let tourId { answers["funnel \(key)"] = try json(await reports.funnel(query, tour: tourId)) }
                }
            }
        }
        return answers
    }

    /// Rows at 0 per day pair table.
    static func zeroPairs(_ client: PostgresClient) async throws -> [String: Int] {
        var zeros: [String: Int] = [:]
        for (table, column) in [("active_day_pairs", "members"), ("funnel_day_pairs", "devices"), ("registration_day_pairs", "members")] {
            zeros[table] = try await client.fetch(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM analytics.\(table) WHERE \(column) = 0"),
                                                  as: Int.self, logger: TestServices.logger).first
        }
        return zeros
    }

    @Test("day pairs moved to 0 by a late event and a newer registration are deleted, one an ingest batch holds left for the next pass; no report changes")
    func zeroPairsDeleted() async throws {
        let tour = UUID()
        func at(_ day: String, _ hour: Double) -> Date { Day(day)!.start.addingTimeInterval(hour * 3_600) }
        func registered(_ device: String, _ day: String, _ platform: String) -> TrackingEvent {
            TrackingEvent(type: .deviceRegistered, deviceId: device, occurredAt: at(day, 9), platform: platform, osVersion: "17", model: "m",
                          appVersion: "1")
        }
        func started(_ device: String, _ day: String) -> TrackingEvent {
            var event = TrackingEvent(type: .tourStarted, deviceId: device, occurredAt: at(day, 10), tourId: tour)
            event.touristId = "tourist-\(device)"
            return event
        }
        // "phone" starts the tour on the 1st and the 5th, "other" on the 2nd and the 5th; then phone's start on the 3rd
        // arrives late (its 5th's pairs with the 1st go to 0: devices, tourists, the funnel's started), then a newer
        // registration moves every pair of phone from ios to android (its ios ones go to 0).
        let batches = [[registered("phone", "2026-06-01", "ios"), started("phone", "2026-06-01"), started("phone", "2026-06-05"),
                        registered("other", "2026-06-02", "ios"), started("other", "2026-06-02"), started("other", "2026-06-05")],
                       [started("phone", "2026-06-03")],
                       [registered("phone", "2026-06-06", "android")]]
        // Then registered as ios again, after the pass deleted the ios rows at 0.
        let back = [registered("phone", "2026-06-07", "ios")]
        let days = Int(Day("2026-05-31")!.number)...Int(Day("2026-06-08")!.number)
        try await Self.withStore { client, store in
            let logger = TestServices.logger
            for batch in batches {
                _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(batch), topic: "t", nextOffsets: [:]))
            }
            let zeros = try await Self.zeroPairs(client)
            #expect(zeros.values.allSatisfy { $0 > 0 }, "\(zeros)")
            func kept(_ table: String, _ column: String) async throws -> Set<String> {
                Set(try await client.fetch(PostgresQuery(unsafeSQL: "SELECT t::text FROM analytics.\(table) t WHERE \(column) <> 0"),
                                           as: String.self, logger: logger))
            }
            let keptBefore = try await [kept("active_day_pairs", "members"), kept("funnel_day_pairs", "devices"), kept("registration_day_pairs", "members")]
            let answers = try await Self.everyReport(client, days: days, tour: tour)
            let pruning = PostgresPruningStore(client: client, schema: .live, logger: logger)

            // An ingest batch holding one of the zero rows (its upsert's row lock): the pass skips that row, deletes the others.
            let held = try await client.withConnection { other in
                try await other.query("BEGIN", logger: logger)
                let held = try await other.fetch("""
                    SELECT day::text FROM analytics.active_day_pairs WHERE members = 0 ORDER BY scope, kind, day, previous LIMIT 1 FOR UPDATE
                    """, as: String.self, logger: logger)
                let pruned = try #require(try await pruning.pass(Self.policy, now: Self.now))
                try await other.query("ROLLBACK", logger: logger)
                #expect(pruned["active_day_pairs"] == zeros["active_day_pairs"]! - 1)
                #expect(pruned["funnel_day_pairs"] == zeros["funnel_day_pairs"] && pruned["registration_day_pairs"] == zeros["registration_day_pairs"])
                return held
            }
            #expect(held.count == 1)
            #expect(try await Self.zeroPairs(client) == ["active_day_pairs": 1, "funnel_day_pairs": 0, "registration_day_pairs": 0])
            #expect(try #require(try await pruning.pass(Self.policy, now: Self.now))["active_day_pairs"] == 1)
            #expect(try await Self.zeroPairs(client) == ["active_day_pairs": 0, "funnel_day_pairs": 0, "registration_day_pairs": 0])
            // Only the rows at 0 went; every report over every range answers what it did.
            let keptAfter = try await [kept("active_day_pairs", "members"), kept("funnel_day_pairs", "devices"), kept("registration_day_pairs", "members")]
            #expect(keptAfter == keptBefore)
            let after = try await Self.everyReport(client, days: days, tour: tour)
            #expect(after.count == answers.count)
            for key in answers.keys.sorted() where after[key] != answers[key] {
                Issue.record("\(key): \(answers[key]!) before, \(after[key] ?? "none") after")
            }

            // Pairs whose rows were deleted come back through the upserts: phone registered as ios again moves its pairs back
            // into the ios rows deleted above (its android ones go to 0, and the next pass deletes them).
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(back), topic: "t", nextOffsets: [:]))
            #expect(try await Self.zeroPairs(client)["registration_day_pairs"] ?? 0 > 0)
            let truth = Truth(events: batches.flatMap { $0 } + back)
            let queries = days.flatMap { from in (from...days.upperBound).flatMap { to in
                [nil, tour].map { ReportQuery(from: Day(number: Int32(from)), to: Day(number: Int32(to)), tourId: $0) } } }
            let reports = PostgresReportRepository(client: client, schema: .live, logger: logger)
            try await AnalyticsHarness.expectReports(reports, equal: truth, for: queries)
            let answersBack = try await Self.everyReport(client, days: days, tour: tour)
            #expect(try #require(try await pruning.pass(Self.policy, now: Self.now))["registration_day_pairs"] ?? 0 > 0)
            #expect(try await Self.zeroPairs(client).values.allSatisfy { $0 == 0 })
            #expect(try await Self.everyReport(client, days: days, tour: tour) == answersBack)
            try await AnalyticsHarness.expectReports(reports, equal: truth, for: queries)
            #expect(try await ActivityRaceTests.pairMismatches(client) == 0)
            #expect(try await DevicesReportTests.pairMismatches(client) == 0)
            #expect(try await FunnelPairsTests.mismatches(client) == 0)
        }
    }

    @Test("the dedupe window follows the retention tracking.events has on the broker; one it does not report keeps ids as long as events")
    func dedupeWindowFromBroker() async throws {
        let harness = try await AnalyticsHarness.make()
        let policy = RetentionPolicy(eventDays: 400)
        // Topic.all as the services create it: 7 days, the default roll, 30 days late, a day's margin.
        let standard = try await harness.producer.topicConfig(harness.trackingTopic)
        #expect(standard["retention.ms"] == "604800000")
        #expect(policy.dedupeDays(topicConfig: standard).days == 45 && RetentionPolicy.standardDedupeDays == 45)
        let day = 86_400_000
        try await harness.producer.createTopics([
            KafkaTopicSpec(name: "month", partitions: 1, config: ["retention.ms": String(30 * day)]),
            KafkaTopicSpec(name: "rolled", partitions: 1, config: ["retention.ms": String(10 * day), "segment.ms": String(day / 2)]),
            KafkaTopicSpec(name: "forever", partitions: 1, config: ["retention.ms": "-1"]),
            KafkaTopicSpec(name: "unsaid", partitions: 1),
            KafkaTopicSpec(name: "longest", partitions: 1, config: ["retention.ms": String(Int64.max)]),
        ])
        let month = try await harness.producer.topicConfig(harness.kafka.topic("month"))
        #expect(policy.dedupeDays(topicConfig: month).days == 30 + 30 + 7 + 1)
        let rolled = try await harness.producer.topicConfig(harness.kafka.topic("rolled"))
        #expect(policy.dedupeDays(topicConfig: rolled).days == 30 + 11 + 1)
        let forever = try await harness.producer.topicConfig(harness.kafka.topic("forever"))
        #expect(policy.dedupeDays(topicConfig: forever).days == policy.eventDays)
        // tansu reports only what a topic was created with; Apache Kafka reports its broker default (7 days).
        let unsaid = try await harness.producer.topicConfig(harness.kafka.topic("unsaid"))
        #expect(policy.dedupeDays(topicConfig: unsaid).days == (unsaid["retention.ms"] == nil ? policy.eventDays : 45), "\(unsaid)")
        // "Kept for ever" as Long.MAX: a century, no overflow of a day number, and a cutoff that prunes nothing.
        let longest = try await harness.producer.topicConfig(harness.kafka.topic("longest"))
        #expect(policy.dedupeDays(topicConfig: longest).days == RetentionPolicy.maximumDays)
        #expect(RetentionPolicy(eventDays: 400, dedupeDays: RetentionPolicy.maximumDays).firstDedupeDay(now: Self.now)!.description < "1970-01-01")

        // The service's pass asks the broker: ids counted 50 days ago stay for the month-long topic, go for the standard one.
        try await Self.withStore { client, store in
            let logger = TestServices.logger
            let events = (0..<4).map { TrackingEvent(type: .poiViewed, deviceId: "d\($0)", occurredAt: Self.now.addingTimeInterval(-3_600), poiId: UUID(), via: .map) }
            _ = try await store.apply(IngestBatch(events: Self.pseudonyms.pseudonymized(events), topic: "t", nextOffsets: [0: 4]))
            let counted = Day(containing: Self.now).adding(days: -50).description
            try await client.query("UPDATE analytics.processed_events SET counted_on = \(counted)::date WHERE id = ANY(\(events.prefix(2).map(\.id)))",
                                   logger: logger)
            let pruning = PostgresPruningStore(client: client, schema: .live, logger: logger)
            let oldest = try KafkaOldestMessage(configuration: harness.kafka)
            func service(_ topic: String, now: Date = Self.now) -> PruningService {
                let producer = harness.producer, full = harness.kafka.topic(topic)
                return PruningService(store: pruning, policy: policy, topicConfig: { try await producer.topicConfig(full) },
                                      oldestMessage: { try await oldest.sent(topic: full) }, logger: logger, now: { now })
            }
            let kept = await service("month").policyNow()
            #expect(kept.dedupeDays == 68)
            #expect(try #require(try await pruning.pass(kept, now: Self.now))["processed_events"] == 0)
            // A broker that cannot be asked: no id pruned (never a guess shorter than what the topic may redeliver).
            var unreachable = harness.kafka
            unreachable.brokers = "127.0.0.1:1"
            let nowhere = try KafkaProducer(configuration: unreachable, logger: logger)
            let blind = await PruningService(store: pruning, policy: policy, topicConfig: { try await nowhere.topicConfig("x", timeout: .seconds(1)) },
                                             oldestMessage: { nil }, logger: logger, now: { Self.now }).policyNow()
            #expect(blind.dedupeDays == nil)
            #expect(try #require(try await pruning.pass(blind, now: Self.now))["processed_events"] == nil)
            let standardPass = await service(Topic.trackingEvents).policyNow()
            #expect(standardPass.dedupeDays == 45)
            #expect(try #require(try await pruning.pass(standardPass, now: Self.now))["processed_events"] == 2)
            let ids: [UUID] = try await client.fetch("SELECT id FROM analytics.processed_events", as: UUID.self, logger: logger)
            #expect(Set(ids) == Set(events.suffix(2).map(\.id)))

            // A topic that still holds a message older than its retention says (a broker that keeps past it; here: a pass
            // 100 days from now, the message sent today): a consumer reading from the start would get it again, so the ids
            // it may repeat stay, from 30 days before it was sent on.
            try await harness.produce([events[0]])
            let later = Date().addingTimeInterval(100 * 86_400)
            let held = await service(Topic.trackingEvents, now: later).policyNow()
            // 100 days after the send, plus one when a UTC midnight fell between the send and `later`.
            #expect((100 + 30 + 1...100 + 30 + 2).contains(held.dedupeDays ?? 0))
            #expect(held.firstDedupeDay(now: later)! <= Day(containing: Date()).adding(days: -30))
            #expect(await service(Topic.trackingEvents).policyNow().dedupeDays == 45)
        }
    }
}
