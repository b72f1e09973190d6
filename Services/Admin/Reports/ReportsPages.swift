import Foundation
import Shared

/// The reports as the analytics Reports API returns them (DESIGN.md "Reports API").
enum Reports {
    /// Everything the dashboard shows.
    struct Dashboard: Sendable {
        var summary: SummaryReport
        var days: [DailyReportRow]
        var pois: [PoiReportRow]
        var tours: [TourReportRow]
        var devices: DeviceReport
        /// Only with a tour selected.
        var funnel: FunnelReport?
        var hours: HourReport
        var searches: SearchReport
        var views: ViewsReport
        /// Nil from an analytics older than the languages report (it answers 404).
        var languages: LanguageReport?
    }

    /// The daily series a chart can show.
    enum Metric: String, CaseIterable, Sendable {
        case uniqueDevices, toursStarted, toursCompleted, poiViews, poiVisits, mediaPlays

        var title: String {
            switch self {
            case .uniqueDevices: "Unique devices"
            case .toursStarted: "Tours started"
            case .toursCompleted: "Tours completed"
            case .poiViews: "POI views"
            case .poiVisits: "POI visits"
            case .mediaPlays: "Media plays"
            }
        }

        func value(_ day: DailyReportRow) -> Int {
            switch self {
            case .uniqueDevices: day.uniqueDevices
            case .toursStarted: day.toursStarted
            case .toursCompleted: day.toursCompleted
            case .poiViews: day.poiViews
            case .poiVisits: day.poiVisits
            case .mediaPlays: day.mediaPlays
            }
        }
    }

    /// What the range form asked for.
    struct Selection: Sendable, Equatable {
        var from: String
        var to: String
        var tourId: String?
        var metric: Metric
        /// Draft and archived tours (test tours among them) are left out of the tour list and table unless asked.
        var allTours = false

        /// The query the Reports API takes.
        var apiQuery: [(String, String)] {
            [("from", from), ("to", to)] + (tourId.map { [("tourId", $0)] } ?? [])
        }

        /// This selection as a query string for links (CSV downloads, other charts).
        func query(metric: Metric? = nil, range: (String, String)? = nil) -> String {
            var items = [URLQueryItem(name: "from", value: range?.0 ?? from), URLQueryItem(name: "to", value: range?.1 ?? to)]
            if let tourId { items.append(URLQueryItem(name: "tourId", value: tourId)) }
            if let metric = metric ?? (self.metric == .uniqueDevices ? nil : self.metric) { items.append(URLQueryItem(name: "metric", value: metric.rawValue)) }
            if allTours { items.append(URLQueryItem(name: "allTours", value: "1")) }
            var components = URLComponents()
            components.queryItems = items
            return components.percentEncodedQuery ?? ""
        }
    }
}

/// The reports pages' HTML (ReportsController fetches, these render).
enum ReportsPages {
    static let csvNames = ["summary", "daily", "pois", "tours", "devices", "funnel", "hours", "searches", "views", "languages"]

    /// The whole dashboard; `error` in place of the figures when analytics could not give them.
    static func dashboard(_ selection: Reports.Selection, data: Reports.Dashboard?, error: String?, tourChoices: [(id: String, name: String)],
                          today: String, presets: [(label: String, from: String)], freshness: ReportFreshness? = nil, now: Date = Date(),
                          offersAllTours: Bool = true) -> HTML {
        let scope: HTML = selection.tourId.map { id in
            "; only events of the tour <strong>\(tourChoices.first { $0.id == id }?.name ?? id)</strong>"
        } ?? ""
        var body: HTML = """
            <link rel="stylesheet" href="/assets/reports.css">
            <h1>Reports</h1>
            \(rangeForm(selection, tourChoices: tourChoices, today: today, presets: presets, offersAllTours: offersAllTours))
            <p class="muted" id="report-scope">Whole UTC days from \(selection.from) to \(selection.to), both included\(scope). \
            Each event is counted once, however often a phone sent it.</p>
            \(freshness.map { Self.freshness($0, now: now) } ?? .empty)
            """
        guard let data else {
            body += "<p class=\"notice error\" role=\"alert\" id=\"report-error\">\(error ?? "The reports are not available.")</p>"
            return body
        }
        body += summary(data.summary, selection)
        body += daily(data.days, selection)
        body += pois(data.pois, selection)
        body += data.funnel.map { funnel($0, selection) } ?? """
            <section id="funnel" aria-labelledby="funnel-heading"><h2 id="funnel-heading">Stop by stop</h2>
            <p class="muted">Choose a tour above to see how many visitors reached each of its stops.</p></section>
            """
        body += tours(data.tours, selection)
        body += hours(data.hours, selection)
        body += searches(data.searches, selection)
        body += views(data.views, selection)
        body += languages(data.languages, selection)
        body += devices(data.devices, selection)
        return body
    }

    /// "Counted up to 15:42:10 UTC; 4,896 waiting", and a warning when counting is more than a minute behind.
    static func freshness(_ freshness: ReportFreshness, now: Date) -> HTML {
        let upTo = freshness.countedUpTo.map { time($0, now: now) + " UTC" } ?? "(not known yet)"
        let waiting = freshness.waiting == 0 ? "nothing waiting" : "\(grouped(Int(freshness.waiting))) waiting"
        var html: HTML = "<p class=\"muted\" id=\"report-freshness\">Events counted up to \(upTo); \(waiting).</p>"
        if freshness.isBehind {
            let behind = freshness.behindSeconds >= 120 ? "\(freshness.behindSeconds / 60) minutes" : "\(freshness.behindSeconds) seconds"
            html += """
                <p class="notice warning" role="alert" id="report-behind">Counting is \(behind) behind: events received after \(upTo) \
                are not in these figures yet (\(grouped(Int(freshness.waiting))) waiting). See System Status.</p>
                """
        }
        return html
    }

    /// HH:MM:SS when `date` is on today's UTC day, else YYYY-MM-DD HH:MM:SS.
    static func time(_ date: Date, now: Date) -> String {
        let text = RFC3339.format(date), today = RFC3339.format(now)
        let clock = String(text.dropFirst(11).prefix(8))
        return text.prefix(10) == today.prefix(10) ? clock : "\(text.prefix(10)) \(clock)"
    }

    private static func allToursBox(_ selection: Reports.Selection) -> HTML {
        "<div class=\"field checkbox\"><input type=\"checkbox\" id=\"allTours\" name=\"allTours\" value=\"1\"\(selection.allTours ? " checked" : "")>"
            + "<label for=\"allTours\">Include draft and archived tours</label></div>"
    }

    /// `offersAllTours`: the "Include draft and archived tours" box (owners; viewers see published tours only).
    static func rangeForm(_ selection: Reports.Selection, tourChoices: [(id: String, name: String)], today: String,
                          presets: [(label: String, from: String)], offersAllTours: Bool = true) -> HTML {
        let tourOptions: [HTML] = ["<option value=\"\"\(selected(selection.tourId == nil))>All tours</option>"]
            + tourChoices.map { "<option value=\"\($0.id)\"\(selected($0.id == selection.tourId))>\($0.name)</option>" }
        let metricOptions: [HTML] = Reports.Metric.allCases.map {
            "<option value=\"\($0.rawValue)\"\(selected($0 == selection.metric))>\($0.title)</option>"
        }
        let quick: [HTML] = presets.map { preset in
            "<a href=\"/reports?\(Reports.Selection(from: preset.from, to: today, tourId: selection.tourId, metric: selection.metric).query())\">\(preset.label)</a>"
        }
        return """
            <form method="get" action="/reports" class="report-range" id="report-range">
            <div class="field"><label for="from">From (UTC day)</label><input type="date" id="from" name="from" value="\(selection.from)" required></div>
            <div class="field"><label for="to">To (UTC day)</label><input type="date" id="to" name="to" value="\(selection.to)" required></div>
            <div class="field"><label for="tourId">Tour</label><select id="tourId" name="tourId">\(tourOptions)</select></div>
            <div class="field"><label for="metric">Daily chart</label><select id="metric" name="metric">\(metricOptions)</select></div>
            \(offersAllTours ? allToursBox(selection) : "")
            <div class="field"><button type="submit" class="primary">Show</button></div>
            </form>
            <p class="quick-ranges">Quick ranges: \(quick.joined(separator: " · "))</p>
            """
    }

    static func selected(_ yes: Bool) -> HTML { yes ? " selected" : "" }

    static func csvLink(_ name: String, _ selection: Reports.Selection, _ what: String) -> HTML {
        "<a class=\"csv\" id=\"csv-\(name)\" href=\"/reports/\(name).csv?\(selection.query())\" download>Download \(what) as CSV</a>"
    }

    static func summary(_ summary: SummaryReport, _ selection: Reports.Selection) -> HTML {
        let tiles: [(String, String, String)] = [
            ("toursStarted", "Tours started", grouped(summary.toursStarted)),
            ("toursCompleted", "Tours completed", grouped(summary.toursCompleted)),
            ("completionRate", "Completion rate", percent(summary.completionRate)),
            ("uniqueDevices", "Unique devices", grouped(summary.uniqueDevices)),
            ("uniqueTourists", "Unique tourists", grouped(summary.uniqueTourists)),
            ("poiViews", "POI views", grouped(summary.poiViews)),
            ("poiVisits", "POI visits", grouped(summary.poiVisits)),
            ("mediaPlays", "Media plays", grouped(summary.mediaPlays)),
        ]
        return """
            <section id="summary" aria-labelledby="summary-heading">
            <h2 id="summary-heading">Summary</h2>
            <ul class="tiles">\(tiles.map { key, label, value -> HTML in
                "<li class=\"tile\" data-metric=\"\(key)\"><span class=\"tile-value\">\(value)</span> <span class=\"tile-label\">\(label)</span></li>"
            })</ul>
            <p>\(csvLink("summary", selection, "the summary"))</p>
            </section>
            """
    }

    static func daily(_ days: [DailyReportRow], _ selection: Reports.Selection) -> HTML {
        let metric = selection.metric
        let bars = days.map { day in
            ReportChart.Bar(label: String(day.date.dropFirst(5)), value: metric.value(day), caption: "\(metric.title.lowercased()) on \(day.date)")
        }
        let switches: [HTML] = Reports.Metric.allCases.map { other in
            other == metric ? "<strong>\(other.title)</strong>" : "<a href=\"/reports?\(selection.query(metric: other))\">\(other.title)</a>"
        }
        let rows: [HTML] = days.map { day in
            """
            <tr><td>\(day.date)</td><td class="number">\(grouped(day.uniqueDevices))</td><td class="number">\(grouped(day.toursStarted))</td>\
            <td class="number">\(grouped(day.toursCompleted))</td><td class="number">\(grouped(day.poiViews))</td>\
            <td class="number">\(grouped(day.poiVisits))</td><td class="number">\(grouped(day.mediaPlays))</td></tr>
            """
        }
        return """
            <section id="daily" aria-labelledby="daily-heading">
            <h2 id="daily-heading">\(metric.title) per day</h2>
            <p class="chart-switch">Chart: \(switches.joined(separator: " · "))</p>
            <div class="chart-frame">\(ReportChart.bars(bars, id: "daily-chart", title: "\(metric.title) per day, \(selection.from) to \(selection.to)",
                                                         xAxis: "Day (UTC, month-day)", yAxis: metric.title))</div>
            <details><summary>Every day's figures</summary>
            <table id="daily-table"><thead><tr><th>Day</th><th>Unique devices</th><th>Tours started</th><th>Tours completed</th>\
            <th>POI views</th><th>POI visits</th><th>Media plays</th></tr></thead><tbody>\(rows)</tbody></table></details>
            <p>\(csvLink("daily", selection, "the daily figures"))</p>
            </section>
            """
    }

    static func pois(_ pois: [PoiReportRow], _ selection: Reports.Selection) -> HTML {
        let shown = pois.prefix(25)
        let most = max(1, shown.map(\.views).max() ?? 1)
        let rows: [HTML] = shown.enumerated().map { index, poi in
            """
            <tr><td class="number">\(index + 1)</td><td>\(poi.name ?? "Unnamed POI \(poi.poiId.lowercased.prefix(8))")</td>\
            <td class="number">\(grouped(poi.views)) \(meter(poi.views, of: most))</td><td class="number">\(grouped(poi.visits))</td>\
            <td class="number">\(duration(poi.averageDwellSeconds))</td><td class="number">\(grouped(poi.mediaPlays))</td></tr>
            """
        }
        let more: HTML = pois.count > shown.count ? "<p class=\"muted\">The 25 most viewed of \(grouped(pois.count)); the CSV has them all.</p>" : ""
        let table: HTML = pois.isEmpty ? "<p class=\"muted\">No POI was viewed or visited in this range.</p>" : """
            <table id="pois-table"><thead><tr><th>#</th><th>POI</th><th>Views</th><th>Visits</th><th>Average stay</th><th>Media plays</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
        return """
            <section id="pois" aria-labelledby="pois-heading">
            <h2 id="pois-heading">Most visited POIs</h2>
            \(table)
            \(more)
            <p>\(csvLink("pois", selection, "all POIs"))</p>
            </section>
            """
    }

    static func tours(_ tours: [TourReportRow], _ selection: Reports.Selection) -> HTML {
        let rows: [HTML] = tours.map { tour in
            """
            <tr><td>\(tour.name ?? "Unnamed tour \(tour.tourId.lowercased.prefix(8))")</td><td class="number">\(grouped(tour.starts))</td>\
            <td class="number">\(grouped(tour.completions))</td>\
            <td class="number">\(percent(tour.completionRate)) \(meter(Int((min(tour.completionRate, 1) * 1000).rounded()), of: 1000))</td>\
            <td class="number">\(grouped(tour.uniqueDevices))</td><td class="number">\(duration(tour.averageDurationSeconds))</td></tr>
            """
        }
        let table: HTML = tours.isEmpty ? "<p class=\"muted\">No tour was started or walked in this range.</p>" : """
            <table id="tours-table"><thead><tr><th>Tour</th><th>Starts</th><th>Completions</th><th>Completion rate</th><th>Unique devices</th>\
            <th>Average duration</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return """
            <section id="tours" aria-labelledby="tours-heading">
            <h2 id="tours-heading">Tour completion</h2>
            \(table)
            <p>\(csvLink("tours", selection, "tour completion"))</p>
            </section>
            """
    }

    /// Started → each stop in walking order → completed, each as a share of the devices that started.
    static func funnel(_ funnel: FunnelReport, _ selection: Reports.Selection) -> HTML {
        let most = max(1, funnel.started, funnel.completed, funnel.steps.map(\.devices).max() ?? 0)
        func row(_ step: String, _ label: HTML, _ devices: Int) -> HTML {
            let share = funnel.started > 0 ? percent(Double(devices) / Double(funnel.started)) : "–"
            return "<tr><td class=\"number\">\(step)</td><td>\(label)</td><td class=\"number\">\(grouped(devices)) \(meter(devices, of: most))</td>"
                + "<td class=\"number\">\(share)</td></tr>"
        }
        var rows: [HTML] = [row("", "Started the tour", funnel.started)]
        rows += funnel.steps.enumerated().map { index, step in
            row("\(index + 1)", "\(step.name ?? "Unnamed POI \(step.poiId.lowercased.prefix(8))")", step.devices)
        }
        rows.append(row("", "Completed the tour", funnel.completed))
        let noStops: HTML = funnel.steps.isEmpty ? "<p class=\"muted\">Analytics knows no published stops of this tour yet.</p>" : ""
        return """
            <section id="funnel" aria-labelledby="funnel-heading">
            <h2 id="funnel-heading">Stop by stop</h2>
            <p class="muted">Devices that started the tour, reached each stop (in walking order, whether or not they visited the ones \
            before it) and completed it; the share is of those that started.</p>
            <table id="funnel-table"><thead><tr><th>Stop</th><th>Step</th><th>Devices</th><th>Of started</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            \(noStops)
            <p>\(csvLink("funnel", selection, "the stop-by-stop figures"))</p>
            </section>
            """
    }

    /// Visits as a heat table: a row per weekday, a column per hour, darker where busier.
    static func hours(_ report: HourReport, _ selection: Reports.Selection) -> HTML {
        let most = report.weekdays.flatMap(\.visits).max() ?? 0
        let header: [HTML] = (0..<24).map { "<th scope=\"col\">\($0)</th>" }
        let rows: [HTML] = report.weekdays.map { day in
            let cells: [HTML] = day.visits.enumerated().map { hour, visits in
                // Six shades: none, then five steps up to the busiest hour.
                let shade = visits == 0 || most == 0 ? 0 : 1 + min(4, visits * 5 / (most + 1))
                return "<td class=\"heat heat-\(shade)\" title=\"\(day.weekday) \(hour):00–\(hour + 1):00 UTC: \(visits) visits\">"
                    + "\(visits == 0 ? "" : grouped(visits))</td>"
            }
            return "<tr><th scope=\"row\">\(String(day.weekday.prefix(3)))</th>\(cells)</tr>"
        }
        let empty: HTML = most == 0 ? "<p class=\"muted\">No stop was visited in this range.</p>" : ""
        return """
            <section id="hours" aria-labelledby="hours-heading">
            <h2 id="hours-heading">Visits by hour and weekday</h2>
            <p class="muted">Arrivals at stops by UTC weekday and hour of day; darker is busier.</p>
            <div class="chart-frame"><table id="hours-table" class="heat-table"><thead><tr><th scope="col">UTC</th>\(header)</tr></thead>
            <tbody>\(rows)</tbody></table></div>
            \(empty)
            <p>\(csvLink("hours", selection, "visits by hour and weekday"))</p>
            </section>
            """
    }

    /// What visitors searched for (site-wide, whatever tour is selected), and what found nothing.
    static func searches(_ report: SearchReport, _ selection: Reports.Selection) -> HTML {
        let top: [HTML] = report.top.map {
            "<tr><td>\($0.query)</td><td class=\"number\">\(grouped($0.searches))</td><td class=\"number\">\(grouped($0.zeroResults))</td></tr>"
        }
        let nothing: [HTML] = report.nothingFound.map { "<tr><td>\($0.query)</td><td class=\"number\">\(grouped($0.searches))</td></tr>" }
        return """
            <section id="searches" aria-labelledby="searches-heading">
            <h2 id="searches-heading">Searches</h2>
            <p class="muted">What visitors typed in the app's search, on every tour\(siteWide(selection)); the same words in other case or spacing count together.</p>
            <div class="columns">
            <div><h3>Most searched</h3><table id="searches-table"><thead><tr><th>Search</th><th>Searches</th><th>Found nothing</th></tr></thead>
            <tbody>\(top.isEmpty ? ["<tr><td colspan=\"3\" class=\"muted\">No searches in this range.</td></tr>"] : top)</tbody></table></div>
            <div><h3>Found nothing</h3><table id="nothing-found-table"><thead><tr><th>Search</th><th>Searches</th></tr></thead>
            <tbody>\(nothing.isEmpty ? ["<tr><td colspan=\"2\" class=\"muted\">Every search found something.</td></tr>"] : nothing)</tbody></table></div>
            </div>
            <p>\(csvLink("searches", selection, "the searches"))</p>
            </section>
            """
    }

    /// ", whichever tour is chosen above" when one is: these reports are counted site-wide (`ReportsController.siteWideReports`).
    static func siteWide(_ selection: Reports.Selection) -> String {
        selection.tourId == nil ? "" : ", whichever tour is chosen above"
    }

    /// The calendar events, pages and people visitors opened most (site-wide).
    static func views(_ report: ViewsReport, _ selection: Reports.Selection) -> HTML {
        func table(_ id: String, _ title: String, _ rows: [ViewRow], _ empty: String) -> HTML {
            let items: [HTML] = rows.map { "<tr><td>\($0.name ?? "(no longer named)")</td><td class=\"number\">\(grouped($0.views))</td></tr>" }
            return """
                <div><h3>\(title)</h3><table id="\(id)"><thead><tr><th>\(title)</th><th>Views</th></tr></thead>
                <tbody>\(items.isEmpty ? ["<tr><td colspan=\"2\" class=\"muted\">\(empty)</td></tr>"] : items)</tbody></table></div>
                """
        }
        return """
            <section id="views" aria-labelledby="views-heading">
            <h2 id="views-heading">Most viewed</h2>
            <p class="muted">Calendar events, pages and people visitors opened in the app, and where POIs were opened from, on every tour\(siteWide(selection)).</p>
            <div class="columns">
            \(table("viewed-events-table", "Events", report.events, "No event was opened in this range."))
            \(table("viewed-pages-table", "Pages", report.pages, "No page was opened in this range."))
            \(table("viewed-people-table", "People", report.people, "No one's entry was opened in this range."))
            </div>
            \(sources(report.sources, allTours: selection.tourId != nil))
            <p>\(csvLink("views", selection, "the most viewed and the sources"))</p>
            </section>
            """
    }

    /// Where visitors opened POIs from (`via`): a printed QR code, the map, a list, search or nearby.
    static func sources(_ sources: [SourceRow], allTours: Bool = false) -> HTML {
        let total = max(1, sources.map(\.views).reduce(0, +)), most = max(1, sources.map(\.views).max() ?? 1)
        let names = ["qr": "QR code", "map": "Map", "list": "List", "search": "Search", "nearby": "Nearby"]
        let rows: [HTML] = sources.map { row in
            """
            <tr><td>\(names[row.via] ?? row.via)</td><td class="number">\(grouped(row.views)) \(meter(row.views, of: most))</td>\
            <td class="number">\(percent(Double(row.views) / Double(total)))</td></tr>
            """
        }
        return """
            <h3>POI views by source\(allTours ? " (all tours)" : "")</h3>
            <table id="view-sources-table"><thead><tr><th>Opened from</th><th>POI views</th><th>Share</th></tr></thead>
            <tbody>\(rows.isEmpty ? ["<tr><td colspan=\"3\" class=\"muted\">No POI was opened in this range.</td></tr>"] : rows)</tbody></table>
            """
    }

    /// Tour starts and POI views by the app's language (site-wide), each with its bar and share.
    static func languages(_ report: LanguageReport?, _ selection: Reports.Selection) -> HTML {
        guard let report else {
            return """
                <section id="languages" aria-labelledby="languages-heading"><h2 id="languages-heading">Languages</h2>
                <p class="muted">This analytics does not count languages yet.</p></section>
                """
        }
        let rows = report.languages
        let starts = rows.map(\.tourStarts), views = rows.map(\.poiViews)
        let mostStarts = max(1, starts.max() ?? 1), mostViews = max(1, views.max() ?? 1)
        let totalStarts = max(1, starts.reduce(0, +)), totalViews = max(1, views.reduce(0, +))
        let lines: [HTML] = rows.map { row in
            let name: HTML = row.language == "unknown" ? "<span class=\"muted\">not told (unknown)</span>" : "<span lang=\"\(row.language)\">\(row.language)</span>"
            return """
                <tr><td>\(name)</td><td class="number">\(grouped(row.tourStarts)) \(meter(row.tourStarts, of: mostStarts))</td>\
                <td class="number">\(percent(Double(row.tourStarts) / Double(totalStarts)))</td>\
                <td class="number">\(grouped(row.poiViews)) \(meter(row.poiViews, of: mostViews))</td>\
                <td class="number">\(percent(Double(row.poiViews) / Double(totalViews)))</td></tr>
                """
        }
        return """
            <section id="languages" aria-labelledby="languages-heading">
            <h2 id="languages-heading">Languages</h2>
            <p class="muted">Tours started and POIs viewed by the app's language, on every tour\(siteWide(selection)); "unknown": the app did not say.</p>
            <table id="languages-table"><thead><tr><th>Language</th><th>Tours started</th><th>Share</th><th>POI views</th><th>Share</th></tr></thead>
            <tbody>\(lines.isEmpty ? ["<tr><td colspan=\"5\" class=\"muted\">No tour was started and no POI viewed in this range.</td></tr>"] : lines)</tbody></table>
            <p>\(csvLink("languages", selection, "tours started and POI views by language"))</p>
            </section>
            """
    }

    static func devices(_ devices: DeviceReport, _ selection: Reports.Selection) -> HTML {
        func table(_ id: String, _ title: String, _ counts: [String: Int]) -> HTML {
            let total = max(1, counts.values.reduce(0, +))
            let rows: [HTML] = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { value, count in
                "<tr><td>\(value)</td><td class=\"number\">\(grouped(count))</td><td class=\"number\">\(percent(Double(count) / Double(total)))</td></tr>"
            }
            return """
                <div><h3>\(title)</h3><table id="\(id)"><thead><tr><th>\(title)</th><th>Devices</th><th>Share</th></tr></thead>
                <tbody>\(rows.isEmpty ? ["<tr><td colspan=\"3\" class=\"muted\">No devices in this range.</td></tr>"] : rows)</tbody></table></div>
                """
        }
        return """
            <section id="devices" aria-labelledby="devices-heading">
            <h2 id="devices-heading">Devices</h2>
            <p class="muted">Devices with any event in the range, by their latest registration; "unknown" never registered.</p>
            <div class="columns">\(table("platforms-table", "Platform", devices.platforms))\(table("app-versions-table", "App version", devices.appVersions))</div>
            <p>\(csvLink("devices", selection, "devices by platform, model, OS and app version"))</p>
            </section>
            """
    }

    /// A small horizontal bar for a table cell, its number beside it in the cell.
    static func meter(_ value: Int, of maximum: Int) -> HTML {
        let width = maximum > 0 ? (Double(value) / Double(maximum) * 80).rounded() : 0
        return "<svg class=\"meter\" width=\"80\" height=\"8\" viewBox=\"0 0 80 8\" aria-hidden=\"true\"><rect width=\"80\" height=\"8\" fill=\"#e5e9e9\"/><rect width=\"\(Int(width))\" height=\"8\" fill=\"#006666\"/></svg>"
    }

    static func percent(_ rate: Double) -> String {
        String(format: "%.1f %%", rate * 100)
    }

    /// Seconds as "12 min 5 s", "45 s" or "1 h 2 min".
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total >= 3_600 { return "\(total / 3_600) h \(total % 3_600 / 60) min" }
        if total >= 60 { return "\(total / 60) min \(total % 60) s" }
        return "\(total) s"
    }

    static let stylesheet = """
        .report-range { display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: flex-end; }
        .report-range .field { margin: 0 0 .5rem; }
        .report-range input, .report-range select { width: auto; }
        .quick-ranges, .chart-switch { font-size: .9rem; }
        .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .7rem; list-style: none; padding: 0; margin: 0 0 .6rem; }
        .tile { background: #fff; border: 1px solid var(--line); border-top: 4px solid var(--teal); border-radius: 4px; padding: .6rem .8rem; }
        .tile-value { display: block; font-size: 1.6rem; font-weight: 700; }
        .tile-label { color: var(--muted); font-size: .9rem; }
        .chart-frame { background: #fff; border: 1px solid var(--line); padding: .4rem; overflow-x: auto; }
        .chart { width: 100%; height: auto; }
        .chart .bar:hover rect { fill: var(--gold); }
        td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .meter { vertical-align: middle; margin-left: .3rem; }
        details { margin: .6rem 0; }
        a.csv { font-size: .95rem; }
        h3 { font-size: 1rem; margin: .6rem 0 .3rem; }
        .heat-table { border-collapse: collapse; font-size: .8rem; }
        .heat-table th, .heat-table td { padding: .15rem .25rem; text-align: center; min-width: 1.6rem; }
        .heat-table td.heat { border: 1px solid #fff; font-variant-numeric: tabular-nums; }
        .heat-0 { background: #f3f5f5; }
        .heat-1 { background: #cfe5e5; }
        .heat-2 { background: #9fcccc; }
        .heat-3 { background: #5fa8a8; color: #fff; }
        .heat-4 { background: #2f8585; color: #fff; }
        .heat-5 { background: #006666; color: #fff; }
        """
}
