import Foundation
import Shared

/// What a report covers: whole UTC days `from`...`to`, both inclusive, and optionally only the events
/// carrying one `tourId` (DESIGN.md "Report semantics").
struct ReportQuery: Sendable, Equatable {
    var from: Day
    var to: Day
    var tourId: UUID?

    /// The scope the aggregate tables file these events under (AggregateDelta.Scope).
    var scope: UUID { tourId ?? AggregateDelta.Scope.all }
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
    /// The query's tour's funnel (`tourId` required).
    func funnel(_ query: ReportQuery, tour: UUID) async throws -> FunnelReport
    func hours(_ query: ReportQuery) async throws -> HourReport
    /// Site-wide: `tourId` is not looked at.
    func searches(_ query: ReportQuery) async throws -> SearchReport
    func views(_ query: ReportQuery) async throws -> ViewsReport
    /// Site-wide: `tourId` is not looked at.
    func languages(_ query: ReportQuery) async throws -> LanguageReport
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
