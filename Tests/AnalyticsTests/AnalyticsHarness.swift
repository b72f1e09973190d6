import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// One test's analytics: a fresh database and topic prefix on the real Postgres and broker, the real
/// service built by `buildApplication`, and helpers to feed it events and read its reports.
struct AnalyticsHarness: Sendable {
    static let token = "test-reports-token"
    static let erasureToken = "test-erasure-token"
    /// The tests' ANALYTICS_ID_KEY: every service and replay of a test hashes ids with it.
    static let pseudonyms = try! IdPseudonyms(key: "analytics-test-id-key-0123456789")

    let database: DatabaseSettings
    let kafka: KafkaConfiguration
    let producer: KafkaProducer

    static func make() async throws -> AnalyticsHarness {
        let kafka = TestServices.kafka(clientId: "analytics-test")
        // As the feed sends them: uncompressed.
        var feedLike = kafka
        feedLike.compressionCodec = "none"
        let producer = try KafkaProducer(configuration: feedLike, logger: TestServices.logger)
        try await producer.createTopics(Topic.all)
        return AnalyticsHarness(database: try await TestServices.freshDatabase(), kafka: kafka, producer: producer)
    }

    /// A fresh database with analytics' schema migrated, for tests of the store's SQL without the broker.
    static func withMigratedDatabase(_ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        let database = try await TestServices.freshDatabase()
        try await TestServices.withPostgres(database) { client in
            try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            try await body(client)
        }
    }

    /// A fresh harness with a workload's deliveries already on the topic (duplicated and shuffled), and its truth.
    static func loaded(seed: UInt64, count: Int, deliverySeed: UInt64) async throws -> (AnalyticsHarness, Workload, Truth) {
        let harness = try await make()
        let workload = Workload(seed: seed, count: count)
        try await harness.produce(workload.deliveries(seed: deliverySeed))
        return (harness, workload, Truth(events: workload.events))
    }

    func settings() throws -> ServiceSettings {
        try TestServices.serviceSettings(name: "analytics", database: database, kafka: kafka)
    }

    func app(batchSize: Int = 10_000) throws -> some ApplicationProtocol {
        var options = AnalyticsOptions(reportsToken: Self.token, pseudonyms: Self.pseudonyms)
        options.erasureToken = Self.erasureToken
        options.ingest.batchSize = batchSize
        return try buildApplication(settings: settings(), options: options)
    }

    var trackingTopic: String { kafka.topic(Topic.trackingEvents) }

    /// Sends events as the feed does: one envelope per event, its id the event's id, keyed by device.
    func produce(_ events: [TrackingEvent]) async throws {
        for chunk in stride(from: 0, to: events.count, by: 2_000).map({ events[$0..<min($0 + 2_000, events.count)] }) {
            _ = try await producer.send(try chunk.map { event in
                KafkaOutgoingMessage(topic: trackingTopic, key: event.deviceId,
                                     value: try Envelope(id: event.id, type: event.type.rawValue, occurredAt: event.occurredAt,
                                                         source: "feed", data: event).encoded())
            })
        }
    }

    func produceRaw(_ values: [String], key: String = "raw") async throws {
        _ = try await producer.send(values.map { KafkaOutgoingMessage(topic: trackingTopic, key: key, value: Array($0.utf8)) })
    }

    /// Names the workload's tours and stops and gives each tour its stops, as analytics keeps them from
    /// `catalog.events`; returns the names, for the truth.
    func saveCatalog(_ workload: Workload) async throws -> [UUID: String] {
        let names = Dictionary(uniqueKeysWithValues: workload.tours.enumerated().map { ($1, "Tour \($0)") }
                                   + workload.pois.enumerated().map { ($1, "Stop \($0)") })
        try await withPostgres { client in
            try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            let store = PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger)
            for tour in workload.tours {
                try await store.saveName(entityId: tour, kind: "tour", name: names[tour]!, version: 1, stops: workload.stops[tour])
            }
            for poi in workload.pois { try await store.saveName(entityId: poi, kind: "poi", name: names[poi]!, version: 1, stops: nil) }
        }
        return names
    }

    func withPostgres<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await TestServices.withPostgres(database, body)
    }

    /// The migrated schema's live store, on a client for this harness's database.
    func withLiveStore(_ body: @Sendable (PostgresClient, PostgresIngestStore) async throws -> Void) async throws {
        try await withPostgres { client in
            try await AnalyticsMigrations.runner.run(on: client, logger: TestServices.logger)
            try await body(client, PostgresIngestStore(client: client, schema: .live, logger: TestServices.logger))
        }
    }

    /// Event ids counted so far in `schema`.
    func counted(schema: AnalyticsSchema = .live) async throws -> Int {
        try await withPostgres { client in try await Self.counted(client, schema: schema) }
    }

    private static func counted(_ client: PostgresClient, schema: AnalyticsSchema) async throws -> Int {
        let exists = try await client.fetch("SELECT to_regclass(\(schema.name + ".processed_events")) IS NOT NULL", as: Bool.self,
                                            logger: TestServices.logger)
        guard exists.first == true else { return 0 }
        return try await PostgresIngestStore(client: client, schema: schema, logger: TestServices.logger).countedEvents()
    }

    /// Waits until `expected` ids are counted; fails the test once the count has not grown for `stall` (the
    /// ingest stopped), or after `limit` in all. A loaded machine may count slowly; only a halt is a failure.
    /// `stall` also covers what leaves the count flat without a fault: start-up, and re-reading counted events
    /// (the rewind at each assignment, a rejoin after a replay is activated).
    func waitUntilCounted(_ expected: Int, schema: AnalyticsSchema = .live, stall: Duration = .seconds(90),
                          limit: Duration = .seconds(300)) async throws {
        let (total, stalled) = try await withPostgres { client in
            let started = ContinuousClock.now
            var last = -1, grewAt = started
            while true {
                let now = try await Self.counted(client, schema: schema)
                if now >= expected { return (now, false) }
                if now != last { (last, grewAt) = (now, .now) }
                if ContinuousClock.now - grewAt > stall || ContinuousClock.now - started > limit { return (now, true) }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try #require(total == expected, "counted \(total) of \(expected) event ids\(stalled ? " (no longer growing)" : "")")
    }

    // MARK: reports over HTTP

    static func path(_ report: String, _ query: ReportQuery, extra: String = "") -> String {
        "/v1/reports/\(report)?from=\(query.from)&to=\(query.to)" + (query.tourId.map { "&tourId=\($0.lowercased)" } ?? "") + extra
    }

    static func get<T: Decodable>(_ client: some TestClientProtocol, _ report: String, _ query: ReportQuery, as type: T.Type) async throws -> T {
        let response = try await client.execute(uri: path(report, query), method: .get, headers: [.authorization: "Bearer \(token)"])
        try #require(response.status == .ok, "\(path(report, query)): \(response.status) \(String(buffer: response.body))")
        return try JSONCoding.decoder.decode(T.self, from: Data(buffer: response.body))
    }

    struct PoiList: Decodable { let pois: [PoiReportRow] }
    struct TourList: Decodable { let tours: [TourReportRow] }
    struct DayList: Decodable { let days: [DailyReportRow] }

    /// Every report for every query, over HTTP, compared with the truth.
    static func expectReports(_ client: some TestClientProtocol, equal truth: Truth, for queries: [ReportQuery], stops: [UUID: [UUID]] = [:],
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for query in queries {
            if let tour = query.tourId {
                let funnel = try await get(client, "funnel", query, as: FunnelReport.self)
                #expect(funnel == truth.funnel(query, stops: stops[tour] ?? []), "funnel \(query)", sourceLocation: sourceLocation)
            }
            let hours = try await get(client, "hours", query, as: HourReport.self)
            #expect(hours == truth.hours(query), "hours \(query)", sourceLocation: sourceLocation)
            let searches = try await get(client, "searches", query, as: SearchReport.self)
            #expect(searches == truth.searches(query), "searches \(query): \(searches) vs \(truth.searches(query))", sourceLocation: sourceLocation)
            let summary = try await get(client, "summary", query, as: SummaryReport.self)
            #expect(summary.matches(truth.summary(query)), "summary \(query): \(summary) vs \(truth.summary(query))", sourceLocation: sourceLocation)
            let pois = try await get(client, "pois", query, as: PoiList.self).pois
            #expect(pois.matches(truth.pois(query)), "pois \(query): \(pois) vs \(truth.pois(query))", sourceLocation: sourceLocation)
            let tours = try await get(client, "tours", query, as: TourList.self).tours
            #expect(tours.matches(truth.tours(query)), "tours \(query): \(tours) vs \(truth.tours(query))", sourceLocation: sourceLocation)
            let devices = try await get(client, "devices", query, as: DeviceReport.self)
            #expect(devices == truth.devices(query), "devices \(query)", sourceLocation: sourceLocation)
            let days = try await get(client, "daily", query, as: DayList.self).days
            #expect(days == truth.daily(query), "daily \(query)", sourceLocation: sourceLocation)
            let languages = try await get(client, "languages", query, as: LanguageReport.self)
            #expect(languages == truth.languages(query), "languages \(query): \(languages) vs \(truth.languages(query))", sourceLocation: sourceLocation)
        }
    }

    /// The same through the repository, for schemas the service does not serve (a replay's).
    static func expectReports(_ repository: some ReportRepository, equal truth: Truth, for queries: [ReportQuery], stops: [UUID: [UUID]] = [:],
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for query in queries {
            if let tour = query.tourId {
                #expect(try await repository.funnel(query, tour: tour) == truth.funnel(query, stops: stops[tour] ?? []), "funnel \(query)",
                        sourceLocation: sourceLocation)
            }
            #expect(try await repository.hours(query) == truth.hours(query), "hours \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.searches(query) == truth.searches(query), "searches \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.summary(query).matches(truth.summary(query)), "summary \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.pois(query).matches(truth.pois(query)), "pois \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.tours(query).matches(truth.tours(query)), "tours \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.devices(query) == truth.devices(query), "devices \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.daily(query) == truth.daily(query), "daily \(query)", sourceLocation: sourceLocation)
            #expect(try await repository.languages(query) == truth.languages(query), "languages \(query)", sourceLocation: sourceLocation)
        }
    }
}

/// Means and rates are sums of doubles, added in another order by Postgres than by the truth: they match
/// when within a billionth of each other (rounding both would still split a pair across a rounding boundary).
extension Double {
    func isClose(to other: Double) -> Bool { abs(self - other) <= 1e-9 * Swift.max(1, abs(self), abs(other)) }
}

/// Each report matches the truth's: counts exactly, means and rates closely.
protocol ReportMatching: Equatable {
    /// The row with its means and rates zeroed, and those values, for comparing apart.
    var exactPart: Self { get }
    var inexactPart: [Double] { get }
}

extension ReportMatching {
    func matches(_ other: Self) -> Bool {
        exactPart == other.exactPart && zip(inexactPart, other.inexactPart).allSatisfy { $0.isClose(to: $1) }
    }
}

extension Array where Element: ReportMatching {
    func matches(_ other: [Element]) -> Bool { count == other.count && zip(self, other).allSatisfy { $0.matches($1) } }
}

extension SummaryReport: ReportMatching {
    var exactPart: SummaryReport { var copy = self; copy.completionRate = 0; return copy }
    var inexactPart: [Double] { [completionRate] }
}

extension PoiReportRow: ReportMatching {
    var exactPart: PoiReportRow { var copy = self; copy.averageDwellSeconds = 0; return copy }
    var inexactPart: [Double] { [averageDwellSeconds] }
}

extension TourReportRow: ReportMatching {
    var exactPart: TourReportRow { var copy = self; copy.completionRate = 0; copy.averageDurationSeconds = 0; return copy }
    var inexactPart: [Double] { [completionRate, averageDurationSeconds] }
}

extension ReportQuery: CustomStringConvertible {
    public var description: String { "\(from)..\(to)" + (tourId.map { " tour \($0.lowercased)" } ?? "") }
}
