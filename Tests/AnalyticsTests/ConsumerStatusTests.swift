import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Shared
import Testing
import TestSupport
@testable import Analytics

/// Issue 14, "status people can trust": a consumer whose lag does not shrink is degraded (on /ready, still 200),
/// and the reports say up to when they count. Real broker, real Postgres, the real analytics service.
@Suite("Consumer status and report freshness", .serialized, .stopsIfHung)
struct ConsumerStatusTests {
    @Test("a consumer that does not read is degraded after the window; working off the backlog is not; caught up again it is healthy")
    func lagWatchOnARealConsumer() async throws {
        let kafka = TestServices.kafka(clientId: "lag-watch-test")
        let producer = try KafkaProducer(configuration: kafka, logger: TestServices.logger)
        try await producer.createTopics(Topic.all)
        let topic = kafka.topic(Topic.catalogEvents)
        let consumer = try await KafkaConsumer.open(configuration: kafka, subscription: .allPartitions(topics: [topic], from: .end),
                                                    logger: TestServices.logger)
        let progress = ConsumerProgress()
        progress.attach(consumer)
        let ends = try KafkaTopicEnds(topic: topic, configuration: kafka, logger: TestServices.logger)
        let probe = Task { try await ends.run() }
        defer { probe.cancel() }
        // The probe starts at the end: let it be there before anything is sent.
        #expect(try await TestServices.eventually(timeout: .seconds(15)) { ends.isFollowing })
        let watch = LagWatch(name: "test", window: .seconds(2), interval: .milliseconds(200), logger: TestServices.logger) {
            try await progress.sample(ends)
        }

        await watch.sampleOnce()
        #expect(watch.status.waiting == 0)
        #expect(watch.status.degraded == nil)
        #expect(watch.status.caughtUpTo != nil)

        _ = try await producer.send((0..<20).map { KafkaOutgoingMessage(topic: topic, key: "k\($0)", value: Array("m\($0)".utf8)) })
        let acknowledged = Date()
        // Nobody reads: after the window, degraded with the reason; /ready's check passes degraded.
        let degraded = try await TestServices.eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
            await watch.sampleOnce()
            return watch.status.degraded != nil
        }
        #expect(degraded)
        let status = watch.status
        #expect(status.waiting == 20)
        #expect(status.degraded?.contains("20 messages waiting") == true, "\(status.degraded ?? "-")")
        #expect(status.caughtUpTo.map { $0 <= acknowledged } == true)
        #expect(status.behindSeconds() >= 2)
        guard case .degraded(let reason) = await watch.readinessCheck.evaluate() else {
            Issue.record("the check is not degraded")
            return
        }
        #expect(reason == status.degraded)
        // Still nobody reads: it stays degraded for another window (the lag stays, it does not shrink).
        for _ in 0..<12 {
            try await Task.sleep(for: .milliseconds(200))
            await watch.sampleOnce()
            #expect(watch.status.degraded != nil)
        }

        // Working the backlog off slowly: the lag shrinks, so it is not degraded, though messages still wait.
        var read: [KafkaMessage] = []
        while read.count < 20 {
            read += try await consumer.poll(maxMessages: 20 - read.count, timeout: .seconds(1))
        }
        for chunk in stride(from: 0, to: 20, by: 4) {
            for message in read[chunk..<chunk + 4] { progress.handled(message) }
            await watch.sampleOnce()
            #expect(watch.status.degraded == nil, "after \(chunk + 4) handled: \(watch.status.degraded ?? "")")
            #expect(watch.status.waiting == Int64(16 - chunk))
            try await Task.sleep(for: .milliseconds(600))
        }
        await watch.sampleOnce()
        #expect(watch.status.waiting == 0)
        #expect(watch.status.degraded == nil)
        #expect(watch.status.caughtUpTo.map { $0 >= acknowledged } == true)
        #expect(await watch.readinessCheck.evaluate() == .ready)
        await consumer.close()
    }

    @Test("/ready: a degraded check passes (200, status degraded, the reason given); a failing one makes it 503")
    func degradedIsStillReady() async throws {
        let router = Router()
        let degradedReason = "12 messages waiting, not fewer than 30 s ago (12)"
        OperationalRoutes(serviceName: "test", checks: [
            ReadinessCheck("postgres") { true },
            ReadinessCheck("consumer test") { .degraded(degradedReason) },
        ]).register(on: router)
        let failing = Router()
        OperationalRoutes(serviceName: "test", checks: [
            ReadinessCheck("postgres") { false },
            ReadinessCheck("consumer test") { .degraded(degradedReason) },
        ]).register(on: failing)
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/ready", method: .get)
            #expect(response.status == .ok)
            let body = try JSONDecoder().decode(Readiness.self, from: Data(buffer: response.body))
            #expect(body.ready && body.status == "degraded")
            #expect(body.checks == ["postgres": true, "consumer test": true])
            #expect(body.degraded == ["consumer test": degradedReason])
        }
        try await Application(router: failing).test(.router) { client in
            let response = try await client.execute(uri: "/ready", method: .get)
            #expect(response.status == .serviceUnavailable)
            let body = try JSONDecoder().decode(Readiness.self, from: Data(buffer: response.body))
            #expect(!body.ready && body.status == "not ready")
            #expect(body.checks == ["postgres": false, "consumer test": true])
        }
    }

    struct Readiness: Decodable {
        let ready: Bool
        let status: String
        let checks: [String: Bool]
        let degraded: [String: String]
    }

    @Test("analytics unable to count (its table locked) while events arrive: /ready 200 but degraded with the reason, freshness stays put; then it recovers")
    func analyticsDegradedAndFreshness() async throws {
        let harness = try await AnalyticsHarness.make()
        var options = AnalyticsOptions(reportsToken: AnalyticsHarness.token, pseudonyms: AnalyticsHarness.pseudonyms)
        options.stallWindow = .seconds(2)
        let app = try buildApplication(settings: harness.settings(), options: options)
        let now = Date()
        let first = (0..<5).map { TrackingEvent(type: .tourStarted, deviceId: "d\($0)", occurredAt: now, tourId: UUID()) }
        try await harness.produce(first)
        try await app.test(.router) { client in
            @Sendable func ready() async throws -> (HTTPResponse.Status, Readiness) {
                let response = try await client.execute(uri: "/ready", method: .get)
                return (response.status, try JSONDecoder().decode(Readiness.self, from: Data(buffer: response.body)))
            }
            @Sendable func freshness() async throws -> ReportFreshness {
                let response = try await client.execute(uri: "/v1/reports/freshness", method: .get,
                                                        headers: [.authorization: "Bearer \(AnalyticsHarness.token)"])
                try #require(response.status == .ok, "\(response.status) \(String(buffer: response.body))")
                return try JSONDecoder().decode(ReportFreshness.self, from: Data(buffer: response.body))
            }
            try await harness.waitUntilCounted(first.count)
            let counted = Date()
            // Freshness is sampled once a second: a sample after the count finds every end reached, so counts up to a
            // moment after it. (A bound on behindSeconds against the test's clock failed on a loaded CI machine: a
            // sample's wall time is taken before it reads the ends, and a slow broker stretches that.)
            let caughtUp = try await TestServices.eventually(timeout: .seconds(30), interval: .milliseconds(250)) {
                let fresh = try await freshness()
                return fresh.waiting == 0 && fresh.countedUpTo.map { $0 >= counted } == true
            }
            let fresh = try await freshness()
            #expect(caughtUp, "freshness did not catch up: waiting \(fresh.waiting), counted up to \(String(describing: fresh.countedUpTo)), counted at \(counted)")
            // No catalog runs here, so "catalog names" never passes (/ready stays 503 for that); the consumer's check is
            // what this test reads. That degraded alone keeps /ready at 200 is `degradedIsStillReady` below.
            _ = try await TestServices.eventually(timeout: .seconds(20)) { try await ready().1.degraded.isEmpty }
            #expect(try await ready().1.checks["consumer analytics"] == true)
            #expect(try await ready().1.degraded.isEmpty)

            let unauthorized = try await client.execute(uri: "/v1/reports/freshness", method: .get)
            #expect(unauthorized.status == .unauthorized)

            try await harness.withPostgres { postgres in
                try await postgres.withConnection { connection in
                    // Every batch inserts its ids here first: with the table locked, nothing more is counted.
                    try await connection.query("BEGIN", logger: TestServices.logger)
                    try await connection.query("LOCK TABLE analytics.processed_events IN ACCESS EXCLUSIVE MODE", logger: TestServices.logger)
                    let more = (0..<40).map { TrackingEvent(type: .poiViewed, deviceId: "e\($0)", occurredAt: now, poiId: UUID(), via: .map) }
                    try await harness.produce(more)
                    let acknowledged = Date()

                    let seen = try await TestServices.eventually(timeout: .seconds(15), interval: .milliseconds(250)) {
                        try await ready().1.degraded["consumer analytics"] != nil
                    }
                    #expect(seen, "analytics never said it was degraded")
                    let (_, body) = try await ready()
                    #expect(body.checks["consumer analytics"] == true, "degraded, not failing")
                    #expect(body.status == "not ready", "only because no catalog runs here")
                    let reason = body.degraded["consumer analytics"] ?? ""
                    #expect(reason.contains("40 messages waiting"), "\(reason)")
                    let stale = try await freshness()
                    #expect(stale.waiting == 40)
                    #expect(stale.countedUpTo.map { $0 <= acknowledged } == true, "\(String(describing: stale.countedUpTo)) after \(acknowledged)")
                    #expect(stale.behindSeconds >= 2)
                    try await connection.query("ROLLBACK", logger: TestServices.logger)

                    try await harness.waitUntilCounted(first.count + more.count)
                    let recovered = try await TestServices.eventually(timeout: .seconds(10), interval: .milliseconds(250)) {
                        try await ready().1.degraded.isEmpty
                    }
                    #expect(recovered)
                    // Freshness is sampled once a second: the first sample after the recovery may still be the old one.
                    let caughtUp = try await TestServices.eventually(timeout: .seconds(10), interval: .milliseconds(250)) {
                        let fresh = try await freshness()
                        return fresh.waiting == 0 && fresh.countedUpTo.map { $0 >= acknowledged } == true
                    }
                    let last = try await freshness()
                    #expect(caughtUp, "freshness did not catch up: waiting \(last.waiting), counted up to \(String(describing: last.countedUpTo))")
                }
            }
        }
    }
}
