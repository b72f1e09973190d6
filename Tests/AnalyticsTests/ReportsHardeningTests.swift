import Foundation
import HTTPTypes
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Admin
@testable import Analytics

/// Issue 43 on analytics, over real HTTP: wrong reports tokens throttled per client (the one a trusted proxy names),
/// and `/metrics` behind `METRICS_TOKEN`, which the admin's System Status sends.
@Suite("Reports and metrics hardening (issue 43)", .serialized, .stopsIfHung)
struct ReportsHardeningTests {
    @Test("wrong reports tokens: after the limit a client gets 429 (its right token too) until the minute is over; other clients do not")
    func wrongTokensThrottled() async throws {
        let harness = try await AnalyticsHarness.make()
        var options = AnalyticsOptions(reportsToken: AnalyticsHarness.token, pseudonyms: AnalyticsHarness.pseudonyms)
        options.tokenFailuresPerMinute = 5
        options.trustedProxies = try TrustedProxies("127.0.0.1/32")
        let app = try buildApplication(settings: harness.settings(), options: options)
        try await app.test(.live) { client in
            let today = Day(containing: Date())
            func ask(_ token: String, from forwarded: String) async throws -> TestResponse {
                try await client.execute(uri: "/v1/reports/summary?from=\(today)&to=\(today)", method: .get,
                                         headers: [.authorization: "Bearer \(token)", .xForwardedFor: forwarded])
            }
            for attempt in 0..<5 {
                #expect(try await ask("guess-\(attempt)", from: "198.51.100.7").status == .unauthorized, "guess \(attempt)")
            }
            let limited = try await ask("guess-5", from: "198.51.100.7")
            #expect(limited.status == .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Not checked while waiting: a right guess looks like any other.
            #expect(try await ask(AnalyticsHarness.token, from: "198.51.100.7").status == .tooManyRequests)
            // Someone else behind the same proxy is not held back.
            #expect(try await ask(AnalyticsHarness.token, from: "198.51.100.8").status == .ok)
        }
    }

    @Test("with METRICS_TOKEN, /metrics needs the bearer token (health and readiness do not); System Status sends it")
    func metricsToken() async throws {
        let harness = try await AnalyticsHarness.make()
        var settings = try harness.settings()
        settings.metricsToken = "metrics-secret"
        let app = try buildApplication(settings: settings, options: AnalyticsOptions(reportsToken: AnalyticsHarness.token, pseudonyms: AnalyticsHarness.pseudonyms))
        try await app.test(.live) { client in
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer metrics-secre"]).status == .unauthorized)
            let scraped = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer metrics-secret"])
            #expect(scraped.status == .ok)
            #expect(String(buffer: scraped.body).contains("itour_build_info"))
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)

            let url = "http://127.0.0.1:\(try #require(client.port))"
            let targets = StatusTargets(environment: Environment(["ANALYTICS_URL": url]), ownPort: 1)
            func requestRate(token: String?) async throws -> Double? {
                let probe = SystemStatusProbe(targets: targets, timeout: .seconds(10), metricsToken: token)
                _ = await probe.probe()
                try await Task.sleep(for: .milliseconds(400))
                return await probe.probe().first { $0.name == "analytics" }?.requestsPerSecond
            }
            #expect(try await requestRate(token: "metrics-secret") != nil, "System Status reads the metrics with the token")
            #expect(try await requestRate(token: nil) == nil, "and cannot without it")
        }
    }
}
