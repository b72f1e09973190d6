import Foundation
import Hummingbird
import Shared

/// The "Reports" pages (owners and viewers): a dashboard over a date range read from the analytics
/// Reports API, and each report as a CSV download, proxied so the browser never holds the reports token.
struct ReportsController {
    let analytics: AnalyticsClient
    let projection: AdminCatalogProjection

    func register(on router: RouterGroup<AdminRequestContext>) {
        router.get("/assets/reports.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: ReportsPages.stylesheet)))
        }
        router.get("/reports", use: dashboard)
        for name in ReportsPages.csvNames {
            router.get(RouterPath("/reports/\(name).csv")) { request, context in try await csv(name, request, context: context) }
        }
    }

    @Sendable func dashboard(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let user = try context.require([.owner, .viewer])
        let now = Date()
        let today = Self.day(now)
        let content = projection.content
        let (selection, problem) = Self.selection(request, now: now, role: user.role, content: content)
        var data: Reports.Dashboard?
        var error = problem
        // Up to when events are counted; the figures still show if only this cannot be read.
        async let freshness = try? analytics.freshness()
        let shown = { (id: UUID) in Self.shows(id, selection, content) }
        if problem == nil {
            do {
                data = try await fetch(selection)
                data?.tours.removeAll { !shown($0.tourId) }
            } catch let failure as AnalyticsClient.Failure {
                error = failure.description
            }
        }
        let choices = content.sortedTours.filter { shown($0.id) }.map { (id: $0.id.uuidString.lowercased(), name: $0.content.name) }
        let presets = Self.presets(now: now)
        let body = ReportsPages.dashboard(selection, data: data, error: error, tourChoices: choices, today: today, presets: presets,
                                          freshness: await freshness, now: now, offersAllTours: user.role == .owner)
        let status: HTTPResponse.Status = problem != nil ? .badRequest : (data == nil ? .serviceUnavailable : .ok)
        return AdminPage(title: "Reports", context: context, breadcrumbs: [("Reports", nil)], body: body, status: status).response()
    }

    /// Every report the dashboard shows, at once.
    func fetch(_ selection: Reports.Selection) async throws -> Reports.Dashboard {
        let query = selection.apiQuery
        async let summary = analytics.report("summary", query, as: SummaryReport.self)
        async let days = analytics.report("daily", query, as: DailyReport.self)
        async let pois = analytics.report("pois", query, as: PoiReport.self)
        async let tours = analytics.report("tours", query, as: TourReport.self)
        async let devices = analytics.report("devices", query, as: DeviceReport.self)
        async let hours = analytics.report("hours", query, as: HourReport.self)
        async let searches = analytics.report("searches", query, as: SearchReport.self)
        async let views = analytics.report("views", query, as: ViewsReport.self)
        async let funnel = selection.tourId == nil ? nil : analytics.report("funnel", query, as: FunnelReport.self)
        async let languages = optionalReport("languages", query, as: LanguageReport.self)
        return Reports.Dashboard(summary: try await summary, days: try await days.days, pois: try await pois.pois,
                                 tours: try await tours.tours, devices: try await devices, funnel: try await funnel,
                                 hours: try await hours, searches: try await searches, views: try await views,
                                 languages: try await languages)
    }

    /// A report an older analytics does not have yet (it answers 404): nil then, so the rest of the dashboard still shows.
    private func optionalReport<T: Decodable>(_ name: String, _ query: [(String, String)], as type: T.Type) async throws -> T? {
        do {
            return try await analytics.report(name, query, as: type)
        } catch AnalyticsClient.Failure.refused(status: 404, _) {
            return nil
        }
    }

    /// Published tours, unless all are asked for (and the one selected, whatever its status). A viewer's selection never
    /// asks for all, nor selects a tour that is not published (`selection(_:now:role:content:)`): viewers see only
    /// published tours' names.
    static func shows(_ id: UUID, _ selection: Reports.Selection, _ content: AdminCatalogProjection.Content) -> Bool {
        selection.allTours || content.tours[id]?.status == .published || id.uuidString.lowercased() == selection.tourId
    }

    /// The tours CSV without the rows of tours the dashboard leaves out: records split where a line break is
    /// outside quotes (a name may hold one), each row's first field its quoted tour id.
    static func shownTourRows(_ csv: [UInt8], _ shows: (UUID) -> Bool) -> [UInt8] {
        var kept: [UInt8] = []
        var start = 0, quoted = false, isHeader = true
        for index in csv.indices {
            if csv[index] == UInt8(ascii: "\"") { quoted.toggle() }
            guard csv[index] == UInt8(ascii: "\n") && !quoted || index == csv.count - 1 else { continue }
            let record = csv[start...index]
            let id = UUID(uuidString: String(decoding: record.drop { $0 == UInt8(ascii: "\"") }.prefix(36), as: UTF8.self))
            if isHeader || id.map(shows) ?? true { kept += record }
            isHeader = false
            start = index + 1
        }
        return kept
    }

    func csv(_ name: String, _ request: Request, context: AdminRequestContext) async throws -> Response {
        let user = try context.require([.owner, .viewer])
        let content = projection.content
        let (selection, problem) = Self.selection(request, now: Date(), role: user.role, content: content)
        if let problem { throw AdminError.badRequest(problem) }
        async let freshness = try? analytics.freshness()
        do {
            let answer = try await analytics.csv(name, selection.apiQuery)
            var headers: HTTPFields = [.contentType: "text/csv; charset=utf-8"]
            let tourName = selection.tourId.flatMap { UUID(uuidString: $0) }.flatMap { content.tours[$0]?.content.name }
            let file = Self.csvFileName(name, selection, tourName: tourName, countedUpTo: await freshness?.countedUpTo)
            headers[.contentDisposition] = "attachment; filename=\"\(file)\""
            let body = name == "tours" ? Self.shownTourRows(answer.body) { Self.shows($0, selection, content) } : answer.body
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        } catch let failure as AnalyticsClient.Failure {
            if case .refused(400, let detail) = failure { throw AdminError.badRequest(detail) }
            return ErrorPage.response(.serviceUnavailable, "Reports unavailable", failure.description, context: context)
        }
    }

    /// Reports counted site-wide whatever tour is chosen: what visitors searched for, the events, pages, people and
    /// POI sources they opened (none of them belongs to one tour), and the app's languages.
    static let siteWideReports: Set<String> = ["searches", "views", "languages"]

    /// A download's name says what it holds, since a saved file is all a reader has later: the report, its UTC days, its
    /// tour by name (or all tours), and up to when events were counted, e.g.
    /// `itour-pois-2026-11-01-to-2026-11-29-students-tour-counted-to-2026-11-29T0618Z.csv`.
    static func csvFileName(_ name: String, _ selection: Reports.Selection, tourName: String?, countedUpTo: Date?) -> String {
        var scope = "all-tours"
        if !siteWideReports.contains(name), selection.tourId != nil {
            scope = slug(tourName ?? "") ?? "tour-\(selection.tourId ?? "")"
        }
        let counted = countedUpTo.map { date in
            "-counted-to-" + RFC3339.format(date).prefix(16).replacingOccurrences(of: ":", with: "") + "Z"
        } ?? ""
        return "itour-\(name)-\(selection.from)-to-\(selection.to)-\(scope)\(counted).csv"
    }

    /// A name as lower-case ASCII words joined by hyphens (accents folded, other characters dropped), at most 40 bytes;
    /// nil when nothing is left.
    static func slug(_ text: String) -> String? {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
        var words: [String] = [], word = ""
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) { word.unicodeScalars.append(scalar) }
            else if !word.isEmpty { words.append(word); word = "" }
        }
        if !word.isEmpty { words.append(word) }
        var slug = ""
        for word in words {
            let next = slug.isEmpty ? String(word.prefix(40)) : "-" + word
            guard slug.utf8.count + next.utf8.count <= 40 else { break }
            slug += next
        }
        return slug.isEmpty ? nil : slug.lowercased()
    }

    /// `selection(_:now:)` as `role` may have it: owners anything; viewers published tours only (no `allTours`, and a
    /// selected tour that is not published is refused like an unknown one).
    static func selection(_ request: Request, now: Date, role: Role, content: AdminCatalogProjection.Content) -> (Reports.Selection, String?) {
        var (selection, problem) = selection(request, now: now)
        guard role != .owner else { return (selection, problem) }
        selection.allTours = false
        if problem == nil, let tour = selection.tourId, content.tours[UUID(uuidString: tour) ?? UUID()]?.status != .published {
            problem = "Choose a tour from the list."
            selection.tourId = nil
        }
        return (selection, problem)
    }

    /// The range, tour and chart the request asks for; the last 30 days by default. A second value is the
    /// problem with them, if any (the form is shown again with it).
    static func selection(_ request: Request, now: Date) -> (Reports.Selection, String?) {
        let parameters = request.uri.queryParameters
        func value(_ name: String) -> String? {
            parameters.get(name).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let selection = Reports.Selection(from: value("from") ?? day(now.addingTimeInterval(-29 * 86_400)), to: value("to") ?? day(now),
                                          tourId: value("tourId").map { $0.lowercased() },
                                          metric: value("metric").flatMap(Reports.Metric.init(rawValue:)) ?? .uniqueDevices,
                                          allTours: value("allTours") == "1")
        for (name, text) in [("From", selection.from), ("To", selection.to)] where !isDay(text) {
            return (selection, "\(name) must be a date as YYYY-MM-DD.")
        }
        if selection.from > selection.to { return (selection, "From must not be after To.") }
        if let tour = selection.tourId, UUID(uuidString: tour) == nil { return (selection, "Choose a tour from the list.") }
        return (selection, nil)
    }

    static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { return false }
        return RFC3339.parse(text + "T00:00:00Z").map { day($0) == text } ?? false
    }

    /// The UTC day of `date` as YYYY-MM-DD.
    static func day(_ date: Date) -> String { String(RFC3339.format(date).prefix(10)) }

    /// The quick ranges, each up to today: this week (from Monday) and month, then the last 7, 30 and 90 days. Days are
    /// UTC days, as the reports count them (DESIGN.md, "Reports").
    static func presets(now: Date) -> [(label: String, from: String)] {
        var utc = Calendar(identifier: .iso8601)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let week = utc.dateInterval(of: .weekOfYear, for: now)?.start ?? now
        let month = utc.dateInterval(of: .month, for: now)?.start ?? now
        return [(label: "This week", from: day(week)), (label: "This month", from: day(month))]
            + [("Last 7 days", 6), ("Last 30 days", 29), ("Last 90 days", 89)].map { (label: $0.0, from: day(now.addingTimeInterval(Double(-$0.1) * 86_400))) }
    }
}
