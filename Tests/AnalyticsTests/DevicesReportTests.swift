import Foundation
import HummingbirdTesting
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// The devices report from day pairs per registration (migration 16, docs/ANALYTICS.md "Distinct counts from day pairs"):
/// a device's latest registration decides its bucket for all its days, however its registrations and days arrive, and
/// whichever of two batches at once moves its registration or adds its days.
@Suite("Devices report from day pairs per registration", .serialized, .stopsIfHung)
struct DevicesReportTests {
    static let logger = TestServices.logger
    static let platforms = ["ios", "android"], models = ["iPhone 15", "Pixel 8", "=cmd|' /C calc'!A0"], versions = ["17.4", "14"]

    static func registration(_ device: String, at: Date, random: inout SplitMix) -> TrackingEvent {
        var event = TrackingEvent(type: .deviceRegistered, deviceId: device, occurredAt: at, platform: platforms[random.next(2)],
                                  osVersion: versions[random.next(2)], model: models[random.next(3)], appVersion: ["2.0.0", "2.1.0"][random.next(2)])
        event.id = random.uuid()
        return event
    }

    /// Rows where the stored pairs per registration differ from the pairs `day_pairs` gives each activity row in the bucket
    /// of its device's registration now (each side's surplus).
    static func pairMismatches(_ client: PostgresClient) async throws -> Int {
        try await client.fetch("""
            WITH stored AS (
                SELECT scope, day, previous, registration, members FROM analytics.registration_day_pairs WHERE members <> 0
            ), rebuilt AS (
                SELECT a.scope, p.day, p.previous, analytics.registration_key(r.platform, r.model, r.os_version, r.app_version) AS registration,
                       count(*) AS members
                FROM analytics.device_activity a LEFT JOIN analytics.devices r ON r.device_id = a.device_id, analytics.day_pairs(a.days) p
                GROUP BY 1, 2, 3, 4
            )
            SELECT ((SELECT count(*) FROM (SELECT * FROM stored EXCEPT ALL SELECT * FROM rebuilt) a)
                  + (SELECT count(*) FROM (SELECT * FROM rebuilt EXCEPT ALL SELECT * FROM stored) b))::bigint
            """, as: Int.self, logger: logger).first ?? -1
    }

    /// Devices re-registered many times with other values, older registrations arriving after newer ones, two at the same
    /// instant (the larger event id wins), devices first registered long after their first days (from `unknown`), others
    /// never; days with gaps, tour filters and credited devices.
    @Test("the devices report equals the truth with re-registrations, late older ones, ties, gaps, tours and credited devices")
    func reRegistrations() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 31, count: 2_500, devices: 150, days: 20)
        var random = SplitMix(seed: 331)
        let span = workload.lastDay.number - workload.firstDay.number
        func instant(_ random: inout SplitMix) -> Date {
            Date(timeIntervalSince1970: Double(Int(workload.firstDay.adding(days: random.next(Int(span) + 1)).start.timeIntervalSince1970)
                                              + random.next(86_000)))
        }
        var early: [TrackingEvent] = [], late: [TrackingEvent] = []
        var devices = Set(workload.events.map(\.deviceId)).sorted()
        random.shuffle(&devices)
        for (index, device) in devices.enumerated() {
            switch index % 5 {
            case 0:
                // Newer ones first, then older ones: each older one must change nothing.
                let times = (0..<4).map { _ in instant(&random) }.sorted()
                early += times.suffix(2).map { Self.registration(device, at: $0, random: &random) }
                late += times.prefix(2).map { Self.registration(device, at: $0, random: &random) }
            case 1:
                // Two at one instant with other values, in either order: the larger id wins.
                let at = instant(&random)
                let pair = [Self.registration(device, at: at, random: &random), Self.registration(device, at: at, random: &random)]
                early.append(pair[random.next(2)])
                late.append(contentsOf: pair)
            case 2:
                // Registered only after all its days were counted: every day moves from `unknown`.
                late.append(Self.registration(device, at: instant(&random), random: &random))
            default: break
            }
        }
        // Devices of case 2 registered only late, those of case 4 never: the workload's own registrations of them left out.
        let withoutOwn = Set(devices.enumerated().filter { $0.offset % 5 == 2 || $0.offset % 5 == 4 }.map(\.element))
        let unregistered = workload.events.filter { $0.type != .deviceRegistered || !withoutOwn.contains($0.deviceId) }
        let events = unregistered + early + late
        let truth = Truth(events: events, names: try await harness.saveCatalog(workload))
        #expect(truth.creditedCount(in: events) > 50)
        let base = Workload.deliveries(of: unregistered + early, seed: 332), lateOnes = late
        try await harness.app(batchSize: 41).test(.router) { client in
            try await harness.produce(base)
            try await harness.waitUntilCounted(Truth(events: base).all.count)
            try await harness.produce(lateOnes + Array(lateOnes.prefix(10)))
            try await harness.waitUntilCounted(truth.all.count)
            let queries = workload.queries(seed: 33, count: 12)
            for query in queries {
                #expect(try await AnalyticsHarness.get(client, "devices", query, as: DeviceReport.self) == truth.devices(query), "\(query)")
            }
            // The unknown bucket moved: registered-later devices left it, never-registered ones are still in it.
            let whole = ReportQuery(from: workload.firstDay, to: workload.lastDay)
            let report = try await AnalyticsHarness.get(client, "devices", whole, as: DeviceReport.self)
            #expect(report.platforms["unknown"] == truth.devices(whole).platforms["unknown"] && (report.platforms["unknown"] ?? 0) > 0)
            let mismatches = try await harness.withPostgres { postgres in try await Self.pairMismatches(postgres) }
            #expect(mismatches == 0)
        }
    }

    static func store(_ client: PostgresClient) -> PostgresIngestStore { PostgresIngestStore(client: client, schema: .live, logger: logger) }

    static func registered(_ device: String, day: String, platform: String) -> TrackingEvent {
        TrackingEvent(type: .deviceRegistered, deviceId: device, occurredAt: Day(day)!.start.addingTimeInterval(9 * 3_600),
                      platform: platform, osVersion: "18.0", model: "m-\(platform)", appVersion: "3.0.0")
    }

    static func platforms(_ client: PostgresClient, from: String, to: String, tour: UUID? = nil) async throws -> [String: Int] {
        try await PostgresReportRepository(client: client, schema: .live, logger: logger)
            .devices(ReportQuery(from: Day(from)!, to: Day(to)!, tourId: tour)).platforms
    }

    @Test("a registration moved by one batch while another adds the device's days, in either order: every pair ends in the new bucket")
    func moveWhileAddingDays() async throws {
        let tour = UUID()
        for registrationFirst in [true, false] {
            try await ActivityRaceTests.withFreshSchema { client in
                var onTour = ActivityRaceTests.event("phone", day: "2026-06-02")
                onTour.tourId = tour
                #expect(try await Self.store(client).apply(ActivityRaceTests.batch([Self.registered("phone", day: "2026-06-01", platform: "ios"),
                                                                                     onTour])) == .applied(new: 2, duplicates: 0))
                let move = ActivityRaceTests.batch([Self.registered("phone", day: "2026-06-03", platform: "android")])
                var later = ActivityRaceTests.event("phone", day: "2026-06-05")
                later.tourId = tour
                let days = ActivityRaceTests.batch([later])
                let outcome = try await ActivityRaceTests.interleave(client, first: registrationFirst ? move : days,
                                                                     second: registrationFirst ? days : move)
                guard case .success(let applied) = outcome else { Issue.record("the waiting batch failed: \(outcome)"); return }
                #expect(applied == .applied(new: 1, duplicates: 0))
                #expect(try await Self.pairMismatches(client) == 0, "registration first: \(registrationFirst)")
                #expect(try await Self.platforms(client, from: "2026-06-01", to: "2026-06-30") == ["android": 1])
                #expect(try await Self.platforms(client, from: "2026-06-04", to: "2026-06-30", tour: tour) == ["android": 1])
            }
        }
    }

    @Test("a device new to both batches, one registering it: the later batch is applied again and its pairs land in the bucket")
    func newDeviceRace() async throws {
        try await ActivityRaceTests.withFreshSchema { client in
            let outcome = try await ActivityRaceTests.interleave(client, first: ActivityRaceTests.batch([Self.registered("phone", day: "2026-06-05", platform: "ios")]),
                                                                 second: ActivityRaceTests.batch([ActivityRaceTests.event("phone", day: "2026-06-03")]))
            guard case .failure(let error) = outcome else { Issue.record("the racing batch was applied: \(outcome)"); return }
            #expect(((error as? PostgresTransactionError)?.closureError ?? error) is ActivityRace, "\(error)")
            #expect(try await Self.store(client).apply(ActivityRaceTests.batch([ActivityRaceTests.event("phone", day: "2026-06-03")]))
                    == .applied(new: 1, duplicates: 0))
            #expect(try await Self.pairMismatches(client) == 0)
            #expect(try await Self.platforms(client, from: "2026-06-01", to: "2026-06-04") == ["ios": 1])
        }
    }

    @Test("an erasure takes the device's pairs out of its registration's bucket; the others stay")
    func erasure() async throws {
        try await ActivityRaceTests.withFreshSchema { client in
            let erased = AnalyticsHarness.pseudonyms.pseudonym("phone")
            _ = try await Self.store(client).apply(ActivityRaceTests.batch([
                Self.registered("phone", day: "2026-06-01", platform: "ios"), ActivityRaceTests.event("phone", day: "2026-06-04"),
                Self.registered("other", day: "2026-06-02", platform: "ios"), ActivityRaceTests.event("quiet", day: "2026-06-04"),
            ]))
            #expect(try await Self.platforms(client, from: "2026-06-01", to: "2026-06-30") == ["ios": 2, "unknown": 1])
            let removed = try await PostgresErasureStore(client: client, schema: .live, logger: Self.logger)
                .erase(pseudonym: erased, requestedBy: "test", reason: "test", clientAddress: "127.0.0.1").removed
            #expect(removed["registration_day_pairs"] == 2)
            #expect(try await Self.platforms(client, from: "2026-06-01", to: "2026-06-30") == ["ios": 1, "unknown": 1])
            #expect(try await Self.pairMismatches(client) == 0)
        }
    }

    @Test("migration 16 builds the pairs of the activity and registrations counted before it")
    func migration() async throws {
        try await AnalyticsHarness.withMigratedDatabase { client in
            let workload = Workload(seed: 41, count: 1_500, devices: 60, days: 12)
            _ = try await Self.store(client).apply(IngestBatch(events: AnalyticsHarness.pseudonyms.pseudonymized(workload.events), topic: "t",
                                                              nextOffsets: [0: 1]))
            // As the schema was before 16, with the rows counted: its tables and function gone, then it applied again.
            try await client.query("DROP TABLE analytics.registration_day_pairs, analytics.registrations", logger: Self.logger)
            try await client.query("DROP FUNCTION analytics.registration_key", logger: Self.logger)
            try await client.query("DELETE FROM analytics.schema_migrations WHERE version = 16", logger: Self.logger)
            #expect(try await AnalyticsMigrations.runner.run(on: client, logger: Self.logger) == [16])
            #expect(try await Self.pairMismatches(client) == 0)
            let repository = PostgresReportRepository(client: client, schema: .live, logger: Self.logger)
            let truth = Truth(events: workload.events)
            for query in workload.queries(seed: 42, count: 4) {
                #expect(try await repository.devices(query) == truth.devices(query), "\(query)")
            }
        }
    }
}

extension Workload {
    /// `events` once or more, shuffled (as `deliveries(seed:)` does for a workload's own).
    static func deliveries(of events: [TrackingEvent], seed: UInt64) -> [TrackingEvent] {
        var random = SplitMix(seed: seed)
        var deliveries: [TrackingEvent] = []
        for event in events {
            deliveries.append(event)
            if random.next(4) == 0 { deliveries.append(event) }
        }
        random.shuffle(&deliveries)
        return deliveries
    }
}
