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
