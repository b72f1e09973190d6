import Foundation
import Shared
@testable import Analytics

/// A random but reproducible mix of tracking events over a few days, and the reports computed from it
/// directly (by filtering and counting the raw events, not through anything the service uses), to
/// compare the service's reports with.
struct Workload: Sendable {
    let events: [TrackingEvent]
    let tours: [UUID]
    let pois: [UUID]
    /// Each tour's stops in walking order, as catalog would publish them (the funnel's steps).
    let stops: [UUID: [UUID]]
    /// The first and last day events fall on.
    let firstDay: Day
    let lastDay: Day

    /// `count` events by `devices` devices over `days` days ending today, seeded for reproducibility.
    init(seed: UInt64, count: Int, devices deviceCount: Int = 40, days: Int = 8, now: Date = Date()) {
        var random = SplitMix(seed: seed)
        let tours = (0..<4).map { _ in random.uuid() }
        let pois = (0..<12).map { _ in random.uuid() }
        let devices = (0..<deviceCount).map { "device-\(seed)-\($0)" }
        let tourists = (0..<(deviceCount / 2)).map { "tourist-\(seed)-\($0)" }
        let platforms = ["ios", "android"], models = ["iPhone 15", "Pixel 8", "Galaxy S24", "=cmd|' /C calc'!A0"]
        let osVersions = ["17.4", "14", "18.0"], appVersions = ["2.0.0", "2.1.0", "2.1.1"]
        let end = now.addingTimeInterval(-60)
        let span = Double(days) * 86_400 - 120
        var events: [TrackingEvent] = []
        for _ in 0..<count {
            let device = devices[random.next(devices.count)]
            // Millisecond times, as they travel in JSON.
            let occurredAt = Date(timeIntervalSince1970: ((end.timeIntervalSince1970 - random.double() * span) * 1_000).rounded() / 1_000)
            let tourist = random.next(3) == 0 ? nil : tourists[random.next(tourists.count)]
            let tour = tours[random.next(tours.count)]
            let poi = pois[random.next(pois.count)]
            let maybeTour = random.next(2) == 0 ? tour : nil
            var event: TrackingEvent
            switch random.next(10) {
            case 0:
                event = TrackingEvent(type: .deviceRegistered, deviceId: device, occurredAt: occurredAt,
                                      platform: platforms[random.next(platforms.count)], osVersion: osVersions[random.next(osVersions.count)],
                                      model: models[random.next(models.count)], appVersion: appVersions[random.next(appVersions.count)])
            case 1: event = TrackingEvent(type: .tourStarted, deviceId: device, occurredAt: occurredAt, tourId: tour)
            case 2: event = TrackingEvent(type: .tourCompleted, deviceId: device, occurredAt: occurredAt, tourId: tour,
                                          durationSeconds: Double(random.next(7_200_000)) / 1_000)
            case 3, 4: event = TrackingEvent(type: .poiViewed, deviceId: device, occurredAt: occurredAt, tourId: maybeTour, poiId: poi,
                                             via: TrackingEvent.Via.allCases[random.next(4)])
            case 5, 6: event = TrackingEvent(type: .poiArrived, deviceId: device, occurredAt: occurredAt, tourId: maybeTour, poiId: poi)
            case 7, 8: event = TrackingEvent(type: .poiLeft, deviceId: device, occurredAt: occurredAt, tourId: maybeTour, poiId: poi,
                                             dwellSeconds: Double(random.next(900_000)) / 1_000)
            default: event = TrackingEvent(type: .mediaPlayed, deviceId: device, occurredAt: occurredAt, tourId: maybeTour, poiId: poi,
                                           url: "https://example.edu/media/\(random.next(5)).mp3", mediaType: .audio)
            }
            event.id = random.uuid()
            event.touristId = tourist
            events.append(event)
        }
        // Visits as phones make them: a start, then tourless stops within hours (some past the 4 h window), sometimes a
        // completion in between, so the attribution rule decides many events either way.
        for _ in 0..<(count / 20) {
            let device = devices[random.next(devices.count)]
            let tourist = random.next(2) == 0 ? nil : tourists[random.next(tourists.count)]
            let start = Date(timeIntervalSince1970: ((end.timeIntervalSince1970 - 6 * 3_600 - random.double() * (span - 6 * 3_600)) * 1_000).rounded() / 1_000)
            let tour = tours[random.next(tours.count)]
            var started = TrackingEvent(type: .tourStarted, deviceId: device, occurredAt: start, tourId: tour)
            started.id = random.uuid()
            started.touristId = tourist
            events.append(started)
            for step in 0..<6 {
                let offset = Double(step) * 3_600 * random.double() + Double(random.next(3_600))
                let at = Date(timeIntervalSince1970: ((start.timeIntervalSince1970 + offset) * 1_000).rounded() / 1_000)
                let type: TrackingEvent.Kind = [.poiViewed, .poiArrived, .poiLeft, .mediaPlayed, .tourCompleted][random.next(5)]
                var event = TrackingEvent(type: type, deviceId: device, occurredAt: at, tourId: type == .tourCompleted ? tour : nil,
                                          poiId: type == .tourCompleted ? nil : pois[random.next(pois.count)])
                if type == .poiLeft { event.dwellSeconds = Double(random.next(900_000)) / 1_000 }
                if type == .mediaPlayed { event.url = "https://example.edu/media/1.mp3"; event.mediaType = .audio }
                if type == .poiViewed { event.via = .map }
                if type == .tourCompleted { event.durationSeconds = Double(random.next(7_200_000)) / 1_000 }
                event.id = random.uuid()
                event.touristId = random.next(4) == 0 ? "tourist-other" : tourist
                events.append(event)
            }
        }
        // Searches as visitors type them: the same words in other case and spacing, some finding nothing.
        let typed = ["Library", "  library ", "LIBRARY", "dining hall", "Dining   Hall", "parking", "zzz nowhere", "café", "Café ", "brooks\tfield"]
        for _ in 0..<(count / 10) {
            let at = Date(timeIntervalSince1970: ((end.timeIntervalSince1970 - random.double() * span) * 1_000).rounded() / 1_000)
            var event = TrackingEvent(type: .searchPerformed, deviceId: devices[random.next(devices.count)], occurredAt: at,
                                      tourId: random.next(3) == 0 ? tours[random.next(tours.count)] : nil)
            event.query = typed[random.next(typed.count)]
            event.resultCount = random.next(3) == 0 ? 0 : random.next(9)
            event.id = random.uuid()
            events.append(event)
        }
        // The app's language on a share of events, in either case (issue 45); from a generator of its own, so the rest of
        // the workload is what it was before languages.
        var tongues = SplitMix(seed: seed &+ 45)
        for index in events.indices {
            events[index].language = Self.languageTags[tongues.next(Self.languageTags.count)]
        }
        self.events = events
        self.tours = tours
        self.pois = pois
        var stops: [UUID: [UUID]] = [:]
        for tour in tours {
            var shuffled = pois
            random.shuffle(&shuffled)
            stops[tour] = Array(shuffled.prefix(5))
        }
        self.stops = stops
        firstDay = Day(containing: end.addingTimeInterval(-span))
        lastDay = Day(containing: end)
    }

    /// Tags as phones may send them (none, or one in any case) and the language each counts as ("Languages").
    static let languageTags: [String?] = [nil, nil, "en", "es", "ES", "pt-BR", "pt-br", "zh-Hant", "ZH-hANT", "en"]
    static let canonicalLanguages = ["en": "en", "es": "es", "ES": "es", "pt-BR": "pt-BR", "pt-br": "pt-BR", "zh-Hant": "zh-Hant", "ZH-hANT": "zh-Hant"]

    /// Every event once or more (some three times), in shuffled order: what an at-least-once pipe may deliver.
    func deliveries(seed: UInt64) -> [TrackingEvent] {
        var random = SplitMix(seed: seed)
        var deliveries: [TrackingEvent] = []
        for event in events {
            deliveries.append(event)
            if random.next(3) == 0 { deliveries.append(event) }
            if random.next(10) == 0 { deliveries.append(event) }
        }
        random.shuffle(&deliveries)
        return deliveries
    }

    /// Report queries worth checking: the whole span, single days, random ranges (some reaching past the
    /// events), each also filtered by a tour and by a tour nothing carries.
    func queries(seed: UInt64, count: Int = 6) -> [ReportQuery] {
        var random = SplitMix(seed: seed)
        var ranges: [(Day, Day)] = [(firstDay, lastDay), (firstDay.adding(days: -3), lastDay.adding(days: 2)), (lastDay, lastDay)]
        let span = Int(lastDay.number - firstDay.number)
        for _ in 0..<count {
            let a = firstDay.adding(days: random.next(span + 3) - 1), b = firstDay.adding(days: random.next(span + 3) - 1)
            ranges.append((min(a, b), max(a, b)))
        }
        var queries: [ReportQuery] = []
        for (index, (from, to)) in ranges.enumerated() {
            queries.append(ReportQuery(from: from, to: to))
            queries.append(ReportQuery(from: from, to: to, tourId: tours[index % tours.count]))
        }
        queries.append(ReportQuery(from: firstDay, to: lastDay, tourId: UUID()))
        return queries
    }
}

/// Reports computed from raw events by plain counting: DESIGN.md "Report semantics" read literally.
struct Truth {
    /// Each event once, its `tourId` the tour it carries: its own, or the one "Tour attribution" credits it to.
    let all: [TrackingEvent]
    let names: [UUID: String]

    /// `events` may hold duplicates; each id counts once.
    init(events: [TrackingEvent], names: [UUID: String] = [:]) {
        var seen = Set<UUID>()
        let unique = events.filter { seen.insert($0.id).inserted }
        let marks = Dictionary(grouping: unique.filter { ($0.type == .tourStarted || $0.type == .tourCompleted) && $0.tourId != nil }, by: \.deviceId)
        all = unique.map { event in
            var credited = event
            if event.tourId == nil { credited.tourId = Self.openTour(for: event, marks: marks[event.deviceId] ?? []) }
            return credited
        }
        self.names = names
    }

    /// DESIGN.md "Tour attribution", literally: the latest start within 4 h before (same tourist when both give
    /// one), unless that tour was completed from then until just before the event.
    static func openTour(for event: TrackingEvent, marks: [TrackingEvent]) -> UUID? {
        guard [.poiViewed, .poiArrived, .poiLeft, .mediaPlayed].contains(event.type) else { return nil }
        let starts = marks.filter { start in
            start.type == .tourStarted && start.occurredAt <= event.occurredAt && start.occurredAt >= event.occurredAt.addingTimeInterval(-4 * 3_600)
                && (event.touristId == nil || start.touristId == nil || start.touristId == event.touristId)
        }
        guard let latest = starts.max(by: { ($0.occurredAt, $0.id.uuidString.lowercased()) < ($1.occurredAt, $1.id.uuidString.lowercased()) })
        else { return nil }
        let completed = marks.contains { mark in
            mark.type == .tourCompleted && mark.tourId == latest.tourId && mark.occurredAt >= latest.occurredAt && mark.occurredAt < event.occurredAt
        }
        return completed ? nil : latest.tourId
    }

    /// How many events the attribution rule credited to a tour.
    func creditedCount(in original: [TrackingEvent]) -> Int {
        let own = Dictionary(original.map { ($0.id, $0.tourId) }, uniquingKeysWith: { first, _ in first })
        return all.count { $0.tourId != nil && own[$0.id] == .some(nil) }
    }

    func inRange(_ query: ReportQuery) -> [TrackingEvent] {
        all.filter { event in
            let day = Day(containing: event.occurredAt)
            return day >= query.from && day <= query.to && (query.tourId == nil || event.tourId == query.tourId)
        }
    }

    func summary(_ query: ReportQuery) -> SummaryReport {
        let events = inRange(query)
        let started = events.count { $0.type == .tourStarted }, completed = events.count { $0.type == .tourCompleted }
        return SummaryReport(toursStarted: started, toursCompleted: completed,
                             completionRate: started == 0 ? 0 : Double(completed) / Double(started),
                             uniqueDevices: Set(events.map(\.deviceId)).count, uniqueTourists: Set(events.compactMap(\.touristId)).count,
                             poiViews: events.count { $0.type == .poiViewed }, poiVisits: events.count { $0.type == .poiArrived },
                             mediaPlays: events.count { $0.type == .mediaPlayed })
    }

    func pois(_ query: ReportQuery) -> [PoiReportRow] {
        let byPoi = Dictionary(grouping: inRange(query).filter { $0.poiId != nil }, by: { $0.poiId! })
        return byPoi.map { poi, events in
            let dwells = events.compactMap { $0.type == .poiLeft ? $0.dwellSeconds : nil }
            return PoiReportRow(poiId: poi, name: names[poi], views: events.count { $0.type == .poiViewed },
                                visits: events.count { $0.type == .poiArrived },
                                averageDwellSeconds: dwells.isEmpty ? 0 : dwells.reduce(0, +) / Double(dwells.count),
                                mediaPlays: events.count { $0.type == .mediaPlayed })
        }.sorted { ($1.views, $0.poiId.uuidString.lowercased()) < ($0.views, $1.poiId.uuidString.lowercased()) }
    }

    func tours(_ query: ReportQuery) -> [TourReportRow] {
        let byTour = Dictionary(grouping: inRange(query).filter { $0.tourId != nil }, by: { $0.tourId! })
        return byTour.map { tour, events in
            let starts = events.count { $0.type == .tourStarted }, completions = events.count { $0.type == .tourCompleted }
            let durations = events.compactMap { $0.type == .tourCompleted ? $0.durationSeconds : nil }
            return TourReportRow(tourId: tour, name: names[tour], starts: starts, completions: completions,
                                 completionRate: starts == 0 ? 0 : Double(completions) / Double(starts),
                                 uniqueDevices: Set(events.map(\.deviceId)).count,
                                 averageDurationSeconds: durations.isEmpty ? 0 : durations.reduce(0, +) / Double(durations.count))
        }.sorted { ($1.starts, $0.tourId.uuidString.lowercased()) < ($0.starts, $1.tourId.uuidString.lowercased()) }
    }

    func devices(_ query: ReportQuery) -> DeviceReport {
        // Each device's latest registration at any time: by occurredAt, then by id as text.
        var latest: [String: TrackingEvent] = [:]
        for event in all where event.type == .deviceRegistered {
            if let held = latest[event.deviceId],
               (held.occurredAt, held.id.uuidString.lowercased()) > (event.occurredAt, event.id.uuidString.lowercased()) { continue }
            latest[event.deviceId] = event
        }
        var report = DeviceReport(platforms: [:], models: [:], osVersions: [:], appVersions: [:])
        for device in Set(inRange(query).map(\.deviceId)) {
            let registration = latest[device]
            report.platforms[registration?.platform ?? "unknown", default: 0] += 1
            report.models[registration?.model ?? "unknown", default: 0] += 1
            report.osVersions[registration?.osVersion ?? "unknown", default: 0] += 1
            report.appVersions[registration?.appVersion ?? "unknown", default: 0] += 1
        }
        return report
    }

    func funnel(_ query: ReportQuery, stops: [UUID]) -> FunnelReport {
        let events = inRange(query)
        func devices(_ type: TrackingEvent.Kind, at poi: UUID? = nil) -> Int {
            Set(events.filter { $0.type == type && (poi == nil || $0.poiId == poi) }.map(\.deviceId)).count
        }
        return FunnelReport(tourId: query.tourId!, started: devices(.tourStarted),
                            steps: stops.map { FunnelStep(poiId: $0, name: names[$0], devices: devices(.poiArrived, at: $0)) },
                            completed: devices(.tourCompleted))
    }

    func hours(_ query: ReportQuery) -> HourReport {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var grid = Array(repeating: Array(repeating: 0, count: 24), count: 7)
        for event in inRange(query) where event.type == .poiArrived {
            let parts = calendar.dateComponents([.weekday, .hour], from: event.occurredAt)
            // Calendar's weekday 1 is Sunday; the report's first row is Monday.
            grid[(parts.weekday! + 5) % 7][parts.hour!] += 1
        }
        return HourReport(weekdays: zip(HourReport.weekdayNames, grid).map { WeekdayHours(weekday: $0, visits: $1) })
    }

    /// Site-wide: the query's tour is not looked at.
    func searches(_ query: ReportQuery) -> SearchReport {
        let events = inRange(ReportQuery(from: query.from, to: query.to)).filter { $0.type == .searchPerformed }
        let byQuery = Dictionary(grouping: events) { event in
            String(event.query!.components(separatedBy: .whitespacesAndNewlines).filter { !$0.isEmpty }.joined(separator: " ").lowercased().prefix(200))
        }
        let rows = byQuery.map { SearchRow(query: $0, searches: $1.count, zeroResults: $1.count { $0.resultCount == 0 }) }
        return SearchReport(top: Array(rows.sorted { ($1.searches, $0.query) < ($0.searches, $1.query) }.prefix(20)),
                            nothingFound: Array(rows.filter { $0.zeroResults > 0 }.map { NothingFoundRow(query: $0.query, searches: $0.zeroResults) }
                                .sorted { ($1.searches, $0.query) < ($0.searches, $1.query) }.prefix(20)))
    }

    /// Site-wide: tour starts and POI views by language, folded by the workload's own table, `unknown` without one.
    func languages(_ query: ReportQuery) -> LanguageReport {
        let events = inRange(ReportQuery(from: query.from, to: query.to))
        var rows: [String: LanguageRow] = [:]
        for event in events where event.type == .tourStarted || event.type == .poiViewed {
            let language = event.language.map { Workload.canonicalLanguages[$0] ?? "(not in the workload's table: \($0))" } ?? "unknown"
            if event.type == .tourStarted {
                rows[language, default: LanguageRow(language: language, tourStarts: 0, poiViews: 0)].tourStarts += 1
            } else {
                rows[language, default: LanguageRow(language: language, tourStarts: 0, poiViews: 0)].poiViews += 1
            }
        }
        return LanguageReport(languages: rows.values.sorted { ($1.tourStarts, $1.poiViews, $0.language) < ($0.tourStarts, $0.poiViews, $1.language) })
    }

    func daily(_ query: ReportQuery) -> [DailyReportRow] {
        stride(from: query.from.number, through: query.to.number, by: 1).map { number in
            let day = Day(number: number)
            let single = summary(ReportQuery(from: day, to: day, tourId: query.tourId))
            return DailyReportRow(date: day.description, toursStarted: single.toursStarted, toursCompleted: single.toursCompleted,
                                  uniqueDevices: single.uniqueDevices, poiViews: single.poiViews, poiVisits: single.poiVisits,
                                  mediaPlays: single.mediaPlays)
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing workload can be rerun exactly.
struct SplitMix: RandomNumberGenerator {
    private var base: SplitMix64

    init(seed: UInt64) { base = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { base.next() }

    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func double() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func uuid() -> UUID {
        var bytes = (next(), next())
        return withUnsafeBytes(of: &bytes) { raw in
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            uuid.6 = (uuid.6 & 0x0F) | 0x40
            uuid.8 = (uuid.8 & 0x3F) | 0x80
            return UUID(uuid: uuid)
        }
    }

    mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for index in stride(from: array.count - 1, to: 0, by: -1) { array.swapAt(index, next(index + 1)) }
    }
}
