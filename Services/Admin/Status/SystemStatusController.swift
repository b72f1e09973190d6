import Foundation
import Hummingbird
import Shared

/// "System Status" (reference/000, 3.5.4: load and capacity at a glance), owners only: each service's
/// health, readiness, version, uptime, request rate, consumer lag, outbox backlog, and whether it reaches
/// Postgres and the broker. The page reloads itself every 2 s (no script needed), and each probe gives up
/// after 1.5 s, so a stopped service shows as down within about 4 s.
struct SystemStatusController {
    let probe: SystemStatusProbe
    let editors: any TourEditorRepository
    /// `SITE_TIME_ZONE`, for when the page was checked.
    let clock: SiteClock

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/status", use: show)
    }

    @Sendable func show(_ request: Request, context: AdminRequestContext) async throws -> Response {
        try (try await context.access(editors)).requireOwner("see the system status")
        let services = await probe.probe()
        return AdminPage(title: "System Status", context: context, breadcrumbs: [("System Status", nil)],
                         body: Self.render(services, at: Date(), clock: clock), refreshSeconds: 2).response()
    }

    static func render(_ services: [ServiceStatus], at date: Date, clock: SiteClock) -> HTML {
        func yesNo(_ value: Bool?) -> HTML {
            switch value {
            case true?: "<span class=\"ok\">yes</span>"
            case false?: "<span class=\"bad\">no</span>"
            case nil: "<span class=\"na\">–</span>"
            }
        }
        func number(_ value: Double?, digits: Int = 0) -> String {
            value.map { String(format: "%.\(digits)f", $0) } ?? "–"
        }
        func uptime(_ seconds: Int?) -> String {
            guard let seconds else { return "–" }
            return seconds >= 3_600 ? "\(seconds / 3_600) h \(seconds % 3_600 / 60) min" : seconds >= 60 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds) s"
        }
        let upCount = services.filter { $0.ready && $0.degraded.isEmpty }.count
        let degraded = services.filter { $0.ready && !$0.degraded.isEmpty }.map(\.name)
        func notes(_ service: ServiceStatus) -> String {
            if let problem = service.problem { return problem }
            let failing = service.checks.filter { !$0.value }.keys.sorted().map { "\($0) not ready" }
            let slow = service.degraded.sorted { $0.key < $1.key }.map { "\($0.key) degraded: \($0.value)" }
            return (failing + slow).joined(separator: "; ")
        }
        let rows: [HTML] = services.map { service in
            let state: HTML = !service.alive ? "<span class=\"bad\">down</span>"
                : !service.ready ? "<span class=\"warn\">not ready</span>"
                : service.degraded.isEmpty ? "<span class=\"ok\">ready</span>" : "<span class=\"warn\">degraded</span>"
            return """
                <tr data-service="\(service.name)">
                <th scope="row">\(service.name)</th>
                <td class="state">\(state)</td>
                <td>\(service.version ?? "–")</td>
                <td>\(uptime(service.uptimeSeconds))</td>
                <td class="num">\(number(service.requestsPerSecond, digits: 1))</td>
                <td class="num">\(number(service.consumerLag))</td>
                <td class="num">\(number(service.outboxBacklog))</td>
                <td class="num">\(number(service.deadLetters))</td>
                <td>\(yesNo(service.checks["postgres"]))</td>
                <td>\(yesNo(service.checks["broker"]))</td>
                <td class="notes">\(notes(service))</td>
                </tr>
                """
        }
        return """
            <h1>System Status</h1>
            <p class="summary">\(upCount) of \(services.count) services ready\(degraded.isEmpty ? "" : ", \(degraded.count) degraded (\(degraded.joined(separator: ", ")))") · checked \(CommonPages.time(date, clock: clock, seconds: true)) · refreshes every 2 s</p>
            <table class="status">
            <thead><tr><th scope="col">Service</th><th scope="col">State</th><th scope="col">Version</th><th scope="col">Uptime</th>
            <th scope="col">Requests/s</th><th scope="col">Consumer lag</th><th scope="col">Outbox backlog</th><th scope="col">Set aside</th>
            <th scope="col">Postgres</th><th scope="col">Broker</th><th scope="col">Notes</th></tr></thead>
            <tbody>\(rows)</tbody>
            </table>
            <p class="hint">Postgres and broker show whether that service reaches them (only services that use Postgres say so).
            Consumer lag is messages waiting to be handled; outbox backlog is catalog changes not yet published; set aside is
            messages the service could not process since it started, each kept with its reason in the dead-letters topic.
            Degraded: the service answers, but a consumer's lag has not shrunk for a while (the reason is in Notes).</p>
            """
    }
}
