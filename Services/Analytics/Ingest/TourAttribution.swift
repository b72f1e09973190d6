import Foundation
import Shared

/// Tour attribution (DESIGN.md, "Tour attribution"): which events decide a device's open tour, which are
/// credited to it, and what a change of credit does to the per-tour counts. The deciding SQL is in
/// `PostgresIngestStore.attribute`.
enum TourAttribution {
    /// How long after its `tour.started` a tour counts as open.
    static let window: Duration = .seconds(4 * 3_600)

    /// The types that may come without a tour and are then credited to the open one.
    static let creditedTypes: Set<TrackingEvent.Kind> = [.poiViewed, .poiArrived, .poiLeft, .mediaPlayed]

    /// A `tour.started` ("s") or `tour.completed` ("c") with its tour.
    struct Mark {
        var deviceId: String
        var occurredAt: Date
        var eventId: UUID
        var kind: String
        var tourId: UUID
        var touristId: String?

        init?(_ event: TrackingEvent) {
            guard event.type == .tourStarted || event.type == .tourCompleted, let tour = event.tour else { return nil }
            deviceId = event.deviceId
            occurredAt = event.occurredAt
            eventId = event.id
            kind = event.type == .tourStarted ? "s" : "c"
            tourId = tour
            touristId = event.touristId
        }
    }

    /// An event of a credited type that came without a tour.
    struct Untoured {
        var eventId: UUID
        var deviceId: String
        var touristId: String?
        var occurredAt: Date
        var type: String
        var poiId: UUID
        var dwellSeconds: Double?

        init?(_ event: TrackingEvent) {
            guard event.tour == nil, creditedTypes.contains(event.type), let poi = event.poiId else { return nil }
            eventId = event.id
            deviceId = event.deviceId
            touristId = event.touristId
            occurredAt = event.occurredAt
            type = event.type.rawValue
            poiId = poi
            dwellSeconds = event.dwellSeconds
        }
    }

    /// A tourless event whose credit moved from one tour (or none) to another (or none).
    struct Change {
        var type: String
        var occurredAt: Date
        var poiId: UUID
        var dwellSeconds: Double?
        var from: UUID?
        var to: UUID?
    }

    /// The per-tour POI counts the changes take from their old tour and give to their new one.
    static func delta(moving changes: [Change]) -> AggregateDelta {
        var delta = AggregateDelta()
        for change in changes {
            guard let type = TrackingEvent.Kind(rawValue: change.type) else { continue }
            let day = Day(containing: change.occurredAt).number
            for (tour, sign) in [(change.from, -1), (change.to, 1)] {
                guard let tour else { continue }
                let key = AggregateDelta.PoiKey(scope: tour, day: day, poi: change.poiId)
                var counts = delta.pois[key, default: AggregateDelta.PoiCounts()]
                switch type {
                case .poiViewed: counts.views += Int64(sign)
                case .poiArrived: counts.visits += Int64(sign)
                case .mediaPlayed: counts.mediaPlays += Int64(sign)
                case .poiLeft:
                    counts.dwellCount += Int64(sign)
                    counts.dwellSum += Double(sign) * (change.dwellSeconds ?? 0)
                default: break
                }
                delta.pois[key] = counts
            }
        }
        return delta
    }
}

extension TrackingEvent {
    /// The tour the event carries itself; a phone that sends the nil UUID has sent none.
    var tour: UUID? { tourId.flatMap { $0 == AggregateDelta.Scope.all ? nil : $0 } }
}
