import Foundation
import Shared
import Synchronization

/// Where each service answers, for the System Status page: `FEED_URL`, `CATALOG_URL`, `ANALYTICS_URL`,
/// and the admin itself on its own port.
struct StatusTargets: Sendable {
    let services: [(name: String, url: String)]

    /// The variables `init(environment:ownPort:)` reads.
    static let variables: [ConfigVariable] = [.catalogURL, .feedURL, .analyticsURL]

    init(environment: Environment = Environment(), ownPort: Int) {
        services = [
            ("catalog", environment.string(.catalogURL)),
            ("feed", environment.string(.feedURL)),
            ("analytics", environment.string(.analyticsURL)),
            ("admin", "http://127.0.0.1:\(ownPort)"),
        ]
    }
}

/// One service as the status page shows it.
struct ServiceStatus: Sendable {
    var name: String
    var url: String
    var alive = false
    var ready = false
    var version: String?
    var uptimeSeconds: Int?
    /// Readiness checks by name (postgres, broker, projection, startup).
    var checks: [String: Bool] = [:]
    /// Checks that pass but are degraded (a consumer not keeping up), with the reason (DESIGN.md "Readiness and degraded consumers").
    var degraded: [String: String] = [:]
    var requestsPerSecond: Double?
    var consumerLag: Double?
    var outboxBacklog: Double?
    /// Messages this process set aside in `dead-letters` since it started (itour_dead_letters_total).
    var deadLetters: Double?
    var problem: String?
}

/// Asks every service for /health, /ready and /metrics, concurrently, each within a short timeout, so a
/// stopped service shows as down on the next refresh. Keeps the previous request count per service to
/// turn counters into a rate.
final class SystemStatusProbe: Sendable {
    private let targets: StatusTargets
    private let timeout: Duration
    /// `METRICS_TOKEN`, sent to every service's `/metrics` when set (the suite shares one).
    private let metricsToken: String?
    private let previous = Mutex<[String: (at: ContinuousClock.Instant, requests: Double)]>([:])

    init(targets: StatusTargets, timeout: Duration = .milliseconds(1_500), metricsToken: String? = nil) {
        self.targets = targets
        self.timeout = timeout
        self.metricsToken = metricsToken
    }

    func probe() async -> [ServiceStatus] {
        await withTaskGroup(of: (Int, ServiceStatus).self) { group in
            for (index, service) in targets.services.enumerated() {
                group.addTask { (index, await self.probe(name: service.name, url: service.url)) }
            }
            var results: [(Int, ServiceStatus)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    private struct Health: Decodable {
        let version: String
        let uptimeSeconds: Int
    }

    private struct Readiness: Decodable {
        let ready: Bool
        let checks: [String: Bool]
        /// Absent from services older than issue 14.
        let degraded: [String: String]?
    }

    private func probe(name: String, url: String) async -> ServiceStatus {
        var status = ServiceStatus(name: name, url: url)
        do {
            let health = try await HTTPFetch.get(url + "/health", timeout: timeout)
            guard health.status == 200 else {
                status.problem = "health answered \(health.status)"
                return status
            }
            let decoded = try JSONDecoder().decode(Health.self, from: Data(health.body))
            status.alive = true
            status.version = decoded.version
            status.uptimeSeconds = decoded.uptimeSeconds
        } catch {
            status.problem = "not answering (\(error))"
            return status
        }
        if let ready = try? await HTTPFetch.get(url + "/ready", timeout: timeout),
           let decoded = try? JSONDecoder().decode(Readiness.self, from: Data(ready.body)) {
            status.ready = decoded.ready
            status.checks = decoded.checks
            status.degraded = decoded.degraded ?? [:]
        }
        let authorization = metricsToken.map { [("Authorization", "Bearer \($0)")] } ?? []
        if let metrics = try? await HTTPFetch.get(url + "/metrics", headers: authorization, timeout: timeout), metrics.status == 200 {
            let samples = PrometheusText.parse(metrics.text)
            // Every request answered, failed ones and those the feed answers beside its router included.
            let requests = samples.filter { $0.name == "hb_requests_total" }.reduce(0) { $0 + $1.value }
            let now = ContinuousClock.now
            let before = previous.withLock { previous in
                defer { previous[name] = (now, requests) }
                return previous[name]
            }
            if let before, requests >= before.requests {
                let elapsed = now - before.at
                let seconds = elapsed.seconds
                if seconds > 0.2 { status.requestsPerSecond = (requests - before.requests) / seconds }
            }
            // Messages waiting per the lag watches (against the broker's ends); the consumers' own lag gauge counts a
            // partition not yet read from since an assignment as wholly unread, so it is only the fallback.
            let waiting = samples.filter { $0.name == "itour_consumer_waiting" }
            let lag = waiting.isEmpty ? samples.filter { $0.name == "itour_consumer_lag" } : waiting
            if !lag.isEmpty { status.consumerLag = lag.reduce(0) { $0 + $1.value } }
            status.outboxBacklog = samples.first { $0.name == "itour_outbox_backlog" }?.value
            status.deadLetters = samples.filter { $0.name == "itour_dead_letters_total" }.reduce(0) { $0 + $1.value }
        }
        return status
    }
}

/// Reads the Prometheus text format: name, labels and value per sample line.
enum PrometheusText {
    struct Sample: Equatable {
        let name: String
        let labels: String
        let value: Double
    }

    static func parse(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
            let series = line[..<space]
            if let brace = series.firstIndex(of: "{") {
                return Sample(name: String(series[..<brace]), labels: String(series[brace...]), value: value)
            }
            return Sample(name: String(series), labels: "", value: value)
        }
    }
}
