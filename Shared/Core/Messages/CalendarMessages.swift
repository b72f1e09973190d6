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

    /// Reads the RRULE text calendars export, `FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10` (an optional `RRULE:` prefix;
    /// UNTIL as `YYYYMMDD`, `YYYY-MM-DD` or a `YYYYMMDDTHHMMSSZ` stamp, of which the day is kept); the message
    /// of the error names the part that is wrong. Ranges are checked where the content is validated.
    public init(rrule text: String) throws(FieldError) {
        func fail(_ message: String) -> FieldError { FieldError(field: "recurrence", message: message) }
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.uppercased().hasPrefix("RRULE:") { body = body.dropFirst(6) }
        var frequency: Frequency?
        var rule = CalendarRecurrence(frequency: .daily)
        for part in body.split(separator: ";", omittingEmptySubsequences: true) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[1].isEmpty else { throw fail("\"\(part)\" is not NAME=VALUE") }
            let value = pair[1].uppercased()
            func number() throws(FieldError) -> Int {
                guard let number = Int(value) else { throw fail("\(pair[0].uppercased()) must be a whole number, got \"\(pair[1])\"") }
                return number
            }
            switch pair[0].uppercased() {
            case "FREQ":
                guard let parsed = Frequency(rawValue: value.lowercased()) else { throw fail("FREQ is DAILY, WEEKLY or MONTHLY, got \"\(pair[1])\"") }
                frequency = parsed
            case "INTERVAL": rule.interval = try number()
            case "COUNT": rule.count = try number()
            case "BYDAY": rule.byDay = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            case "UNTIL":
                let digits = value.prefix { $0 != "T" }.filter { $0 != "-" }
                guard digits.count == 8, digits.allSatisfy(\.isASCII), Int(digits) != nil else {
                    throw fail("UNTIL is a date such as 20270630, got \"\(pair[1])\"")
                }
                rule.until = "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
            default:
                throw fail("\(pair[0].uppercased()) is not supported; use FREQ, INTERVAL, BYDAY, COUNT and UNTIL")
            }
        }
        guard let frequency else { throw fail("a repeat rule needs FREQ=DAILY, WEEKLY or MONTHLY") }
        rule.frequency = frequency
        self = rule
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
    /// Its title, summary and description in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public init(title: String, summary: String = "", description: String = "", startsAt: String, endsAt: String, timeZone: String,
                allDay: Bool = false, placePoiId: UUID? = nil, placeText: String? = nil, url: String? = nil, registrationUrl: String? = nil,
                categories: [String] = [], recurrence: CalendarRecurrence? = nil, exceptionDates: [String] = [], translations: Translations? = nil) {
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
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case title, summary, description, startsAt, endsAt, timeZone, allDay, placePoiId, placeText, url, registrationUrl, categories, recurrence,
             exceptionDates, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(title: try c.decode(String.self, forKey: .title), summary: try c.decode(String.self, forKey: .summary),
                  description: try c.decode(String.self, forKey: .description), startsAt: try c.decode(String.self, forKey: .startsAt),
                  endsAt: try c.decode(String.self, forKey: .endsAt), timeZone: try c.decode(String.self, forKey: .timeZone),
                  allDay: try c.decode(Bool.self, forKey: .allDay), placePoiId: try c.decodeIfPresent(UUID.self, forKey: .placePoiId),
                  placeText: try c.decodeIfPresent(String.self, forKey: .placeText), url: try c.decodeIfPresent(String.self, forKey: .url),
                  registrationUrl: try c.decodeIfPresent(String.self, forKey: .registrationUrl),
                  categories: try c.decode([String].self, forKey: .categories),
                  recurrence: try c.decodeIfPresent(CalendarRecurrence.self, forKey: .recurrence),
                  exceptionDates: try c.decode([String].self, forKey: .exceptionDates),
                  translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }
}

/// A calendar entry's full state after a change, and `calendar.changed` / `calendar.deleted` (its record under `entry`).
public typealias CalendarEntryState = CatalogRecordState<CalendarEntryContent>
public typealias CalendarEntryEvent = CatalogRecordEvent<CalendarEntryContent>

extension CalendarEntryContent: CatalogRecordContent {
    public static var recordKind: String { "calendar" }
    public static var eventRecordKey: StaticString { "entry" }
    public static var commandField: String { "calendarEntry" }
    public static var commandContent: WritableKeyPath<CatalogCommand, Self?> { \.calendarEntry }
    public static var resultState: WritableKeyPath<CatalogCommandResult, CalendarEntryState?> { \.calendarEntry }
}

extension CatalogRecordEvent where Content == CalendarEntryContent {
    public var entry: CalendarEntryState? { record }

    /// Envelope types that carry a `CalendarEntryEvent`.
    public static func isCalendarEvent(type: String) -> Bool { carries(type: type) }
}
