import Foundation
import Hummingbird
import HummingbirdTesting
import Shared
import Testing
import TestSupport
@testable import Admin
@testable import Analytics

/// The admin's Reports pages: the renderers on their own, and the dashboard's data read from a live
/// analytics service through the admin's client, equal to the truth.
@Suite("Admin reports pages", .serialized, .stopsIfHung)
struct AdminReportsTests {
    static let selection = Reports.Selection(from: "2025-03-01", to: "2025-03-03", tourId: nil, metric: .uniqueDevices)

    static let sample = Reports.Dashboard(
        summary: .init(toursStarted: 1_234, toursCompleted: 617, completionRate: 0.5, uniqueDevices: 42, uniqueTourists: 7,
                       poiViews: 90, poiVisits: 80, mediaPlays: 3),
        days: [.init(date: "2025-03-01", toursStarted: 1, toursCompleted: 0, uniqueDevices: 12, poiViews: 5, poiVisits: 4, mediaPlays: 0),
               .init(date: "2025-03-02", toursStarted: 0, toursCompleted: 0, uniqueDevices: 0, poiViews: 0, poiVisits: 0, mediaPlays: 0),
               .init(date: "2025-03-03", toursStarted: 3, toursCompleted: 2, uniqueDevices: 30, poiViews: 85, poiVisits: 76, mediaPlays: 3)],
        pois: [.init(poiId: UUID(uuidString: "6f1c8a52-0000-4000-8000-000000000001")!, name: "<script>alert(1)</script> Hall", views: 85, visits: 70,
                     averageDwellSeconds: 125, mediaPlays: 3),
               .init(poiId: UUID(uuidString: "6f1c8a52-0000-4000-8000-000000000002")!, name: nil, views: 5, visits: 10, averageDwellSeconds: 0, mediaPlays: 0)],
        tours: [.init(tourId: UUID(uuidString: "7a000000-0000-4000-8000-000000000001")!, name: "Students Tour", starts: 4, completions: 2, completionRate: 0.5,
                      uniqueDevices: 4, averageDurationSeconds: 3_725)],
        devices: .init(platforms: ["ios": 30, "android": 10, "unknown": 2], models: [:], osVersions: [:], appVersions: ["2.1.0": 40, "unknown": 2]),
        funnel: nil,
        hours: HourReport(weekdays: HourReport.weekdayNames.enumerated().map { index, day in
            WeekdayHours(weekday: day, visits: (0..<24).map { hour in index == 2 && hour == 14 ? 1_200 : (hour == 9 ? 3 : 0) })
        }),
        searches: SearchReport(top: [SearchRow(query: "<b>library</b>", searches: 1_500, zeroResults: 2)],
                               nothingFound: [NothingFoundRow(query: "<b>library</b>", searches: 2)]),
        views: ViewsReport(events: [ViewRow(id: UUID(), name: "<i>Open Day</i>", views: 1_234)], pages: [], people: []),
        languages: LanguageReport(languages: [.init(language: "es", tourStarts: 3, poiViews: 10), .init(language: "unknown", tourStarts: 1, poiViews: 30)]))

    @Test("the dashboard shows tiles, a labelled chart with every number, the tables and a CSV link each; text is escaped")
    func dashboard() {
        let html = ReportsPages.dashboard(Self.selection, data: Self.sample, error: nil, tourChoices: [(id: "7a000000-0000-4000-8000-000000000001", name: "Students Tour")],
                                          today: "2025-03-03", presets: [(label: "Last 7 days", from: "2025-02-25")]).rendered
        #expect(html.contains("<li class=\"tile\" data-metric=\"toursStarted\"><span class=\"tile-value\">1,234</span>"))
        #expect(html.contains("<span class=\"tile-value\">50.0 %</span> <span class=\"tile-label\">Completion rate</span>"))
        // One bar per day, its number in the tooltip and beside it; axes named.
        #expect(html.components(separatedBy: "<g class=\"bar\">").count - 1 == 3)
        for (number, day) in [("12", "2025-03-01"), ("0", "2025-03-02"), ("30", "2025-03-03")] {
            #expect(html.contains("<title>\(number) unique devices on \(day)</title></rect><text"), "\(day)")
            #expect(html.contains(">\(number)</text></g>"), "\(day)")
        }
        #expect(html.contains(">Day (UTC, month-day)</text>"))
        #expect(html.contains(">Unique devices</text>\n</svg>"))
        #expect(html.contains("role=\"img\" aria-labelledby=\"daily-chart-title daily-chart-desc\""))
        // Tables: names escaped, unnamed ones say so, durations readable, shares of devices.
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; Hall"))
        #expect(!html.contains("<script>"))
        #expect(html.contains("Unnamed POI 6f1c8a52"))
        #expect(html.contains("2 min 5 s"))
        #expect(html.contains("1 h 2 min"))
        #expect(html.contains("<td>ios</td><td class=\"number\">30</td><td class=\"number\">71.4 %</td>"))
        // Visits by hour: a heat table, the busiest cell darkest; searches escaped.
        #expect(html.contains("<td class=\"heat heat-5\" title=\"Wednesday 14:00–15:00 UTC: 1200 visits\">1,200</td>"))
        #expect(html.contains("<td class=\"heat heat-1\" title=\"Monday 9:00–10:00 UTC: 3 visits\">3</td>"))
        #expect(html.contains("<td>&lt;b&gt;library&lt;/b&gt;</td><td class=\"number\">1,500</td><td class=\"number\">2</td>"))
        // Most viewed: named, escaped, empty lists said so.
        #expect(html.contains("<td>&lt;i&gt;Open Day&lt;/i&gt;</td><td class=\"number\">1,234</td>"))
        #expect(html.contains("No page was opened in this range."))
        // Languages: each tag marked as its language, its counts with a bar and a share; no language said so.
        #expect(html.contains("<tr><td><span lang=\"es\">es</span></td><td class=\"number\">3 <svg class=\"meter\""))
        #expect(html.contains("<td class=\"number\">75.0 %</td><td class=\"number\">10 <svg"))
        #expect(html.contains("not told (unknown)</span></td><td class=\"number\">1 <svg"))
        var older = Self.sample
        older.languages = nil
        #expect(ReportsPages.dashboard(Self.selection, data: older, error: nil, tourChoices: [], today: "2025-03-03", presets: []).rendered
                    .contains("This analytics does not count languages yet."))
        // No tour chosen: no funnel, and it says how to get one.
        #expect(!html.contains("funnel-table"))
        #expect(html.contains("Choose a tour above"))
        for name in ReportsPages.csvNames where name != "funnel" {
            #expect(html.contains("id=\"csv-\(name)\" href=\"/reports/\(name).csv?from=2025-03-01&amp;to=2025-03-03\""), "\(name)")
        }
        #expect(html.contains("<option value=\"uniqueDevices\" selected>Unique devices</option>"))
        #expect(html.contains("href=\"/reports?from=2025-02-25&amp;to=2025-03-03\">Last 7 days</a>"))
    }

    @Test("quick ranges: this week from its Monday and this month from its first, in UTC days, then the last 7, 30 and 90 days")
    func quickRanges() throws {
        // Wednesday 5 March 2025, 23:30 UTC (Thursday already in some zones: the reports' days are UTC days).
        let now = try #require(RFC3339.parse("2025-03-05T23:30:00Z"))
        let presets = ReportsController.presets(now: now)
        #expect(presets.map(\.label) == ["This week", "This month", "Last 7 days", "Last 30 days", "Last 90 days"])
        #expect(presets.map(\.from) == ["2025-03-03", "2025-03-01", "2025-02-27", "2025-02-04", "2024-12-06"])
        // On a Sunday, this week began six days before.
        #expect(ReportsController.presets(now: try #require(RFC3339.parse("2025-03-09T00:00:00Z")))[0].from == "2025-03-03")
    }

    @Test("a CSV's file name says its report, UTC days, tour by name (all tours for site-wide reports) and up to when it was counted")
    func csvFileNames() throws {
        let tour = UUID()
        var selection = Reports.Selection(from: "2026-11-01", to: "2026-11-29", tourId: tour.uuidString.lowercased(), metric: .uniqueDevices)
        let counted = try #require(RFC3339.parse("2026-11-29T06:18:05.028Z"))
        #expect(ReportsController.csvFileName("pois", selection, tourName: "Students’ Tour: Café & Quad (Beta)", countedUpTo: counted)
                == "itour-pois-2026-11-01-to-2026-11-29-students-tour-cafe-quad-beta-counted-to-2026-11-29T0618Z.csv")
        #expect(ReportsController.csvFileName("views", selection, tourName: "Students Tour", countedUpTo: nil)
                == "itour-views-2026-11-01-to-2026-11-29-all-tours.csv")
        #expect(ReportsController.csvFileName("daily", selection, tourName: "東京", countedUpTo: nil)
                == "itour-daily-2026-11-01-to-2026-11-29-tour-\(tour.uuidString.lowercased()).csv")
        selection.tourId = nil
        #expect(ReportsController.csvFileName("summary", selection, tourName: nil, countedUpTo: nil)
                == "itour-summary-2026-11-01-to-2026-11-29-all-tours.csv")
        let long = ReportsController.slug(String(repeating: "Arts Walk ", count: 20)) ?? ""
        #expect(long.utf8.count <= 40 && long.hasPrefix("arts-walk-arts-walk") && !long.hasSuffix("-"))
        #expect(ReportsController.slug(String(repeating: "a", count: 50)) == String(repeating: "a", count: 40), "a long first word is cut, not dropped")
    }

    @Test("the tours CSV loses the rows of hidden tours whole, a name with line breaks included")
    func hiddenTourRows() {
        let shown = UUID(), hidden = UUID(), last = UUID()
        let csv = "tourId,name,starts\r\n\"\(shown.lowercased)\",\"Open Day\",3\r\n\"\(hidden.lowercased)\",\"Test\r\n\"\"two\"\" lines\",1\r\n"
            + "\"\(last.lowercased)\",\"Last\",2\r\n"
        let kept = String(decoding: ReportsController.shownTourRows(Array(csv.utf8)) { $0 != hidden }, as: UTF8.self)
        #expect(kept == "tourId,name,starts\r\n\"\(shown.lowercased)\",\"Open Day\",3\r\n\"\(last.lowercased)\",\"Last\",2\r\n")
        #expect(String(decoding: ReportsController.shownTourRows(Array(csv.utf8)) { _ in true }, as: UTF8.self) == csv)
    }

    @Test("when analytics cannot answer, the page says so instead of showing figures")
    func unavailable() {
        let html = ReportsPages.dashboard(Self.selection, data: nil, error: "Analytics did not answer (connection refused).", tourChoices: [],
                                          today: "2025-03-03", presets: []).rendered
        #expect(html.contains("<p class=\"notice error\" role=\"alert\" id=\"report-error\">Analytics did not answer (connection refused).</p>"))
        #expect(!html.contains("daily-chart"))
        #expect(html.contains("id=\"report-range\""), "the form stays, to try another range")
    }

    @Test("chart axes end on round numbers; a 90-day chart turns its numbers upright")
    func chartScale() {
        #expect(ReportChart.scale(0) == (4, 1))
        #expect(ReportChart.scale(7) == (8, 2))
        #expect(ReportChart.scale(1_234) == (1_500, 500))
        #expect(ReportChart.scale(100) == (100, 25) || ReportChart.scale(100) == (100, 50))
        let bars = (0..<90).map { ReportChart.Bar(label: "d\($0)", value: $0, caption: "on d\($0)") }
        let svg = ReportChart.bars(bars, id: "c", title: "t", xAxis: "x", yAxis: "y").rendered
        #expect(svg.components(separatedBy: "transform=\"rotate(-90").count - 1 == 90 + 1)
        #expect(svg.contains("<title>89 on d89</title>"))
        #expect(grouped(1_234_567) == "1,234,567" && grouped(-1_000) == "-1,000" && grouped(999) == "999")
    }

    @Test("the range form's values are checked before analytics is asked")
    func selection() throws {
        func parse(_ query: String) -> (Reports.Selection, String?) {
            ReportsController.selection(Request(head: HTTPRequest(method: .get, scheme: "http", authority: "x", path: "/reports?\(query)"), body: RequestBody(buffer: ByteBuffer())),
                                        now: RFC3339.parse("2025-03-03T12:00:00Z")!)
        }
        #expect(parse("").1 == nil)
        #expect(parse("").0.to == "2025-03-03")
        #expect(parse("").0.from == "2025-02-02", "the last 30 days, today included")
        #expect(parse("from=2025-02-30&to=2025-03-01").1 == "From must be a date as YYYY-MM-DD.")
        #expect(parse("from=2025-03-02&to=2025-03-01").1 == "From must not be after To.")
        #expect(parse("from=2025-03-01&to=2025-03-02&tourId=nope").1 == "Choose a tour from the list.")
        #expect(parse("from=2025-03-01&to=2025-03-02&metric=poiViews").0.metric == .poiViews)
    }

    @Test("the dashboard's figures, read from a live analytics through the admin's client, equal the truth")
    func liveAnalytics() async throws {
        let (harness, workload, truth) = try await AnalyticsHarness.loaded(seed: 31, count: 800, deliverySeed: 32)
        try await harness.app().test(.live) { client in
            try await harness.waitUntilCounted(truth.all.count)
            let port = try #require(client.port)
            var analytics = try AnalyticsClient(url: "http://127.0.0.1:\(port)", token: AnalyticsHarness.token)
            // What this test checks is the figures, not how fast they come: a full run's CPU-bound tests can hold a report
            // past the admin's 10 s (a CI run of a026034 timed out here).
            analytics.timeout = .seconds(60)
            let controller = ReportsController(analytics: analytics, projection: AdminCatalogProjection())
            let query = ReportQuery(from: workload.firstDay, to: workload.lastDay, tourId: workload.tours[1])
            let selection = Reports.Selection(from: query.from.description, to: query.to.description, tourId: workload.tours[1].lowercased,
                                              metric: .poiVisits)
            let data = try await controller.fetch(selection)
            let expected = truth.summary(query)
            #expect(data.summary.toursStarted == expected.toursStarted && data.summary.uniqueDevices == expected.uniqueDevices
                    && data.summary.uniqueTourists == expected.uniqueTourists && data.summary.poiVisits == expected.poiVisits)
            #expect(data.days.map(\.poiVisits) == truth.daily(query).map(\.poiVisits))
            #expect(data.pois.map(\.poiId) == truth.pois(query).map(\.poiId))
            #expect(data.tours.map(\.starts) == truth.tours(query).map(\.starts))
            #expect(data.devices.platforms == truth.devices(query).platforms)
            // Site-wide, whatever tour is chosen.
            let languages = truth.languages(query).languages
            #expect(data.languages?.languages.map(\.language) == languages.map(\.language))
            #expect(data.languages?.languages.map(\.tourStarts) == languages.map(\.tourStarts))
            #expect(data.languages?.languages.map(\.poiViews) == languages.map(\.poiViews))
            #expect(try await controller.analytics.csv("languages", selection.apiQuery).text.hasPrefix("language,tourStarts,poiViews\r\n"))
            let csv = try await controller.analytics.csv("daily", selection.apiQuery)
            #expect(csv.header("Content-Disposition")?.contains("attachment") == true)
            #expect(csv.text.hasPrefix("date,toursStarted,toursCompleted,uniqueDevices,poiViews,poiVisits,mediaPlays\r\n"))

            let wrongToken = ReportsController(analytics: try AnalyticsClient(url: "http://127.0.0.1:\(port)", token: "wrong"),
                                               projection: AdminCatalogProjection())
            await #expect(throws: AnalyticsClient.Failure.self) { try await wrongToken.fetch(selection) }
        }
        let down = try AnalyticsClient(url: "http://127.0.0.1:1", token: "x")
        do {
            _ = try await down.report("summary", [("from", "2025-01-01"), ("to", "2025-01-01")], as: SummaryReport.self)
            Issue.record("no error from a closed port")
        } catch let failure as AnalyticsClient.Failure {
            #expect(failure.description.hasPrefix("Analytics did not answer"))
        }
    }
}
