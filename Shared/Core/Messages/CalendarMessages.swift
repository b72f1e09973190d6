import Foundation

// The calendar's messages (DESIGN.md, "Calendar"): an entry's content and state, as commands carry them and as
// `calendar.changed` / `calendar.deleted` on `catalog.events` (JSON through `JSONCoding`, as categories).

/// How an entry repeats: an RRULE subset (FREQ, INTERVAL, BYDAY, COUNT, UNTIL).
public struct CalendarRecurrence: Codable, Sendable, Equatable {
    public enum Frequency: String, Codable, Sendable, CaseIterable {
        case daily, weekly, monthly
    }

    public var frequency: Frequency
    /// Every `interval`-th day, week or month; nil is 1.
    public var interval: Int?
    /// Weekly only: `MO` … `SU`.
    public var byDay: [String]?
    public var count: Int?
    /// The last day an occurrence may start, `YYYY-MM-DD`, inclusive.
    public var until: String?

    public init(frequency: Frequency, interval: Int? = nil, byDay: [String]? = nil, count: Int? = nil, until: String? = nil) {
        self.frequency = frequency
        self.interval = interval
        self.byDay = byDay
        self.count = count
        self.until = until
    }
}

/// What an editor writes about an event in the calendar.
public struct CalendarEntryContent: Codable, Sendable, Equatable {
    public var title: String
    public var summary: String
    public var description: String
    /// Local wall-clock `YYYY-MM-DDTHH:MM` in `timeZone`, or `YYYY-MM-DD` when `allDay`.
    public var startsAt: String
    /// As `startsAt`; an all-day entry's last day, inclusive.
    public var endsAt: String
    /// IANA zone, e.g. America/New_York.
    public var timeZone: String
    public var allDay: Bool
    public var placePoiId: UUID?
    public var placeText: String?
    public var url: String?
    public var registrationUrl: String?
    public var categories: [String]
    public var recurrence: CalendarRecurrence?
    /// Occurrence starts, written as `startsAt` is, that do not happen.
    public var exceptionDates: [String]

    public init(title: String, summary: String = "", description: String = "", startsAt: String, endsAt: String, timeZone: String,
                allDay: Bool = false, placePoiId: UUID? = nil, placeText: String? = nil, url: String? = nil, registrationUrl: String? = nil,
                categories: [String] = [], recurrence: CalendarRecurrence? = nil, exceptionDates: [String] = []) {
        self.title = title
        self.summary = summary
        self.description = description
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.timeZone = timeZone
        self.allDay = allDay
        self.placePoiId = placePoiId
        self.placeText = placeText
        self.url = url
        self.registrationUrl = registrationUrl
        self.categories = categories
        self.recurrence = recurrence
        self.exceptionDates = exceptionDates
    }
}

/// A calendar entry's full state after a change.
public struct CalendarEntryState: Codable, Sendable, Equatable {
    public var id: UUID
    public var version: Int
    /// `published`: on the feed; `draft`: not.
    public var status: ContentStatus
    public var content: CalendarEntryContent
    public var updatedAt: Date

    public init(id: UUID, version: Int, status: ContentStatus, content: CalendarEntryContent, updatedAt: Date) {
        self.id = id
        self.version = version
        self.status = status
        self.content = content
        self.updatedAt = updatedAt
    }
}

/// `calendar.changed` / `calendar.deleted` on `catalog.events`.
public struct CalendarEntryEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case changed = "calendar.changed"
        case deleted = "calendar.deleted"
    }

    public var kind: Kind
    public var entityId: UUID
    public var version: Int
    public var entry: CalendarEntryState?
    public var snapshotId: UUID?

    public init(kind: Kind, entityId: UUID, version: Int, entry: CalendarEntryState? = nil, snapshotId: UUID? = nil) {
        self.kind = kind
        self.entityId = entityId
        self.version = version
        self.entry = entry
        self.snapshotId = snapshotId
    }

    public static func changed(_ entry: CalendarEntryState, snapshotId: UUID? = nil) -> CalendarEntryEvent {
        CalendarEntryEvent(kind: .changed, entityId: entry.id, version: entry.version, entry: entry, snapshotId: snapshotId)
    }

    /// Envelope types that carry a `CalendarEntryEvent`.
    public static func isCalendarEvent(type: String) -> Bool { type.hasPrefix("calendar.") }
}
