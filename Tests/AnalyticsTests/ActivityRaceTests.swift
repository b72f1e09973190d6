import Foundation
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// Two replicas counting the same device at once (its events on two partitions): the activity rows and the day pairs
/// built from them (docs/ANALYTICS.md "Distinct counts from day pairs") stay what one writer would have left.
@Suite("Analytics activity written by two batches at once", .serialized, .stopsIfHung)
struct ActivityRaceTests {
    static let pseudonyms = AnalyticsHarness.pseudonyms
    static let logger = TestServices.logger

    static func event(_ device: String, day: String) -> TrackingEvent {
        TrackingEvent(type: .poiViewed, deviceId: device, occurredAt: Day(day)!.start.addingTimeInterval(10 * 3_600), poiId: UUID(), via: .map)
    }

    static func batch(_ events: [TrackingEvent]) -> IngestBatch {
        IngestBatch(events: pseudonyms.pseudonymized(events), topic: "t", nextOffsets: [:])
    }

    /// Rows where the stored pairs differ from the pairs `day_pairs` gives the activity rows (each side's surplus).
    static func pairMismatches(_ client: PostgresClient) async throws -> Int {
        try await client.fetch("""
            WITH stored AS (
                SELECT scope, kind, day, previous, members FROM analytics.active_day_pairs WHERE members <> 0
            ), rebuilt AS (
                SELECT scope, kind, day, previous, count(*) AS members FROM (
                    SELECT a.scope, 'd'::"char" AS kind, p.day, p.previous FROM analytics.device_activity a, analytics.day_pairs(a.days) p
                    UNION ALL
                    SELECT a.scope, 't'::"char", p.day, p.previous FROM analytics.tourist_activity a, analytics.day_pairs(a.days) p
                ) x GROUP BY 1, 2, 3, 4
            )
            SELECT ((SELECT count(*) FROM (SELECT * FROM stored EXCEPT ALL SELECT * FROM rebuilt) a)
                  + (SELECT count(*) FROM (SELECT * FROM rebuilt EXCEPT ALL SELECT * FROM stored) b))::bigint
            """, as: Int.self, logger: logger).first ?? -1
    }

    static func withFreshSchema(_ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            try await IdConversion(client: client, schema: .live, pseudonyms: pseudonyms, logger: logger).run()
            try await body(client)
        }
    }

    /// Runs `first` until it is about to commit, then `second` until it waits on a row `first` holds, then lets `first`
    /// commit; returns how `second` ended.
    /// Returns once a backend of this database waits on a lock: the second transaction is waiting on the first's row
    /// lock (never a guess by time); fails with `never` after 10 s.
    static func untilWaitingOnLock(_ client: PostgresClient, _ never: Comment) async throws {
        var waited = 0
        while try await client.fetch("""
            SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
            """, as: Int.self, logger: logger).first ?? 0 == 0 {
            waited += 1
            try #require(waited < 200, never)
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func interleave(_ client: PostgresClient, first: IngestBatch, second: IngestBatch) async throws -> Result<ApplyOutcome, any Error> {
        let (reached, reachedSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        var holding = PostgresIngestStore(client: client, schema: .live, logger: logger)
        holding.beforeCommit = {
            reachedSignal.yield()
            for await _ in release { break }
        }
        let waiting = PostgresIngestStore(client: client, schema: .live, logger: logger)
        let held = Task { [holding] in try await holding.apply(first) }
        for await _ in reached { break }
        let blocked = Task { () -> Result<ApplyOutcome, any Error> in
            do { return .success(try await waiting.apply(second)) } catch { return .failure(error) }
        }
        try await untilWaitingOnLock(client, "the second batch never waited on the first")
        releaseSignal.yield()
        _ = try await held.value
        return await blocked.value
    }

    @Test("a device new to both batches: the later one finds the row inserted under it, is rolled back and applied again")
    func newRowRace() async throws {
        try await Self.withFreshSchema { client in
            let outcome = try await Self.interleave(client, first: Self.batch([Self.event("phone", day: "2026-06-05")]),
                                                    second: Self.batch([Self.event("phone", day: "2026-06-03")]))
            guard case .failure(let error) = outcome else { Issue.record("the racing batch was applied: \(outcome)"); return }
            #expect(((error as? PostgresTransactionError)?.closureError ?? error) is ActivityRace, "\(error)")
            // Nothing of the refused batch stayed; applied again, it reads the row the first one committed.
            #expect(try await client.fetch("SELECT count(*)::bigint FROM analytics.processed_events", as: Int.self, logger: Self.logger).first == 1)
            let again = try await PostgresIngestStore(client: client, schema: .live, logger: Self.logger)
                .apply(Self.batch([Self.event("phone", day: "2026-06-03")]))
            #expect(again == .applied(new: 1, duplicates: 0))
            let days = try await client.fetch("""
                SELECT days::text FROM analytics.device_activity WHERE scope = \(AggregateDelta.Scope.all)
                """, as: String.self, logger: Self.logger)
            #expect(days == ["{[2026-06-03,2026-06-04),[2026-06-05,2026-06-06)}"])
            #expect(try await Self.pairMismatches(client) == 0)
        }
    }

    @Test("a device both batches already had: the later one waits for the row and adds its day to the days committed")
    func existingRowRace() async throws {
        try await Self.withFreshSchema { client in
            let store = PostgresIngestStore(client: client, schema: .live, logger: Self.logger)
            _ = try await store.apply(Self.batch([Self.event("phone", day: "2026-06-01")]))
            let outcome = try await Self.interleave(client, first: Self.batch([Self.event("phone", day: "2026-06-05")]),
                                                    second: Self.batch([Self.event("phone", day: "2026-06-03")]))
            guard case .success(let applied) = outcome else { Issue.record("the waiting batch failed: \(outcome)"); return }
            #expect(applied == .applied(new: 1, duplicates: 0))
            let days = try await client.fetch("""
                SELECT days::text FROM analytics.device_activity WHERE scope = \(AggregateDelta.Scope.all)
                """, as: String.self, logger: Self.logger)
            #expect(days == ["{[2026-06-01,2026-06-02),[2026-06-03,2026-06-04),[2026-06-05,2026-06-06)}"])
            // Day 5's previous day is 3 now, not 1: the waiting batch read the days the first one committed.
            #expect(try await Self.pairMismatches(client) == 0)
            let fifth = try await client.fetch("""
                SELECT previous::text FROM analytics.active_day_pairs
                WHERE scope = \(AggregateDelta.Scope.all) AND kind = 'd' AND day = '2026-06-05' AND members = 1
                """, as: String.self, logger: Self.logger)
            #expect(fifth == ["2026-06-03"])
        }
    }
}
