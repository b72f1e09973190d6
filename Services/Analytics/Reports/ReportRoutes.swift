import Foundation
import HTTPTypes
import Hummingbird
import Shared
import Synchronization

/// The Reports API (DESIGN.md "Reports API"): `GET /v1/reports/{summary,pois,tours,devices,daily,funnel,hours,searches,views,languages}`
/// with `from`, `to`, optional `tourId`, as JSON or (`format=csv` or `Accept: text/csv`) CSV, and
/// `GET /v1/reports/freshness` (up to when events are counted), behind `Authorization: Bearer <REPORTS_TOKEN>`.
struct ReportRoutes<Repository: ReportRepository>: Sendable {
    let repository: Repository
    let token: String
    /// Up to when events are counted (`GET /v1/reports/freshness`); without it that route answers 404.
    var freshness: (@Sendable () -> ReportFreshness)? = nil
    /// Who the client is (`TRUSTED_PROXIES`), and how many wrong tokens a client may send a minute.
    var proxies: TrustedProxies = .none
    var tokenFailuresPerMinute = AnalyticsOptions.defaultTokenFailuresPerMinute
    /// The longest range a report may cover: enough for years of daily rows, not unbounded.
    static var maximumDays: Int { 3_660 }

    func register<Context: RemoteAddressRequestContext>(on router: Router<Context>) {
        let group = router.group("v1/reports")
            .add(middleware: BearerTokenMiddleware(token: token, proxies: proxies, throttle: FailureThrottle(limit: tokenFailuresPerMinute)))
        group.get("summary") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.summary(query)
            return try Self.respond(request, query, name: "summary", json: report, csv: report.csv)
        }
        group.get("pois") { request, _ in
            let query = try Self.query(request)
            let rows = try await repository.pois(query)
            return try Self.respond(request, query, name: "pois", json: PoiReport(pois: rows), csv: PoiReportRow.csv(rows))
        }
        group.get("tours") { request, _ in
            let query = try Self.query(request)
            let rows = try await repository.tours(query)
            return try Self.respond(request, query, name: "tours", json: TourReport(tours: rows), csv: TourReportRow.csv(rows))
        }
        group.get("devices") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.devices(query)
            return try Self.respond(request, query, name: "devices", json: report, csv: report.csv)
        }
        group.get("daily") { request, _ in
            let query = try Self.query(request)
            let rows = try await repository.daily(query)
            return try Self.respond(request, query, name: "daily", json: DailyReport(days: rows), csv: DailyReportRow.csv(rows))
        }
        group.get("funnel") { request, _ in
            let query = try Self.query(request)
            guard let tour = query.tourId else { throw Problem.badRequest("tourId is required: the funnel is a tour's") }
            let report = try await repository.funnel(query, tour: tour)
            return try Self.respond(request, query, name: "funnel", json: report, csv: report.csv)
        }
        group.get("hours") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.hours(query)
            return try Self.respond(request, query, name: "hours", json: report, csv: report.csv)
        }
        group.get("searches") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.searches(query)
            return try Self.respond(request, query, name: "searches", json: report, csv: report.csv)
        }
        group.get("views") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.views(query)
            return try Self.respond(request, query, name: "views", json: report, csv: report.csv)
        }
        group.get("languages") { request, _ in
            let query = try Self.query(request)
            let report = try await repository.languages(query)
            return try Self.respond(request, query, name: "languages", json: report, csv: report.csv)
        }
        group.get("freshness") { _, _ -> Response in
            guard let freshness else { throw Problem(.notFound, "this analytics does not know how fresh its counts are") }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONCoding.encoder.encode(freshness()))))
        }
    }

    /// Reads and checks `from`, `to` and `tourId`; a bad one is a 400 naming it.
    static func query(_ request: Request) throws -> ReportQuery {
        let parameters = request.uri.queryParameters
        func day(_ name: String) throws -> Day {
            guard let text = parameters[name[...]], !text.isEmpty else {
                throw Problem.badRequest("\(name) is required: a UTC date as YYYY-MM-DD")
            }
            guard let day = Day(text) else { throw Problem.badRequest("\(name) must be a date as YYYY-MM-DD, got \"\(text.prefix(40))\"") }
            return day
        }
        let from = try day("from"), to = try day("to")
        guard from <= to else { throw Problem.badRequest("from (\(from)) is after to (\(to))") }
        guard Int(to.number - from.number) < maximumDays else {
            throw Problem.badRequest("the range from \(from) to \(to) is longer than \(maximumDays) days")
        }
        var tourId: UUID?
        if let text = parameters["tourId"], !text.isEmpty {
            guard let id = UUID(uuidString: String(text)), id != AggregateDelta.Scope.all else {
                throw Problem.badRequest("tourId must be a tour's UUID, got \"\(text.prefix(40))\"")
            }
            tourId = id
        }
        return ReportQuery(from: from, to: to, tourId: tourId)
    }

    /// CSV when `format=csv`, or when no format is given and the client accepts text/csv; else JSON.
    static func wantsCSV(_ request: Request) throws -> Bool {
        switch request.uri.queryParameters["format"].map(String.init) {
        case "csv": return true
        case "json": return false
        case nil, "": return (request.headers[.accept] ?? "").lowercased().contains("text/csv")
        case let other?: throw Problem.badRequest("format must be json or csv, got \"\(other.prefix(20))\"")
        }
    }

    static func respond(_ request: Request, _ query: ReportQuery, name: String, json: some Encodable & Sendable, csv: CSVTable) throws -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store", .vary: "Accept"]
        let body: [UInt8]
        if try wantsCSV(request) {
            headers[.contentType] = "text/csv; charset=utf-8"
            let tour = query.tourId.map { "-tour-\($0.lowercased)" } ?? ""
            headers[.contentDisposition] = "attachment; filename=\"itour-\(name)-\(query.from)-to-\(query.to)\(tour).csv\""
            body = Array(csv.text.utf8)
        } else {
            headers[.contentType] = "application/json"
            body = Array(try JSONCoding.encoder.encode(ReportResponse(query: query, report: json)))
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A report's JSON: its own fields, plus the range and filter it covers.
struct ReportResponse<Report: Encodable>: Encodable {
    let query: ReportQuery
    let report: Report

    enum CodingKeys: String, CodingKey { case from, to, tourId }

    func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(query.from.description, forKey: .from)
        try container.encode(query.to.description, forKey: .to)
        try container.encode(query.tourId?.lowercased, forKey: .tourId)
    }
}

/// Lets a request through only with `Authorization: Bearer <token>`; else 401 problem+json. Wrong tokens are counted per
/// client (`TrustedProxies`): once a client has sent `throttle.limit` wrong ones within a minute, its requests get 429
/// with `Retry-After` until the minute is over, without their token being checked (a right guess must not tell itself
/// apart from a refused one).
struct BearerTokenMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let expected: String
    let proxies: TrustedProxies
    let throttle: FailureThrottle
    /// What the token is called in answers ("reports token"), and its realm.
    let name: String
    let realm: String
    /// A valid token of a weaker kind (the reports token, for erasures): answered 403 with `message`, not 401.
    let weaker: (token: String, message: String)?

    init(token: String, proxies: TrustedProxies = .none, throttle: FailureThrottle = FailureThrottle(limit: 10), name: String = "reports token",
         realm: String = "itour-reports", weaker: (token: String, message: String)? = nil) {
        expected = token
        self.proxies = proxies
        self.throttle = throttle
        self.name = name
        self.realm = realm
        self.weaker = weaker
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let client = proxies.clientKey(peer: context.remoteAddress, request: request)
        if let wait = throttle.wait(client) {
            throw Problem(.tooManyRequests, "too many wrong \(name)s from this client; try again in \(wait) s",
                          headers: [.retryAfter: String(wait)])
        }
        let header = request.headers[.authorization]
        guard BearerToken.token(header) != nil else {
            throw Problem(.unauthorized, "send the \(name) as Authorization: Bearer <token>",
                          headers: [.wwwAuthenticate: "Bearer realm=\"\(realm)\""])
        }
        guard BearerToken.matches(header, expected) else {
            if let weaker, BearerToken.matches(header, weaker.token) { throw Problem(.forbidden, weaker.message) }
            throttle.failed(client)
            throw Problem(.unauthorized, "the \(name) is not valid",
                          headers: [.wwwAuthenticate: "Bearer realm=\"\(realm)\", error=\"invalid_token\""])
        }
        return try await next(request, context)
    }
}

/// Failures per client key in fixed one-minute windows, in this process's memory: `limit` failures in a window, and the
/// client waits for the window's end. Windows that ended are forgotten once many keys are held.
final class FailureThrottle: Sendable {
    let limit: Int
    let window: TimeInterval
    private struct Count { var started: Date; var failures: Int }
    private let counts = Mutex<[String: Count]>([:])

    /// `limit` 0: no throttle.
    init(limit: Int, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// Whole seconds `client` must wait, or nil when it may try.
    func wait(_ client: String, now: Date = Date()) -> Int? {
        guard limit > 0 else { return nil }
        return counts.withLock { counts -> Int? in
            guard let count = counts[client], count.failures >= limit else { return nil }
            let left = count.started.addingTimeInterval(window).timeIntervalSince(now)
            return left > 0 ? max(1, Int(left.rounded(.up))) : nil
        }
    }

    func failed(_ client: String, now: Date = Date()) {
        guard limit > 0 else { return }
        counts.withLock { counts in
            if counts.count > 10_000 { counts = counts.filter { now.timeIntervalSince($0.value.started) < window } }
            if let count = counts[client], now.timeIntervalSince(count.started) < window {
                counts[client]!.failures = count.failures + 1
            } else {
                counts[client] = Count(started: now, failures: 1)
            }
        }
    }
}
