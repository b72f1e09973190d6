import Foundation

// The bodies of the Reports API (DESIGN.md "Reports API"): analytics encodes them, the admin's
// Reports pages decode them. Ids are written in lowercase, as everywhere in the suite.

public struct SummaryReport: Codable, Sendable, Equatable {
    public var toursStarted: Int
    public var toursCompleted: Int
    public var completionRate: Double
    public var uniqueDevices: Int
    public var uniqueTourists: Int
    public var poiViews: Int
    public var poiVisits: Int
    public var mediaPlays: Int

    public init(toursStarted: Int, toursCompleted: Int, completionRate: Double, uniqueDevices: Int, uniqueTourists: Int,
                poiViews: Int, poiVisits: Int, mediaPlays: Int) {
        self.toursStarted = toursStarted
        self.toursCompleted = toursCompleted
        self.completionRate = completionRate
        self.uniqueDevices = uniqueDevices
        self.uniqueTourists = uniqueTourists
        self.poiViews = poiViews
        self.poiVisits = poiVisits
        self.mediaPlays = mediaPlays
    }
}

public struct PoiReportRow: Codable, Sendable, Equatable {
    public var poiId: UUID
    /// From catalog.events; nil for a POI catalog never named (encoded as null, never left out).
    public var name: String?
    public var views: Int
    public var visits: Int
    /// Mean dwellSeconds of its poi.left events; 0 when it has none (as completionRate is 0 with no starts).
    public var averageDwellSeconds: Double
    public var mediaPlays: Int

    public init(poiId: UUID, name: String?, views: Int, visits: Int, averageDwellSeconds: Double, mediaPlays: Int) {
        self.poiId = poiId
        self.name = name
        self.views = views
        self.visits = visits
        self.averageDwellSeconds = averageDwellSeconds
        self.mediaPlays = mediaPlays
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(poiId.lowercased, forKey: .poiId)
        try container.encode(name, forKey: .name)
        try container.encode(views, forKey: .views)
        try container.encode(visits, forKey: .visits)
        try container.encode(averageDwellSeconds, forKey: .averageDwellSeconds)
        try container.encode(mediaPlays, forKey: .mediaPlays)
    }
}

public struct TourReportRow: Codable, Sendable, Equatable {
    public var tourId: UUID
    public var name: String?
    public var starts: Int
    public var completions: Int
    public var completionRate: Double
    public var uniqueDevices: Int
    /// Mean durationSeconds of its tour.completed events; 0 when it has none.
    public var averageDurationSeconds: Double

    public init(tourId: UUID, name: String?, starts: Int, completions: Int, completionRate: Double, uniqueDevices: Int,
                averageDurationSeconds: Double) {
        self.tourId = tourId
        self.name = name
        self.starts = starts
        self.completions = completions
        self.completionRate = completionRate
        self.uniqueDevices = uniqueDevices
        self.averageDurationSeconds = averageDurationSeconds
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tourId.lowercased, forKey: .tourId)
        try container.encode(name, forKey: .name)
        try container.encode(starts, forKey: .starts)
        try container.encode(completions, forKey: .completions)
        try container.encode(completionRate, forKey: .completionRate)
        try container.encode(uniqueDevices, forKey: .uniqueDevices)
        try container.encode(averageDurationSeconds, forKey: .averageDurationSeconds)
    }
}

public struct DeviceReport: Codable, Sendable, Equatable {
    public var platforms: [String: Int]
    public var models: [String: Int]
    public var osVersions: [String: Int]
    public var appVersions: [String: Int]

    public init(platforms: [String: Int], models: [String: Int], osVersions: [String: Int], appVersions: [String: Int]) {
        self.platforms = platforms
        self.models = models
        self.osVersions = osVersions
        self.appVersions = appVersions
    }
}

public struct DailyReportRow: Codable, Sendable, Equatable {
    /// `YYYY-MM-DD`, UTC.
    public var date: String
    public var toursStarted: Int
    public var toursCompleted: Int
    public var uniqueDevices: Int
    public var poiViews: Int
    public var poiVisits: Int
    public var mediaPlays: Int

    public init(date: String, toursStarted: Int, toursCompleted: Int, uniqueDevices: Int, poiViews: Int, poiVisits: Int, mediaPlays: Int) {
        self.date = date
        self.toursStarted = toursStarted
        self.toursCompleted = toursCompleted
        self.uniqueDevices = uniqueDevices
        self.poiViews = poiViews
        self.poiVisits = poiVisits
        self.mediaPlays = mediaPlays
    }
}

/// `{"pois": [...]}`
public struct PoiReport: Codable, Sendable, Equatable {
    public var pois: [PoiReportRow]
    public init(pois: [PoiReportRow]) { self.pois = pois }
}

/// `{"tours": [...]}`
public struct TourReport: Codable, Sendable, Equatable {
    public var tours: [TourReportRow]
    public init(tours: [TourReportRow]) { self.tours = tours }
}

/// `{"days": [...]}`
public struct DailyReport: Codable, Sendable, Equatable {
    public var days: [DailyReportRow]
    public init(days: [DailyReportRow]) { self.days = days }
}

extension UUID {
    /// The lowercase form the suite writes everywhere.
    public var lowercased: String { uuidString.lowercased() }
}

/// `GET /v1/reports/freshness` (DESIGN.md "Report semantics", freshness): up to when events are counted.
public struct ReportFreshness: Codable, Sendable, Equatable {
    /// Every event on `tracking.events` before this instant is counted; nil until analytics first knows.
    public var countedUpTo: Date?
    /// Messages on `tracking.events` not yet counted.
    public var waiting: Int64
    /// Whole seconds from `countedUpTo` (else analytics' start) to `checkedAt`.
    public var behindSeconds: Int
    /// When analytics answered.
    public var checkedAt: Date

    /// More than this behind, the reports say so.
    public static let behindWarningSeconds = 60

    public var isBehind: Bool { behindSeconds > Self.behindWarningSeconds }

    public init(countedUpTo: Date?, waiting: Int64, behindSeconds: Int, checkedAt: Date) {
        self.countedUpTo = countedUpTo
        self.waiting = waiting
        self.behindSeconds = behindSeconds
        self.checkedAt = checkedAt
    }

    enum CodingKeys: String, CodingKey { case countedUpTo, waiting, behindSeconds, checkedAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func date(_ key: CodingKeys) throws -> Date? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let date = RFC3339.parse(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an RFC 3339 time: \(text)")
            }
            return date
        }
        countedUpTo = try date(.countedUpTo)
        waiting = try container.decode(Int64.self, forKey: .waiting)
        behindSeconds = try container.decode(Int.self, forKey: .behindSeconds)
        checkedAt = try date(.checkedAt) ?? Date()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(countedUpTo.map(RFC3339.format), forKey: .countedUpTo)
        try container.encode(waiting, forKey: .waiting)
        try container.encode(behindSeconds, forKey: .behindSeconds)
        try container.encode(RFC3339.format(checkedAt), forKey: .checkedAt)
    }
}

/// `GET /v1/reports/funnel` (DESIGN.md "Funnel"): of the devices that started a tour, how many reached each stop and the end.
public struct FunnelReport: Codable, Sendable, Equatable {
    public var tourId: UUID
    public var started: Int
    /// The tour's stops in walking order.
    public var steps: [FunnelStep]
    public var completed: Int

    public init(tourId: UUID, started: Int, steps: [FunnelStep], completed: Int) {
        self.tourId = tourId
        self.started = started
        self.steps = steps
        self.completed = completed
    }
}

public struct FunnelStep: Codable, Sendable, Equatable {
    public var poiId: UUID
    public var name: String?
    public var devices: Int

    public init(poiId: UUID, name: String?, devices: Int) {
        self.poiId = poiId
        self.name = name
        self.devices = devices
    }
}

/// `GET /v1/reports/hours` (DESIGN.md "Hour × weekday"): visits by UTC weekday, Monday first, and hour.
public struct HourReport: Codable, Sendable, Equatable {
    public static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    public var weekdays: [WeekdayHours]

    public init(weekdays: [WeekdayHours]) { self.weekdays = weekdays }
}

public struct WeekdayHours: Codable, Sendable, Equatable {
    public var weekday: String
    /// 24 counts, hour 0 first.
    public var visits: [Int]

    public init(weekday: String, visits: [Int]) {
        self.weekday = weekday
        self.visits = visits
    }
}

/// `GET /v1/reports/searches` (DESIGN.md "Searches").
public struct SearchReport: Codable, Sendable, Equatable {
    public var top: [SearchRow]
    public var nothingFound: [NothingFoundRow]

    public init(top: [SearchRow], nothingFound: [NothingFoundRow]) {
        self.top = top
        self.nothingFound = nothingFound
    }
}

public struct SearchRow: Codable, Sendable, Equatable {
    public var query: String
    public var searches: Int
    public var zeroResults: Int

    public init(query: String, searches: Int, zeroResults: Int) {
        self.query = query
        self.searches = searches
        self.zeroResults = zeroResults
    }
}

public struct NothingFoundRow: Codable, Sendable, Equatable {
    public var query: String
    /// Searches for it that found nothing.
    public var searches: Int

    public init(query: String, searches: Int) {
        self.query = query
        self.searches = searches
    }
}

/// `GET /v1/reports/views` (DESIGN.md, "Most viewed"): the 20 most opened calendar events, pages and people.
public struct ViewsReport: Codable, Sendable, Equatable {
    public var events: [ViewRow]
    public var pages: [ViewRow]
    public var people: [ViewRow]
    /// POI views by where the visitor opened the POI (DESIGN.md "Sources"); absent from older analytics.
    public var sources: [SourceRow]

    public init(events: [ViewRow], pages: [ViewRow], people: [ViewRow], sources: [SourceRow] = []) {
        self.events = events
        self.pages = pages
        self.people = people
        self.sources = sources
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        events = try container.decode([ViewRow].self, forKey: .events)
        pages = try container.decode([ViewRow].self, forKey: .pages)
        people = try container.decode([ViewRow].self, forKey: .people)
        sources = try container.decodeIfPresent([SourceRow].self, forKey: .sources) ?? []
    }
}

/// `poi.viewed` events of one `via`.
public struct SourceRow: Codable, Sendable, Equatable {
    public var via: String
    public var views: Int

    public init(via: String, views: Int) {
        self.via = via
        self.views = views
    }
}

public struct ViewRow: Codable, Sendable, Equatable {
    public var id: UUID
    /// As catalog last named it; nil for an item analytics has no name for.
    public var name: String?
    public var views: Int

    public init(id: UUID, name: String?, views: Int) {
        self.id = id
        self.name = name
        self.views = views
    }
}

/// `GET /v1/reports/languages` (DESIGN.md "Languages", issue 45): tour starts and POI views by the app's language.
public struct LanguageReport: Codable, Sendable, Equatable {
    public var languages: [LanguageRow]
    /// The most used languages only: any well-formed tag counts, and made-up ones must not make the report unbounded.
    public static let maxRows = 100

    public init(languages: [LanguageRow]) {
        self.languages = languages
    }
}

public struct LanguageRow: Codable, Sendable, Equatable {
    /// A BCP 47 tag in its conventional case, or `unknown`.
    public var language: String
    public var tourStarts: Int
    public var poiViews: Int

    public init(language: String, tourStarts: Int, poiViews: Int) {
        self.language = language
        self.tourStarts = tourStarts
        self.poiViews = poiViews
    }
}
