import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// One readiness check: a name and whether the dependency answers. A check may also pass while degraded
/// (working, but a consumer is stuck or slow): `/ready` then stays 200 and says why (DESIGN.md
/// "Readiness and degraded consumers").
public struct ReadinessCheck: Sendable {
    public enum Outcome: Sendable, Equatable {
        case ready
        /// Passes, with the reason it is not healthy.
        case degraded(String)
        case notReady
    }

    public let name: String
    public let evaluate: @Sendable () async -> Outcome

    public init(_ name: String, _ check: @escaping @Sendable () async -> Bool) {
        self.name = name
        evaluate = { await check() ? .ready : .notReady }
    }

    public init(_ name: String, outcome: @escaping @Sendable () async -> Outcome) {
        self.name = name
        evaluate = outcome
    }
}

/// When this process started, for `/health`'s uptime: read from the kernel (Linux `/proc`), so it does not
/// depend on when it is first asked; where `/proc` is missing, the first time it is asked.
public enum ProcessStart {
    public static let date: Date = fromProc() ?? Date()

    /// The process's age is the system's uptime minus the process's start in clock ticks after boot
    /// (field 22 of /proc/self/stat, after the parenthesised command name, which may contain spaces).
    static func fromProc() -> Date? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let uptimeText = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 19, let startTicks = Double(fields[19]), ticksPerSecond > 0,
              let uptime = uptimeText.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        let age = uptime - startTicks / ticksPerSecond
        return age >= 0 ? Date().addingTimeInterval(-age) : nil
    }
}

/// Graceful shutdown in two steps (issue 44): when it begins (SIGTERM), `/ready` answers 503 at once while the
/// server keeps serving everything for `delay`; only then does the HTTP server stop accepting and drain, and the
/// rest of the service after it. A load balancer or proxy that routes by `/ready` stops sending new work before the
/// port closes. In Kubernetes the pod's preStop sleep comes before SIGTERM (endpoints are removed meanwhile), so
/// this adds `delay` to the stop, within `terminationGracePeriodSeconds` (deploy/kubernetes/README.md).
///
/// It runs in the group that runs the application, after it (`runService(drain:)`): a ServiceGroup shuts its
/// services down in reverse order, so this one is told first and the application (its server first) only once this
/// returned.
public final class ShutdownDrain: Service, Sendable {
    /// This process's: a signal stops the process, so its one drain is what every router reads (`OperationalRoutes`'
    /// default) and what `runService(drain: .process)` runs.
    public static let process = ShutdownDrain()
    /// Two seconds: a load balancer probing `/ready` every second sees it fail before the server stops accepting.
    public static let standardDelay: Duration = .seconds(2)

    public let delay: Duration
    private let draining = Atomic<Bool>(false)

    public init(delay: Duration = ShutdownDrain.standardDelay) {
        self.delay = delay
    }

    /// True from the start of graceful shutdown: `/ready` answers 503.
    public var isDraining: Bool { draining.load(ordering: .acquiring) }

    public func run() async throws {
        // Returns once graceful shutdown begins; throws when the group is cancelled instead (then nothing to drain).
        do { try await gracefulShutdown() } catch { return }
        draining.store(true, ordering: .releasing)
        try? await Task.sleep(for: delay)
    }

    /// The group `runService(drain:)` runs: the application, then the drain (told first on shutdown). It shuts down
    /// gracefully on SIGTERM and SIGINT, as Hummingbird's `runService()` does, unless `trappingSignals` is false (a
    /// test calls `triggerGracefulShutdown()` instead).
    public static func serviceGroup(running application: some ApplicationProtocol, drain: ShutdownDrain, trappingSignals: Bool = true,
                                    logger: Logger) -> ServiceGroup {
        ServiceGroup(configuration: .init(services: [application, drain], gracefulShutdownSignals: trappingSignals ? [.sigterm, .sigint] : [],
                                          logger: logger))
    }
}

extension ApplicationProtocol {
    /// Hummingbird's `runService()` with the drain in front: on SIGTERM or SIGINT `/ready` answers 503 for
    /// `drain.delay` while everything is still served, then the application shuts down gracefully.
    public func runService(drain: ShutdownDrain) async throws {
        try await ShutdownDrain.serviceGroup(running: self, drain: drain, logger: logger).run()
    }
}

/// `GET /health` (the process is alive), `GET /ready` (its dependencies answer) and `GET /metrics`.
public struct OperationalRoutes: Sendable {
    let serviceName: String
    let checks: [ReadinessCheck]
    /// Once it drains (graceful shutdown began), `/ready` answers 503 without running the checks.
    let drain: ShutdownDrain
    /// Refreshes gauges that are read, not pushed (consumer lag, outbox backlog), before each scrape.
    let beforeScrape: @Sendable () async -> Void
    /// `METRICS_TOKEN`: when set, `/metrics` answers only `Authorization: Bearer <token>` (401 otherwise).
    let metricsToken: String?

    public init(serviceName: String, checks: [ReadinessCheck], metricsToken: String? = nil, drain: ShutdownDrain = .process,
                beforeScrape: @escaping @Sendable () async -> Void = {}) {
        self.serviceName = serviceName
        self.checks = checks
        self.drain = drain
        self.metricsToken = metricsToken
        self.beforeScrape = beforeScrape
        _ = ProcessStart.date // where /proc is missing, at least from start-up rather than from the first /health
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
        /// "ready", "degraded" (every check passes, some degraded), "not ready" or "shutting down".
        let status: String
        /// Check name → why it is degraded.
        let degraded: [String: String]
    }

    public func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/health") { _, _ in
            Health(status: "ok", service: serviceName, version: BuildInfo.version,
                   uptimeSeconds: max(0, Int(Date().timeIntervalSince(ProcessStart.date))))
        }
        router.get("/ready") { _, _ -> Response in
            if drain.isDraining {
                // Shutting down: out of every load balancer's rotation now, while the server still answers.
                let body = try JSONEncoder().encode(Readiness(ready: false, service: serviceName, checks: ["shutdown": false],
                                                              status: "shutting down", degraded: [:]))
                return Response(status: .serviceUnavailable, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
            let outcomes = await withTaskGroup(of: (String, ReadinessCheck.Outcome).self) { group in
                for check in checks { group.addTask { (check.name, await check.evaluate()) } }
                var outcomes: [String: ReadinessCheck.Outcome] = [:]
                for await (name, outcome) in group { outcomes[name] = outcome }
                return outcomes
            }
            let results = outcomes.mapValues { $0 != .notReady }
            let degraded = outcomes.compactMapValues { outcome -> String? in
                if case .degraded(let reason) = outcome { reason } else { nil }
            }
            let ready = results.values.allSatisfy { $0 }
            let status = !ready ? "not ready" : degraded.isEmpty ? "ready" : "degraded"
            let body = try JSONEncoder().encode(Readiness(ready: ready, service: serviceName, checks: results, status: status, degraded: degraded))
            // Degraded is still ready: a probe that failed it would restart or unroute a pod that a restart does not help.
            return Response(status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("/metrics") { request, _ -> Response in
            if let metricsToken, !BearerToken.matches(request.headers[.authorization], metricsToken) {
                throw Problem(.unauthorized, "send the metrics token as Authorization: Bearer <token>",
                              headers: [.wwwAuthenticate: "Bearer realm=\"itour-metrics\""])
            }
            await beforeScrape()
            let bytes = MetricsSetup.registry.emitToBuffer()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}

/// Bearer tokens (RFC 6750) compared without stopping at the first difference, so timing does not tell how much of a
/// guess matched.
public enum BearerToken {
    /// Whether `header` (an `Authorization` value) is `Bearer <expected>`; the scheme in any case.
    public static func matches(_ header: String?, _ expected: String) -> Bool {
        guard let given = token(header) else { return false }
        return constantTimeEqual(Array(given.utf8), Array(expected.utf8))
    }

    /// The token of `Bearer <token>`, nil for another scheme or none.
    public static func token(_ header: String?) -> Substring? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return header.dropFirst(7)
    }

    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
