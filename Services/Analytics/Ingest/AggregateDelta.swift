import Foundation
import Shared

/// What a batch of newly seen events adds to the aggregate tables, keyed exactly as the tables are, so
/// each table takes one multi-row statement per batch whatever the batch size.
///
/// A *scope* is the set of events a row summarises: `Scope.all` for every event, or a tour id for the
/// events that carry that `tourId` (DESIGN.md: per-tour figures and the `tourId` filter count "the range's
/// events that carry that tourId").
struct AggregateDelta: Sendable {
    enum Scope {
        /// The nil UUID: no tour has it, so it can stand for "all events".
        static let all = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }

    /// A device or tourist seen on a day, in a scope.
    struct DayMember: Hashable, Sendable {
        var scope: UUID
        var day: Int32
        var member: String
    }

    struct PoiKey: Hashable, Sendable {
        var scope: UUID
        var day: Int32
        var poi: UUID
    }

    struct PoiCounts: Sendable, Equatable {
        var views: Int64 = 0
        var visits: Int64 = 0
        var dwellCount: Int64 = 0
        var dwellSum: Double = 0
        var mediaPlays: Int64 = 0
    }

    struct TourKey: Hashable, Sendable {
        var day: Int32
        var tour: UUID
    }

    struct TourCounts: Sendable, Equatable {
        var starts: Int64 = 0
        var completions: Int64 = 0
        var durationCount: Int64 = 0
        var durationSum: Double = 0
    }

    /// A device's `device.registered`; the latest by (occurredAt, event id) wins, here and in the table.
    struct Registration: Sendable, Equatable {
        var eventId: UUID
        var occurredAt: Date
        var platform: String
        var model: String
        var osVersion: String
        var appVersion: String

        func isNewer(than other: Registration) -> Bool {
            if occurredAt != other.occurredAt { return occurredAt > other.occurredAt }
            return eventId.isOrderedAfter(other.eventId)
        }
    }

    /// `poi.arrived` counts by scope, day and UTC hour (the hour × weekday report).
    struct HourKey: Hashable, Sendable {
        var scope: UUID
        var day: Int32
        var hour: Int16
    }

    /// A device's `poi.arrived` at a POI with the tour it carried itself (the funnel; credited ones are in untoured_events).
    struct StopVisit: Hashable, Sendable {
        var tour: UUID
        var poi: UUID
        var day: Int32
        var device: String
    }

    struct SearchKey: Hashable, Sendable {
        var day: Int32
        /// Folded (`SearchQuery.fold`).
        var query: String
    }

    struct SearchCounts: Sendable, Equatable {
        var searches: Int64 = 0
        var zeroResults: Int64 = 0
    }

    /// A device or tourist a tour's credited events (DESIGN.md "Tour attribution") add to a day, keyed as
    /// `credited_members` is; the value is how many credited events it gains (or loses, when negative).
    struct CreditedMember: Hashable, Sendable {
        enum Kind: String, Sendable {
            case device = "d"
            case tourist = "t"
        }

        var tour: UUID
        var day: Int32
        var kind: Kind
        var member: String
    }

    /// An item opened in the app (DESIGN.md, "Most viewed"): `kind` e (calendar event), p (page) or s (person).
    struct ViewKey: Hashable, Sendable {
        var day: Int32
        var kind: String
        var item: UUID
    }

    /// `poi.viewed` by day and `via`, site-wide ("Sources").
    struct SourceKey: Hashable, Sendable {
        var day: Int32
        var via: String
    }

    /// `tour.started` and `poi.viewed` by day and the app's language, site-wide ("Languages").
    struct LanguageKey: Hashable, Sendable {
        var day: Int32
        /// `LanguageTag.canonical`, or `unknown` when the event has none.
        var language: String
    }

    struct LanguageCounts: Sendable, Equatable {
        var tourStarts: Int64 = 0
        var poiViews: Int64 = 0
    }

    /// The row an event without a language counts in.
    static let unknownLanguage = "unknown"

    var devices: Set<DayMember> = []
    var tourists: Set<DayMember> = []
    var pois: [PoiKey: PoiCounts] = [:]
    var tours: [TourKey: TourCounts] = [:]
    var registrations: [String: Registration] = [:]
    var hours: [HourKey: Int64] = [:]
    var stopVisits: Set<StopVisit> = []
    /// Credited `poi.arrived` events moved between tours (or credited first): the funnel's days follow them (FunnelDays).
    var arrivalMoves: [TourAttribution.Change] = []
    var searches: [SearchKey: SearchCounts] = [:]
    var credited: [CreditedMember: Int32] = [:]
    var views: [ViewKey: Int64] = [:]
    var sources: [SourceKey: Int64] = [:]
    var languages: [LanguageKey: LanguageCounts] = [:]
    /// Each tag as sent → its conventional case: a batch holds a handful of tags, and folding one splits and joins strings.
    private var canonicalTags: [String: String] = [:]

    init() {}

    init(_ events: some Sequence<TrackingEvent>) {
        for event in events { add(event) }
    }

    mutating func add(_ event: TrackingEvent) {
        let day = Day(containing: event.occurredAt).number
        // A phone that sends the nil UUID as its tour has sent no tour.
        let tour = event.tour
        let scopes = tour.map { [Scope.all, $0] } ?? [Scope.all]
        for scope in scopes {
            devices.insert(DayMember(scope: scope, day: day, member: event.deviceId))
            if let tourist = event.touristId { tourists.insert(DayMember(scope: scope, day: day, member: tourist)) }
        }
        switch event.type {
        case .deviceRegistered:
            guard let platform = event.platform, let model = event.model, let osVersion = event.osVersion,
                  let appVersion = event.appVersion else { return }
            let registration = Registration(eventId: event.id, occurredAt: event.occurredAt, platform: platform, model: model,
                                            osVersion: osVersion, appVersion: appVersion)
            if let held = registrations[event.deviceId], !registration.isNewer(than: held) { return }
            registrations[event.deviceId] = registration
        case .tourStarted, .tourCompleted:
            guard let tour else { return }
            let key = TourKey(day: day, tour: tour)
            if event.type == .tourStarted {
                tours[key, default: TourCounts()].starts += 1
                languages[languageKey(event, day: day), default: LanguageCounts()].tourStarts += 1
            } else {
                tours[key, default: TourCounts()].completions += 1
                if let duration = event.durationSeconds {
                    tours[key, default: TourCounts()].durationCount += 1
                    tours[key, default: TourCounts()].durationSum += duration
                }
            }
        case .searchPerformed:
            guard let query = event.query.map(SearchQuery.fold), !query.isEmpty else { return }
            let key = SearchKey(day: day, query: query)
            searches[key, default: SearchCounts()].searches += 1
            if event.resultCount == 0 { searches[key, default: SearchCounts()].zeroResults += 1 }
        case .eventViewed, .pageViewed, .personViewed:
            let viewed: (String, UUID?) = switch event.type {
            case .eventViewed: ("e", event.eventId)
            case .pageViewed: ("p", event.pageId)
            default: ("s", event.personId)
            }
            guard let item = viewed.1 else { return }
            views[ViewKey(day: day, kind: viewed.0, item: item), default: 0] += 1
        case .poiViewed, .poiArrived, .poiLeft, .mediaPlayed:
            guard let poi = event.poiId else { return }
            if event.type == .poiViewed {
                if let via = event.via { sources[SourceKey(day: day, via: via.rawValue), default: 0] += 1 }
                languages[languageKey(event, day: day), default: LanguageCounts()].poiViews += 1
            }
            if event.type == .poiArrived {
                let hour = Int16(Self.utcHour(event.occurredAt))
                for scope in scopes { hours[HourKey(scope: scope, day: day, hour: hour), default: 0] += 1 }
                if let tour { stopVisits.insert(StopVisit(tour: tour, poi: poi, day: day, device: event.deviceId)) }
            }
            for scope in scopes {
                let key = PoiKey(scope: scope, day: day, poi: poi)
                switch event.type {
                case .poiViewed: pois[key, default: PoiCounts()].views += 1
                case .poiArrived: pois[key, default: PoiCounts()].visits += 1
                case .mediaPlayed: pois[key, default: PoiCounts()].mediaPlays += 1
                case .poiLeft:
                    pois[key, default: PoiCounts()].dwellCount += 1
                    pois[key, default: PoiCounts()].dwellSum += event.dwellSeconds ?? 0
                default: break
                }
            }
        }
    }
}

extension AggregateDelta {
    /// The event's language row: its tag in conventional case (`es` and `ES` are one), else `unknown`. Validation let
    /// only well-formed tags through.
    mutating func languageKey(_ event: TrackingEvent, day: Int32) -> LanguageKey {
        guard let tag = event.language else { return LanguageKey(day: day, language: Self.unknownLanguage) }
        if let canonical = canonicalTags[tag] { return LanguageKey(day: day, language: canonical) }
        let canonical = LanguageTag.canonical(tag)
        canonicalTags[tag] = canonical
        return LanguageKey(day: day, language: canonical)
    }

    /// The UTC hour (0–23) of an instant.
    static func utcHour(_ date: Date) -> Int {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        return Int(((seconds % 86_400) + 86_400) % 86_400 / 3_600)
    }
}

/// How searches are grouped (DESIGN.md, "Searches"): trimmed, white space runs made one space, lower-cased,
/// at most 200 characters.
enum SearchQuery {
    static func fold(_ text: String) -> String {
        let words = text.split(whereSeparator: \.isWhitespace)
        return String(words.joined(separator: " ").lowercased().prefix(200))
    }
}

extension UUID {
    /// The UUID as two big-endian integers: tuple order is byte-wise order, the order Postgres gives `uuid`
    /// values (and lowercase UUID strings sort in).
    var orderKey: (UInt64, UInt64) {
        withUnsafeBytes(of: uuid) { bytes in
            (bytes.loadUnaligned(as: UInt64.self).bigEndian, bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
        }
    }

    func isOrderedAfter(_ other: UUID) -> Bool { orderKey > other.orderKey }
}
