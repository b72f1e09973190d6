import Foundation
import HummingbirdTesting
import Logging
import PostgresNIO
import Shared
import Synchronization
import Testing
import TestSupport
@testable import Analytics

/// Every report against a truth computed from the raw events in the test, on random workloads delivered
/// with duplicates and in shuffled order, through the real broker, Postgres and service.
@Suite("Reports equal the truth", .serialized, .stopsIfHung)
struct ReportTruthTests {
    @Test("random workloads, duplicated and shuffled deliveries, small and large batches", arguments: [(UInt64(1), 97), (UInt64(2), 10_000)])
    func randomWorkload(seed: UInt64, batchSize: Int) async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: seed, count: 3_000)
        let deliveries = workload.deliveries(seed: seed + 100)
        let truth = Truth(events: workload.events, names: try await harness.saveCatalog(workload))
        // Many tourless events are credited to a tour, and the per-tour queries below count them.
        #expect(truth.creditedCount(in: workload.events) > 200)
        try await harness.app(batchSize: batchSize).test(.router) { client in
            // Half before the reader has even joined its group, half while it reads: both paths count once.
            try await harness.produce(Array(deliveries.prefix(deliveries.count / 2)))
            try await harness.waitUntilCounted(Truth(events: Array(deliveries.prefix(deliveries.count / 2))).all.count)
            try await harness.produce(Array(deliveries.dropFirst(deliveries.count / 2)))
            try await harness.waitUntilCounted(truth.all.count)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: seed), stops: workload.stops)

            // Delivered again, all of it, much later: nothing changes.
            try await harness.produce(workload.events)
            try await Task.sleep(for: .seconds(2))
            try await harness.waitUntilCounted(truth.all.count)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: seed).prefix(4).map { $0 }, stops: workload.stops)
        }
    }

    /// Few events per device over many days: devices come back after gaps, days arrive late between two active days (the
    /// shuffle), and late tour marks move credited devices between tours, so the day pairs distinct counts are kept as
    /// (migrations 14 and 15) change in every way they can.
    @Test("sparse activity: gaps, late days between active days, credited devices moved by re-attribution")
    func sparseActivity() async throws {
        let harness = try await AnalyticsHarness.make()
        let workload = Workload(seed: 11, count: 2_500, devices: 300, days: 24)
        let deliveries = workload.deliveries(seed: 111)
        let truth = Truth(events: workload.events, names: try await harness.saveCatalog(workload))
        var days: [String: Set<Int32>] = [:]
        for event in workload.events { days[event.deviceId, default: []].insert(Day(containing: event.occurredAt).number) }
        let gaps = days.values.filter { ($0.max()! - $0.min()! + 1) > Int32($0.count) }.count
        #expect(gaps > 100, "most devices come back after days away")
        #expect(truth.creditedCount(in: workload.events) > 50)
        try await harness.app(batchSize: 53).test(.router) { client in
            try await harness.produce(deliveries)
            try await harness.waitUntilCounted(truth.all.count)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 12, count: 16), stops: workload.stops)
            // The funnel's days are those its event-level rows give, and its day pairs those the days give (migration 15).
            #expect(try await harness.withPostgres { try await FunnelPairsTests.mismatches($0) } == 0)
        }
    }

    @Test("a reader killed mid-stream, with batches failing before commit, and restarted loses and double-counts nothing")
    func killedMidStream() async throws {
        let (harness, workload, truth) = try await AnalyticsHarness.loaded(seed: 7, count: 6_000, deliverySeed: 77)

        // First life: a reader with small batches whose every third transaction fails just before COMMIT,
        // cancelled (not drained) once about a third is counted.
        try await harness.withPostgres { client in
            try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            let attempts = TestCounter()
            let store = PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger) {
                if attempts.increment() % 3 == 0 { throw InjectedFault() }
            }
            let ingest = TrackingIngest(configuration: harness.kafka, store: store,
                                        deadLetters: DeadLetterSink(producer: harness.producer, consumerName: "analytics", logger: TestServices.logger),
                                        pseudonyms: AnalyticsHarness.pseudonyms, options: TrackingIngest.Options(batchSize: 150), logger: TestServices.logger)
            let reader = Task { try await ingest.run() }
            let partway = try await TestServices.eventually(timeout: .seconds(60), interval: .milliseconds(20)) {
                try await store.countedEvents() >= truth.all.count / 3
            }
            reader.cancel()
            _ = await reader.result
            try #require(partway)
            #expect(attempts.value >= 3, "faults were injected")
        }
        let afterFirstLife = try await harness.counted()
        #expect(afterFirstLife < truth.all.count, "the first reader stopped mid-stream")

        // Second life: the real service, same group, resumes from the offsets stored in Postgres.
        try await harness.app().test(.router) { client in
            try await harness.waitUntilCounted(truth.all.count)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 8))
        }
    }

    /// A cancelled ServiceGroup cancels the Postgres pool beside the ingest, and PostgresNIO leaves the query in
    /// flight unanswered: the ingest must not wait for it forever (a failing test used to hang the suite here). The
    /// batch it left is counted once after a restart.
    @Test("cancelled while it writes a batch (its Postgres pool cancelled with it), analytics still shuts down; restarted, it counts everything once")
    func cancelledMidBatch() async throws {
        let (harness, workload, truth) = try await AnalyticsHarness.loaded(seed: 3, count: 3_000, deliverySeed: 103)
        let app = try harness.app(batchSize: 97)
        let stopped = Atomic(false), ended = Atomic(false)
        struct Stop: Error {}
        let running = Task {
            await #expect(throws: Stop.self) {
                try await app.test(.router) { _ in
                    // Stopped as soon as counting has begun: thousands of messages remain, so a batch is being written.
                    let begun = try await harness.withPostgres { client in
                        try await TestServices.eventually(timeout: .seconds(120), interval: .milliseconds(10)) {
                            try await PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger).countedEvents() > 0
                        }
                    }
                    try #require(begun)
                    stopped.store(true, ordering: .releasing)
                    throw Stop()
                }
            }
            ended.store(true, ordering: .releasing)
        }
        _ = try await TestServices.eventually(timeout: .seconds(150), interval: .milliseconds(50)) { stopped.load(ordering: .acquiring) || ended.load(ordering: .acquiring) }
        let shutDown = try await TestServices.eventually(timeout: .seconds(60), interval: .milliseconds(100)) {
            ended.load(ordering: .acquiring)
        }
        #expect(shutDown, "the service had not shut down 60 s after it was cancelled mid-batch")
        guard shutDown else { return }
        await running.value
        #expect(try await harness.counted() < truth.all.count, "stopped before the end")

        try await harness.app(batchSize: 97).test(.router) { client in
            try await harness.waitUntilCounted(truth.all.count)
            try await AnalyticsHarness.expectReports(client, equal: truth, for: workload.queries(seed: 4).prefix(3).map { $0 })
        }
    }

    @Test("stored offsets move with the aggregates, never backwards; a reader behind the stored offsets is told so")
    func offsets() async throws {
        try await AnalyticsHarness.make().withLiveStore { (_: PostgresClient, store: PostgresIngestStore) async throws in
            let event = TrackingEvent(type: .tourStarted, deviceId: AnalyticsHarness.pseudonyms.pseudonym("d1"), occurredAt: Date(), tourId: UUID())
            #expect(try await store.apply(IngestBatch(events: [event, event], topic: "t", nextOffsets: [0: 10, 3: 5])) == .applied(new: 1, duplicates: 1))
            #expect(try await store.storedOffsets(topic: "t") == [0: 10, 3: 5])
            // An older reader's batch: counted ids stay counted, offsets do not go back.
            #expect(try await store.apply(IngestBatch(events: [event], topic: "t", nextOffsets: [0: 4])) == .applied(new: 0, duplicates: 1))
            #expect(try await store.storedOffsets(topic: "t") == [0: 10, 3: 5])
            // A reader that believes more is stored than is: nothing is written.
            let other = TrackingEvent(type: .tourStarted, deviceId: AnalyticsHarness.pseudonyms.pseudonym("d2"), occurredAt: Date(), tourId: UUID())
            #expect(try await store.apply(IngestBatch(events: [other], topic: "t", nextOffsets: [0: 20], expectedOffsets: [0: 12])) == .offsetsMovedBack)
            #expect(try await store.countedEvents() == 1)
            #expect(try await store.apply(IngestBatch(events: [other], topic: "t", nextOffsets: [0: 20], expectedOffsets: [0: 10])) == .applied(new: 1, duplicates: 0))
            #expect(try await store.storedOffsets(topic: "t") == [0: 20, 3: 5])
        }
    }
}

extension ReportTruthTests {
    @Test("a tour named before analytics kept stops gets them from the same version read again; an older version changes nothing")
    func stopsFilledIn() async throws {
        try await AnalyticsHarness.make().withLiveStore { (client: PostgresClient, store: PostgresIngestStore) async throws in
            let tour = UUID(), stops = [UUID(), UUID()]
            try await store.saveName(entityId: tour, kind: "tour", name: "Open Day", version: 3, stops: nil)
            try await store.saveName(entityId: tour, kind: "tour", name: "Open Day", version: 3, stops: stops)
            try await store.saveName(entityId: tour, kind: "tour", name: "Old name", version: 2, stops: [UUID()])
            let repository = PostgresReportRepository(client: client, schema: .live, logger: TestServices.logger)
            let funnel = try await repository.funnel(ReportQuery(from: Day(containing: Date()), to: Day(containing: Date()), tourId: tour), tour: tour)
            #expect(funnel.steps.map(\.poiId) == stops)
            #expect(try await client.fetch("SELECT name FROM analytics.catalog_names WHERE entity_id = \(tour)", as: String.self,
                                           logger: TestServices.logger) == ["Open Day"])
        }
    }
}

extension ReportTruthTests {
    @Test("a snapshot chunk's names go in one statement: of one entity's names in it the latest version wins, with stops over none; a newer name stored before stays")
    func namesOfAChunk() async throws {
        try await AnalyticsHarness.make().withLiveStore { (client: PostgresClient, store: PostgresIngestStore) async throws in
            let tour = UUID(), poi = UUID(), renamed = UUID(), stops = [UUID(), UUID()]
            try await store.saveName(entityId: renamed, kind: "poi", name: "Library, v5", version: 5, stops: nil)
            try await store.saveNames([
                CatalogName(entityId: tour, kind: "tour", name: "Open Day, v2", version: 2, stops: [UUID()]),
                CatalogName(entityId: tour, kind: "tour", name: "Open Day, v3", version: 3, stops: nil),
                CatalogName(entityId: tour, kind: "tour", name: "Open Day, v3", version: 3, stops: stops),
                CatalogName(entityId: tour, kind: "tour", name: "Open Day, v1", version: 1, stops: []),
                CatalogName(entityId: poi, kind: "poi", name: "Quad", version: 1, stops: nil),
                CatalogName(entityId: renamed, kind: "poi", name: "Library, v4", version: 4, stops: nil),
            ])
            let rows = try await client.fetch("SELECT entity_id, name, version, stops FROM analytics.catalog_names ORDER BY name",
                                              as: (UUID, String, Int, [UUID]?).self, logger: TestServices.logger)
            #expect(rows.map(\.0) == [renamed, tour, poi])
            #expect(rows.map(\.1) == ["Library, v5", "Open Day, v3", "Quad"])
            #expect(rows.map(\.2) == [5, 3, 1])
            #expect(rows.map(\.3) == [nil, stops, nil])
        }
    }
}

struct InjectedFault: Error {}

/// A thread-safe counter for test hooks.
final class TestCounter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}
