import Foundation

// The calendar's messages (DESIGN.md, "Calendar"): an entry's content, as commands carry it; its state and events are
// catalog records (CatalogRecords.swift).

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

/// A calendar entry's full state after a change, and `calendar.changed` / `calendar.deleted` (its record under `entry`).
public typealias CalendarEntryState = CatalogRecordState<CalendarEntryContent>
public typealias CalendarEntryEvent = CatalogRecordEvent<CalendarEntryContent>

extension CalendarEntryContent: CatalogRecordContent {
    public static var recordKind: String { "calendar" }
    public static var eventRecordKey: String { "entry" }
}

extension CatalogRecordEvent where Content == CalendarEntryContent {
    public var entry: CalendarEntryState? { record }

    /// Envelope types that carry a `CalendarEntryEvent`.
    public static func isCalendarEvent(type: String) -> Bool { carries(type: type) }
}
