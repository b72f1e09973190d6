import Foundation
import Hummingbird
import Metrics
import Prometheus
import Synchronization

/// The process-wide Prometheus registry behind swift-metrics; bootstrapped once.
public enum MetricsSetup {
    public static let registry = PrometheusCollectorRegistry()
    private static let done = Mutex(false)

    public static func bootstrap(serviceName: String) {
        done.withLock { done in
            guard !done else { return }
            done = true
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            Gauge(label: "itour_build_info", dimensions: [("service", serviceName), ("version", BuildInfo.version)]).record(1)
        }
    }
}

/// One readiness check: a name and whether the dependency answers.
public struct ReadinessCheck: Sendable {
    public let name: String
    public let check: @Sendable () async -> Bool

    public init(_ name: String, _ check: @escaping @Sendable () async -> Bool) {
        self.name = name
        self.check = check
    }
}

/// `GET /health` (the process is alive), `GET /ready` (its dependencies answer) and `GET /metrics`.
public struct OperationalRoutes: Sendable {
    let serviceName: String
    let checks: [ReadinessCheck]
    /// Refreshes gauges that are read, not pushed (consumer lag, outbox backlog), before each scrape.
    let beforeScrape: @Sendable () async -> Void

    public init(serviceName: String, checks: [ReadinessCheck], beforeScrape: @escaping @Sendable () async -> Void = {}) {
        self.serviceName = serviceName
        self.checks = checks
        self.beforeScrape = beforeScrape
    }

    struct Health: ResponseEncodable {
        let status: String
        let service: String
        let version: String
        let uptimeSeconds: Int
    }

    struct Readiness: ResponseEncodable {
        let ready: Bool
        let service: String
        let checks: [String: Bool]
    }

    public func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/health") { _, _ in
            Health(status: "ok", service: serviceName, version: BuildInfo.version,
                   uptimeSeconds: Int(Date().timeIntervalSince(BuildInfo.startedAt)))
        }
        router.get("/ready") { _, _ -> Response in
            let results = await withTaskGroup(of: (String, Bool).self) { group in
                for check in checks { group.addTask { (check.name, await check.check()) } }
                var results: [String: Bool] = [:]
                for await (name, ok) in group { results[name] = ok }
                return results
            }
            let ready = results.values.allSatisfy { $0 }
            let body = try JSONEncoder().encode(Readiness(ready: ready, service: serviceName, checks: results))
            return Response(status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("/metrics") { _, _ -> Response in
            await beforeScrape()
            let bytes = MetricsSetup.registry.emitToBuffer()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
