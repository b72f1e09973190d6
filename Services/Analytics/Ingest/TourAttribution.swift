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

    /// A tourless event whose credit moved from one tour (or none) to another (or none); a new event's from none.
    struct Change {
        var type: String
        var occurredAt: Date
        var poiId: UUID
        var dwellSeconds: Double?
        var deviceId: String
        var touristId: String?
        var from: UUID?
        var to: UUID?
    }
}

extension TourAttribution.Untoured {
    /// The event credited to `tour`, as a change from no tour.
    func credited(to tour: UUID) -> TourAttribution.Change {
        TourAttribution.Change(type: type, occurredAt: occurredAt, poiId: poiId, dwellSeconds: dwellSeconds,
                               deviceId: deviceId, touristId: touristId, from: nil, to: tour)
    }
}

extension AggregateDelta {
    /// Takes a change's event from its old tour's counts and members and gives it to its new tour's.
    mutating func move(_ change: TourAttribution.Change) {
        guard let type = TrackingEvent.Kind(rawValue: change.type) else { return }
        if type == .poiArrived { arrivalMoves.append(change) }
        let day = Day(containing: change.occurredAt).number
        for (tour, sign) in [(change.from, -1), (change.to, 1)] {
            guard let tour else { continue }
            let key = PoiKey(scope: tour, day: day, poi: change.poiId)
            var counts = pois[key, default: PoiCounts()]
            switch type {
            case .poiViewed: counts.views += Int64(sign)
            case .poiArrived: counts.visits += Int64(sign)
            case .mediaPlayed: counts.mediaPlays += Int64(sign)
            case .poiLeft:
                counts.dwellCount += Int64(sign)
                counts.dwellSum += Double(sign) * (change.dwellSeconds ?? 0)
            default: break
            }
            pois[key] = counts
            if type == .poiArrived { hours[HourKey(scope: tour, day: day, hour: Int16(Self.utcHour(change.occurredAt))), default: 0] += Int64(sign) }
            credited[CreditedMember(tour: tour, day: day, kind: .device, member: change.deviceId), default: 0] += Int32(sign)
            if let tourist = change.touristId {
                credited[CreditedMember(tour: tour, day: day, kind: .tourist, member: tourist), default: 0] += Int32(sign)
            }
        }
    }
}

extension TrackingEvent {
    /// The tour the event carries itself; a phone that sends the nil UUID has sent none.
    var tour: UUID? { tourId.flatMap { $0 == AggregateDelta.Scope.all ? nil : $0 } }
}
