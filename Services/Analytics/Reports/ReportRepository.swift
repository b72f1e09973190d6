import Foundation

/// What a report covers: whole UTC days `from`...`to`, both inclusive, and optionally only the events
/// carrying one `tourId` (DESIGN.md "Report semantics").
struct ReportQuery: Sendable, Equatable {
    var from: Day
    var to: Day
    var tourId: UUID?

    /// The scope the aggregate tables file these events under (AggregateDelta.Scope).
    var scope: UUID { tourId ?? AggregateDelta.Scope.all }
}

struct SummaryReport: Codable, Sendable, Equatable {
    var toursStarted: Int
    var toursCompleted: Int
    var completionRate: Double
    var uniqueDevices: Int
    var uniqueTourists: Int
    var poiViews: Int
    var poiVisits: Int
    var mediaPlays: Int
}

struct PoiReportRow: Codable, Sendable, Equatable {
    var poiId: UUID
    /// From catalog.events; nil for a POI catalog never named.
    var name: String?
    var views: Int
    var visits: Int
    /// Mean dwellSeconds of its poi.left events; 0 when it has none (as completionRate is 0 with no starts).
    var averageDwellSeconds: Double
    var mediaPlays: Int

    /// Ids in lowercase; `name` always present, null when unknown.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(poiId.lowercased, forKey: .poiId)
        try container.encode(name, forKey: .name)
        try container.encode(views, forKey: .views)
        try container.encode(visits, forKey: .visits)
        try container.encode(averageDwellSeconds, forKey: .averageDwellSeconds)
        try container.encode(mediaPlays, forKey: .mediaPlays)
    }
}

struct TourReportRow: Codable, Sendable, Equatable {
    var tourId: UUID
    var name: String?
    var starts: Int
    var completions: Int
    var completionRate: Double
    var uniqueDevices: Int
    /// Mean durationSeconds of its tour.completed events; 0 when it has none.
    var averageDurationSeconds: Double

    func encode(to encoder: any Encoder) throws {
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

struct DeviceReport: Codable, Sendable, Equatable {
    var platforms: [String: Int]
    var models: [String: Int]
    var osVersions: [String: Int]
    var appVersions: [String: Int]
}

struct DailyReportRow: Codable, Sendable, Equatable {
    var date: String
    var toursStarted: Int
    var toursCompleted: Int
    var uniqueDevices: Int
    var poiViews: Int
    var poiVisits: Int
    var mediaPlays: Int
}

/// The reports' reads. Controllers depend on this, the SQL lives in PostgresReportRepository.
protocol ReportRepository: Sendable {
    func summary(_ query: ReportQuery) async throws -> SummaryReport
    /// POIs with any event in the range, most viewed first (then by id).
    func pois(_ query: ReportQuery) async throws -> [PoiReportRow]
    /// Tours with any event carrying their id in the range, most started first (then by id).
    func tours(_ query: ReportQuery) async throws -> [TourReportRow]
    func devices(_ query: ReportQuery) async throws -> DeviceReport
    /// One row per day of the range, days without events included.
    func daily(_ query: ReportQuery) async throws -> [DailyReportRow]
}

extension Double {
    /// `numerator / denominator`, 0 when the denominator is 0.
    static func ratio(_ numerator: some BinaryInteger, _ denominator: some BinaryInteger) -> Double {
        denominator == 0 ? 0 : Double(numerator) / Double(denominator)
    }

    static func mean(sum: Double, count: some BinaryInteger) -> Double {
        count == 0 ? 0 : sum / Double(count)
    }
}
