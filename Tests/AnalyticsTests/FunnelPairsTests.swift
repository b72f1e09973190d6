import Foundation
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// The funnel's day pairs (migration 15, docs/ANALYTICS.md "Distinct counts from day pairs"): kept by the ingest as
/// credits move, by two replicas at once, taken out by an erasure, and built for the rows stored before the migration.
@Suite("Analytics funnel day pairs", .serialized, .stopsIfHung)
struct FunnelPairsTests {
    static let pseudonyms = AnalyticsHarness.pseudonyms
    static let logger = TestServices.logger
    static let tour = UUID(uuidString: "7A0F0000-0000-4000-8000-000000000001")!
    static let poi = UUID(uuidString: "7A0F0000-0000-4000-8000-000000000002")!

    /// Rows where the stored pairs differ from the pairs `day_pairs` gives the stored days, plus rows where the stored
    /// days differ from those the event-level tables give (each side's surplus): 0 when the ingest kept both exactly.
    static func mismatches(_ client: PostgresClient, schema: String = "analytics", checkingEvents: Bool = true) async throws -> Int {
        try await client.fetch(PostgresQuery(unsafeSQL: """
            WITH stored AS (
                SELECT tour_id, kind, poi_id, day, previous, devices FROM \(schema).funnel_day_pairs WHERE devices <> 0
            ), rebuilt AS (
                SELECT a.tour_id, a.kind, a.poi_id, p.day, p.previous, count(*) AS devices
                FROM \(schema).funnel_activity a, \(schema).day_pairs(a.days) p GROUP BY 1, 2, 3, 4, 5
            ), days AS (
                SELECT tour_id, kind, poi_id, device_id, days::text FROM \(schema).funnel_activity
            ), truth AS (
                SELECT tour_id, kind, poi_id, device_id, range_agg(daterange(day, day, '[]'))::text FROM (
                    SELECT tour_id, kind, '00000000-0000-0000-0000-000000000000'::uuid AS poi_id, device_id,
                           (occurred_at AT TIME ZONE 'UTC')::date AS day FROM \(schema).tour_marks
                    UNION ALL
                    SELECT tour_id, 'v', poi_id, device_id, day FROM \(schema).stop_visits
                    UNION ALL
                    SELECT tour_id, 'v', poi_id, device_id, (occurred_at AT TIME ZONE 'UTC')::date FROM \(schema).untoured_events
                    WHERE tour_id IS NOT NULL AND type = 'poi.arrived'
                ) steps GROUP BY 1, 2, 3, 4
            )
            SELECT ((SELECT count(*) FROM (SELECT * FROM stored EXCEPT ALL SELECT * FROM rebuilt) a)
                  + (SELECT count(*) FROM (SELECT * FROM rebuilt EXCEPT ALL SELECT * FROM stored) b)
                  + (SELECT count(*) FROM (SELECT * FROM days EXCEPT ALL SELECT * FROM truth) c WHERE \(checkingEvents))
                  + (SELECT count(*) FROM (SELECT * FROM truth EXCEPT ALL SELECT * FROM days) d WHERE \(checkingEvents)))::bigint
            """), as: Int.self, logger: logger).first ?? -1
    }

    static func at(_ day: String, _ hour: Double) -> Date { Day(day)!.start.addingTimeInterval(hour * 3_600) }

    static func apply(_ store: PostgresIngestStore, _ events: [TrackingEvent]) async throws {
        _ = try await store.apply(IngestBatch(events: pseudonyms.pseudonymized(events), topic: "t", nextOffsets: [:]))
    }

    static func funnel(_ client: PostgresClient, from: String, to: String) async throws -> FunnelReport {
        try await PostgresReportRepository(client: client, schema: .live, logger: logger)
            .funnel(ReportQuery(from: Day(from)!, to: Day(to)!, tourId: tour), tour: tour)
    }

    /// The funnel days of a tour.started of "phone" on `day`.
    static func started(_ day: String) -> FunnelDays {
        FunnelDays(events: pseudonyms.pseudonymized([TrackingEvent(type: .tourStarted, deviceId: "phone", occurredAt: at(day, 9), tourId: tour)]),
                   delta: AggregateDelta())
    }

    static func withStore(_ body: @Sendable (PostgresClient, PostgresIngestStore) async throws -> Void) async throws {
        try await ActivityRaceTests.withFreshSchema { client in
            try await client.query("""
                INSERT INTO analytics.catalog_names (entity_id, kind, name, version, stops) VALUES (\(tour), 'tour', 'Old town', 1, ARRAY[\(poi)]::uuid[])
                """, logger: logger)
            try await body(client, PostgresIngestStore(client: client, schema: .live, logger: logger))
        }
    }

    @Test("a credited arrival moved away by a late completion leaves the stop unless another arrival that day holds it")
    func creditsMoved() async throws {
        try await Self.withStore { client, store in
            // "a": started on the 1st and the 3rd, a tourless arrival on each (credited); "b": the same on the 1st, plus an
            // arrival carrying the tour that day.
            try await Self.apply(store, [
                TrackingEvent(type: .tourStarted, deviceId: "a", occurredAt: Self.at("2026-06-01", 9), tourId: Self.tour),
                TrackingEvent(type: .poiArrived, deviceId: "a", occurredAt: Self.at("2026-06-01", 10), poiId: Self.poi),
                TrackingEvent(type: .tourStarted, deviceId: "a", occurredAt: Self.at("2026-06-03", 9), tourId: Self.tour),
                TrackingEvent(type: .poiArrived, deviceId: "a", occurredAt: Self.at("2026-06-03", 10), poiId: Self.poi),
                TrackingEvent(type: .tourStarted, deviceId: "b", occurredAt: Self.at("2026-06-01", 9), tourId: Self.tour),
                TrackingEvent(type: .poiArrived, deviceId: "b", occurredAt: Self.at("2026-06-01", 10), poiId: Self.poi),
                TrackingEvent(type: .poiArrived, deviceId: "b", occurredAt: Self.at("2026-06-01", 9.5), tourId: Self.tour, poiId: Self.poi),
            ])
            #expect(try await Self.funnel(client, from: "2026-06-01", to: "2026-06-01").steps.map(\.devices) == [2])
            #expect(try await Self.funnel(client, from: "2026-06-02", to: "2026-06-03").steps.map(\.devices) == [1])
            // Late completions before the credited arrivals: they are credited to no tour now.
            try await Self.apply(store, [
                TrackingEvent(type: .tourCompleted, deviceId: "a", occurredAt: Self.at("2026-06-01", 9.9), tourId: Self.tour),
                TrackingEvent(type: .tourCompleted, deviceId: "b", occurredAt: Self.at("2026-06-01", 9.9), tourId: Self.tour),
            ])
            let first = try await Self.funnel(client, from: "2026-06-01", to: "2026-06-01")
            #expect(first.steps.map(\.devices) == [1], "b's own arrival holds its day; a's day left")
            #expect(first.started == 2 && first.completed == 2)
            // a's 3rd is now its first arrival: its pair's previous day moved from the 1st to none.
            #expect(try await Self.funnel(client, from: "2026-06-02", to: "2026-06-03").steps.map(\.devices) == [1])
            #expect(try await Self.funnel(client, from: "2026-06-01", to: "2026-06-03").steps.map(\.devices) == [2])
            #expect(try await Self.mismatches(client) == 0)

            // An erasure takes every pair of the device out (its started, completed and stop rows).
            let erasure = PostgresErasureStore(client: client, schema: .live, logger: Self.logger)
            let erased = try await erasure.erase(pseudonym: Self.pseudonyms.pseudonym("a"), requestedBy: "t", reason: "t", clientAddress: "t")
            #expect(erased.removed["funnel_activity"] == 3, "\(erased.removed)")
            let after = try await Self.funnel(client, from: "2026-06-01", to: "2026-06-03")
            #expect(after.started == 1 && after.completed == 1 && after.steps.map(\.devices) == [1])
            #expect(try await Self.mismatches(client) == 0)
        }
    }

    /// Through the ingest, two batches of one device wait on its device_activity row first, so the funnel's statement
    /// of the later one reads what the earlier committed; this drives the funnel's statement alone, as a batch would if
    /// nothing else serialised them.
    @Test("a funnel row new to both transactions: the later one finds the row inserted under it and refuses (the batch is applied again)")
    func newRowRace() async throws {
        try await Self.withStore { client, store in
            let (reached, reachedSignal) = AsyncStream<Void>.makeStream()
            let (release, releaseSignal) = AsyncStream<Void>.makeStream()
            let held = Task {
                try await client.withTransaction(logger: Self.logger) { connection in
                    try await store.writeFunnel(Self.started("2026-06-05"), schema: "analytics", on: connection)
                    reachedSignal.yield()
                    for await _ in release { break }
                }
            }
            for await _ in reached { break }
            let blocked = Task { () -> (any Error)? in
                do {
                    try await client.withTransaction(logger: Self.logger) { connection in
                        try await store.writeFunnel(Self.started("2026-06-03"), schema: "analytics", on: connection)
                    }
                    return nil
                } catch { return error }
            }
            try await ActivityRaceTests.untilWaitingOnLock(client, "the second transaction never waited on the first")
            releaseSignal.yield()
            try await held.value
            let error = await blocked.value
            let race = error.flatMap { (($0 as? PostgresTransactionError)?.closureError ?? $0) as? ActivityRace }
            #expect(race?.table == "funnel_activity", "\(String(describing: error))")
            // Nothing of the refused one stayed; applied again, it reads the committed row.
            #expect(try await Self.mismatches(client, checkingEvents: false) == 0)
            try await client.withTransaction(logger: Self.logger) { connection in
                try await store.writeFunnel(Self.started("2026-06-03"), schema: "analytics", on: connection)
            }
            let days = try await client.fetch("SELECT days::text FROM analytics.funnel_activity", as: String.self, logger: Self.logger)
            #expect(days == ["{[2026-06-03,2026-06-04),[2026-06-05,2026-06-06)}"])
            #expect(try await Self.funnel(client, from: "2026-06-04", to: "2026-06-05").started == 1)
            #expect(try await Self.funnel(client, from: "2026-06-01", to: "2026-06-05").started == 1)
            #expect(try await Self.mismatches(client, checkingEvents: false) == 0)
        }
    }

    @Test("a funnel row both batches already had: the later one waits for it and adds its day to the days committed")
    func existingRowRace() async throws {
        try await Self.withStore { client, store in
            try await Self.apply(store, [TrackingEvent(type: .tourStarted, deviceId: "phone", occurredAt: Self.at("2026-06-01", 9), tourId: Self.tour)])
            let start = { (day: String) in
                IngestBatch(events: Self.pseudonyms.pseudonymized([
                    TrackingEvent(type: .tourStarted, deviceId: "phone", occurredAt: Self.at(day, 9), tourId: Self.tour)]), topic: "t", nextOffsets: [:])
            }
            let outcome = try await ActivityRaceTests.interleave(client, first: start("2026-06-05"), second: start("2026-06-03"))
            guard case .success = outcome else { Issue.record("the waiting batch failed: \(outcome)"); return }
            // The 5th's previous day is the 3rd now: the waiting batch read the days the first one committed.
            let fifth = try await client.fetch("""
                SELECT previous::text FROM analytics.funnel_day_pairs WHERE tour_id = \(Self.tour) AND kind = 's' AND day = '2026-06-05' AND devices = 1
                """, as: String.self, logger: Self.logger)
            #expect(fifth == ["2026-06-03"])
            #expect(try await Self.funnel(client, from: "2026-06-04", to: "2026-06-05").started == 1)
            #expect(try await Self.funnel(client, from: "2026-06-02", to: "2026-06-05").started == 1)
            #expect(try await Self.mismatches(client) == 0)
        }
    }

    @Test("a credit moved A→B by one batch and B→C by another waiting on its row: the later one moves it from B, not from A")
    func creditMovedTwiceAtOnce() async throws {
        try await Self.withStore { client, store in
            let (a, b, c) = (UUID(), UUID(), Self.tour)
            let start = { (tour: UUID, hour: Double) in
                TrackingEvent(type: .tourStarted, deviceId: "phone", occurredAt: Self.at("2026-06-01", hour), tourId: tour)
            }
            // A tourless arrival at 10:00 credited to A (started at 8); then late starts of B (9:00) and C (9:30), each in
            // a batch of its own: B's moves it A→B, C's (waiting on the row B's holds) B→C.
            try await Self.apply(store, [start(a, 8), TrackingEvent(type: .poiArrived, deviceId: "phone", occurredAt: Self.at("2026-06-01", 10), poiId: Self.poi)])
            let batch = { (event: TrackingEvent) in IngestBatch(events: Self.pseudonyms.pseudonymized([event]), topic: "t", nextOffsets: [:]) }
            let outcome = try await ActivityRaceTests.interleave(client, first: batch(start(b, 9)), second: batch(start(c, 9.5)))
            guard case .success = outcome else { Issue.record("the waiting batch failed: \(outcome)"); return }
            let credited = try await client.fetch("""
                SELECT tour_id FROM analytics.untoured_events WHERE type = 'poi.arrived'
                """, as: UUID.self, logger: Self.logger)
            #expect(credited == [c])
            // Every tour's visits (the whole-app scope's besides) and funnel stop: C's only (B's left with the move, A's once).
            let visits = try await client.fetch("""
                SELECT scope::text || ':' || sum(visits) FROM analytics.day_poi_stats
                WHERE scope <> \(AggregateDelta.Scope.all) GROUP BY scope HAVING sum(visits) <> 0
                """, as: String.self, logger: Self.logger)
            #expect(visits == ["\(c.uuidString.lowercased()):1"])
            let stops = try await client.fetch("""
                SELECT tour_id FROM analytics.funnel_activity WHERE kind = 'v'
                """, as: UUID.self, logger: Self.logger)
            #expect(stops == [c])
            #expect(try await Self.funnel(client, from: "2026-06-01", to: "2026-06-01").steps.map(\.devices) == [1])
            #expect(try await Self.mismatches(client) == 0)
        }
    }

    @Test("v15 builds the funnel's days and pairs from the marks, arrivals and credited arrivals stored before it")
    func backfill() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = Self.logger
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 14 }).run(on: client, logger: logger)
            try await IdConversion(client: client, schema: .live, pseudonyms: Self.pseudonyms, logger: logger).run()
            try await client.query("""
                INSERT INTO analytics.catalog_names (entity_id, kind, name, version, stops) VALUES (\(Self.tour), 'tour', 'Old town', 1, ARRAY[\(Self.poi)]::uuid[])
                """, logger: logger)
            // As the version before stored them: "a" started on the 1st, a credited arrival that day, its own arrival on the 4th
            // and a completion; "b" its own arrival on the 2nd; "c" an arrival credited to no tour.
            let (a, b, c) = (UUID(), UUID(), UUID())
            try await client.query("""
                INSERT INTO analytics.tour_marks (device_id, occurred_at, event_id, kind, tour_id)
                VALUES (\(a), '2026-06-01T09:00:00Z', \(UUID()), 's', \(Self.tour)), (\(a), '2026-06-04T11:00:00Z', \(UUID()), 'c', \(Self.tour))
                """, logger: logger)
            try await client.query("""
                INSERT INTO analytics.untoured_events (event_id, device_id, occurred_at, type, poi_id, tour_id)
                VALUES (\(UUID()), \(a), '2026-06-01T10:00:00Z', 'poi.arrived', \(Self.poi), \(Self.tour)),
                       (\(UUID()), \(a), '2026-06-01T10:30:00Z', 'poi.viewed', \(Self.poi), \(Self.tour)),
                       (\(UUID()), \(c), '2026-06-03T10:00:00Z', 'poi.arrived', \(Self.poi), NULL)
                """, logger: logger)
            try await client.query("""
                INSERT INTO analytics.stop_visits (tour_id, poi_id, day, device_id)
                VALUES (\(Self.tour), \(Self.poi), '2026-06-04', \(a)), (\(Self.tour), \(Self.poi), '2026-06-02', \(b))
                """, logger: logger)
            #expect(try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all).run(on: client, logger: logger) == AnalyticsMigrations.all.map(\.version).filter { $0 >= 15 })
            #expect(try await Self.mismatches(client) == 0)
            let funnel = try await Self.funnel(client, from: "2026-06-01", to: "2026-06-04")
            #expect(funnel.started == 1 && funnel.completed == 1 && funnel.steps.map(\.devices) == [2])
            #expect(try await Self.funnel(client, from: "2026-06-02", to: "2026-06-04").steps.map(\.devices) == [2])
            #expect(try await Self.funnel(client, from: "2026-06-03", to: "2026-06-04").steps.map(\.devices) == [1])
        }
    }
}
