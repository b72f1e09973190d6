import Foundation
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

@Suite("Analytics schema", .stopsIfHung)
struct MigrationTests {
    /// Up to the version before ids were hashed: these upgrades' own checks read raw ids (PrivacyTests converts them).
    static let throughEleven = MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 11 })

    /// The rest of the migrations and the id conversion after them, as a start-up runs them: what the reports read now
    /// (distinct counts from migration 14's day pairs, built from the rows migration 12 set aside).
    static func upgradeToLatest(_ client: PostgresClient) async throws {
        try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
        try await IdConversion(client: client, schema: .live, pseudonyms: AnalyticsHarness.pseudonyms, logger: TestServices.logger).run()
    }

    @Test("the analytics migrations apply to a fresh database, and again as a no-op")
    func migrations() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let applied = try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            #expect(applied == AnalyticsMigrations.runner.migrations.map(\.version))
            #expect(try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger).isEmpty)
        }
    }
}

@Suite("Analytics schema upgrades", .stopsIfHung)
struct MigrationUpgradeTests {
    @Test("v4 turns the per-day device and tourist rows of v2 into day ranges, v5 counts devices per day from them; the reports read the same")
    func activityBackfill() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 3 }).run(on: client, logger: logger)
            let tour = UUID(), all = AggregateDelta.Scope.all
            for (scope, day, device) in [(all, "2025-03-01", "a"), (all, "2025-03-02", "a"), (all, "2025-03-05", "a"), (all, "2025-03-02", "b"),
                                         (tour, "2025-03-02", "b")] {
                try await client.query("INSERT INTO analytics.day_devices VALUES (\(scope), \(day)::date, \(device))", logger: logger)
            }
            try await client.query("INSERT INTO analytics.day_tourists VALUES (\(all), '2025-03-02', 't')", logger: logger)
            #expect(try await MigrationTests.throughEleven.run(on: client, logger: logger) == [4, 5, 6, 7, 8, 9, 10, 11])
            let rows = try await client.fetch("SELECT device_id, days::text FROM analytics.device_activity WHERE scope = \(all) ORDER BY 1",
                                              as: (String, String).self, logger: logger)
            #expect(rows.map(\.0) == ["a", "b"])
            #expect(rows.map(\.1) == ["{[2025-03-01,2025-03-03),[2025-03-05,2025-03-06)}", "{[2025-03-02,2025-03-03)}"])
            try await MigrationTests.upgradeToLatest(client)
            let reports = PostgresReportRepository(client: client, schema: .live, logger: logger)
            let march = ReportQuery(from: Day("2025-03-01")!, to: Day("2025-03-05")!)
            #expect(try await reports.summary(march).uniqueDevices == 2)
            #expect(try await reports.summary(march).uniqueTourists == 1)
            #expect(try await reports.summary(ReportQuery(from: Day("2025-03-03")!, to: Day("2025-03-04")!)).uniqueDevices == 0)
            #expect(try await reports.daily(march).map(\.uniqueDevices) == [1, 2, 0, 0, 1])
            #expect(try await reports.tours(march).map(\.uniqueDevices) == [1])
        }
    }

    @Test("v8 keeps the members credited events add to a tour's days, from the credited events stored before it; the reports read the same")
    func creditedMembersBackfill() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 7 }).run(on: client, logger: logger)
            let tour = UUID(), all = AggregateDelta.Scope.all
            // Device "a" carries the tour itself on 03-02; "b" only through credited events (two on 03-02, one on 03-03),
            // "c" has a credited event that is credited to no tour now.
            try await client.query("""
                INSERT INTO analytics.device_activity VALUES (\(tour), 'a', '{[2025-03-02,2025-03-03)}'), (\(all), 'a', '{[2025-03-02,2025-03-03)}'),
                    (\(all), 'b', '{[2025-03-02,2025-03-04)}'), (\(all), 'c', '{[2025-03-02,2025-03-03)}')
                """, logger: logger)
            try await client.query("INSERT INTO analytics.device_days VALUES (\(tour), '2025-03-02', 'a')", logger: logger)
            // Its counter, as the ingest keeps it beside device_days (the daily series reads it).
            try await client.query("INSERT INTO analytics.day_device_counts VALUES (\(tour), '2025-03-02', 1)", logger: logger)
            try await client.query("INSERT INTO analytics.tourist_activity VALUES (\(tour), 'ta', '{[2025-03-02,2025-03-03)}')", logger: logger)
            for (device, tourist, at, credited) in [("a", "ta", "2025-03-02T10:00:00Z", tour), ("b", "tb", "2025-03-02T10:00:00Z", tour),
                                                     ("b", "tb", "2025-03-02T11:00:00Z", tour), ("b", nil, "2025-03-03T00:30:00Z", tour),
                                                     ("c", "tc", "2025-03-02T10:00:00Z", nil)] as [(String, String?, String, UUID?)] {
                try await client.query("""
                    INSERT INTO analytics.untoured_events (event_id, device_id, tourist_id, occurred_at, type, poi_id, tour_id)
                    VALUES (\(UUID()), \(device), \(tourist), \(at)::timestamptz, 'poi.viewed', \(UUID()), \(credited))
                    """, logger: logger)
            }
            #expect(try await MigrationTests.throughEleven.run(on: client, logger: logger) == [8, 9, 10, 11])
            let rows = try await client.fetch("""
                SELECT day::text, kind::text, member, events FROM analytics.credited_members WHERE tour_id = \(tour) ORDER BY 1, 2, 3
                """, as: (String, String, String, Int32).self, logger: logger)
            #expect(rows.map { "\($0.0) \($0.1) \($0.2) \($0.3)" } == ["2025-03-02 d b 2", "2025-03-02 t tb 2", "2025-03-03 d b 1"])
            try await MigrationTests.upgradeToLatest(client)
            let reports = PostgresReportRepository(client: client, schema: .live, logger: logger)
            let march = ReportQuery(from: Day("2025-03-01")!, to: Day("2025-03-05")!, tourId: tour)
            #expect(try await reports.summary(march).uniqueDevices == 2)
            #expect(try await reports.summary(march).uniqueTourists == 2)
            #expect(try await reports.daily(march).map(\.uniqueDevices) == [0, 2, 1, 0, 0])
            #expect(try await reports.tours(march).map(\.uniqueDevices) == [2])
            #expect(try await reports.devices(march).platforms == ["unknown": 2])
        }
    }

    @Test("v11 counts the tour starts and POI views counted before it under unknown, so the languages report sums to the summary")
    func languagesBackfill() async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            try await MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= 10 }).run(on: client, logger: logger)
            let tour = UUID(), otherTour = UUID(), poi = UUID(), all = AggregateDelta.Scope.all
            try await client.query("""
                INSERT INTO analytics.day_tour_stats VALUES ('2025-03-01', \(tour), 2, 1, 1, 60), ('2025-03-01', \(otherTour), 1, 0, 0, 0),
                    ('2025-03-03', \(tour), 0, 1, 1, 30)
                """, logger: logger)
            // The tour scope's views are also in the all-events scope: counted once.
            try await client.query("""
                INSERT INTO analytics.day_poi_stats VALUES (\(all), '2025-03-01', \(poi), 4, 1, 0, 0, 0), (\(tour), '2025-03-01', \(poi), 3, 1, 0, 0, 0),
                    (\(all), '2025-03-02', \(poi), 5, 0, 0, 0, 0)
                """, logger: logger)
            #expect(try await MigrationTests.throughEleven.run(on: client, logger: logger) == [11])
            let rows = try await client.fetch("SELECT day::text, language, tour_starts, poi_views FROM analytics.day_languages ORDER BY 1",
                                              as: (String, String, Int, Int).self, logger: logger)
            #expect(rows.map { "\($0.0) \($0.1) \($0.2) \($0.3)" } == ["2025-03-01 unknown 3 4", "2025-03-02 unknown 0 5"])
            try await MigrationTests.upgradeToLatest(client)
            let reports = PostgresReportRepository(client: client, schema: .live, logger: logger)
            let march = ReportQuery(from: Day("2025-03-01")!, to: Day("2025-03-05")!)
            #expect(try await reports.languages(march) == LanguageReport(languages: [LanguageRow(language: "unknown", tourStarts: 3, poiViews: 9)]))
            let summary = try await reports.summary(march)
            #expect(summary.toursStarted == 3 && summary.poiViews == 9)
        }
    }

    @Test("migrations 15 and 16 each wait for the id conversion's lock: neither is applied while a replica converts ids",
          arguments: [14, 15])
    func waitsForIdConversion(appliedBefore: Int) async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            let logger = TestServices.logger
            let before = MigrationRunner(schema: "analytics", migrations: AnalyticsMigrations.all.filter { $0.version <= appliedBefore })
            _ = try await before.run(on: client, logger: logger)
            // Held as IdConversion holds it while it moves a table's rows (a replica of the previous version converting).
            let (held, heldSignal) = AsyncStream<Void>.makeStream()
            let (release, releaseSignal) = AsyncStream<Void>.makeStream()
            defer { releaseSignal.yield() }
            let converting = Task {
                try await client.withConnection { connection in
                    try await connection.query("SELECT pg_advisory_lock(hashtext('itour.analytics.ids.analytics'))", logger: logger)
                    heldSignal.yield()
                    for await _ in release { break }
                    try await connection.query("SELECT pg_advisory_unlock(hashtext('itour.analytics.ids.analytics'))", logger: logger)
                }
            }
            for await _ in held { break }
            let upgrading = Task { try await AnalyticsMigrations.runner.run(on: client, logger: logger) }
            try await ActivityRaceTests.untilWaitingOnLock(client, "the upgrade never waited for the conversion's lock")
            let applied = try await client.fetch("SELECT max(version) FROM analytics.schema_migrations", as: Int.self, logger: logger)
            #expect(applied == [appliedBefore], "a migration was applied while ids were being converted")
            releaseSignal.yield()
            try await converting.value
            #expect(try await upgrading.value == AnalyticsMigrations.runner.migrations.map(\.version).filter { $0 > appliedBefore })
        }
    }
}
