import Foundation
import Synchronization

/// One occurrence of a calendar entry: instants, and its start as written locally (what `exceptionDates` name).
public struct CalendarOccurrence: Sendable, Equatable {
    public var start: Date
    /// Exclusive.
    public var end: Date
    public var localStart: String
}

/// When a calendar entry happens (DESIGN.md, "Calendar"): its content checked, and its occurrences expanded in its
/// own zone, so 10:00 stays 10:00 across a change of daylight saving time.
public struct CalendarSchedule: Sendable {
    public static let maximumOccurrences = 1_000
    public static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    // What the occurrences need of the content, not the content: a feed keeps a schedule per entry beside its state.
    let allDay: Bool
    let recurrence: CalendarRecurrence?
    let exceptionDates: [String]
    let calendar: Calendar
    /// The entry's zone (its `timeZone`, checked).
    public var timeZone: TimeZone { calendar.timeZone }
    /// The local start, compact (a `DateComponents` is some 300 bytes).
    let start: LocalStart
    /// Days (all-day) or minutes (timed) from the start to the end.
    let length: Int

    /// One calendar per zone, shared by the entries in it: each is an object of its own, and a feed keeps thousands
    /// of entries.
    private static let calendars = Mutex<[String: Calendar]>([:])

    static func calendar(in zone: TimeZone) -> Calendar {
        calendars.withLock { calendars in
            if let calendar = calendars[zone.identifier] { return calendar }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            calendar.firstWeekday = 2
            calendars[zone.identifier] = calendar
            return calendar
        }
    }

    /// Nil when the content does not read; `problems(_:)` says why.
    public init?(_ content: CalendarEntryContent) {
        guard let zone = TimeZone(identifier: content.timeZone),
              let start = Self.local(content.startsAt, allDay: content.allDay),
              let end = Self.local(content.endsAt, allDay: content.allDay) else { return nil }
        let calendar = Self.calendar(in: zone)
        guard let first = calendar.date(from: start), let last = calendar.date(from: end) else { return nil }
        let length = content.allDay ? (calendar.dateComponents([.day], from: first, to: last).day ?? -1) + 1
            : Int(last.timeIntervalSince(first) / 60)
        guard length >= (content.allDay ? 1 : 0) else { return nil }
        allDay = content.allDay
        recurrence = content.recurrence
        exceptionDates = content.exceptionDates
        self.calendar = calendar
        self.start = LocalStart(start)
        self.length = length
    }

    /// The content's mistakes as field errors (nothing about categories or the place, which catalog checks against
    /// its own tables).
    public static func problems(_ content: CalendarEntryContent) -> [FieldError] {
        var errors: [FieldError] = []
        func error(_ field: String, _ message: String) { errors.append(FieldError(field: field, message: message)) }
        if content.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { error("title", "Title is required") }
        for (field, label, value, max) in [("title", "Title", content.title, 200), ("summary", "Summary", content.summary, 1_000),
                                           ("description", "Description", content.description, 20_000), ("placeText", "Place", content.placeText ?? "", 500)]
        where TextRules.exceeds(value, characters: max) {
            error(field, TextRules.tooLong(label, characters: max, value))
        }
        let written = content.allDay ? "a date such as 2026-12-05" : "a local time such as 2026-12-05T10:00"
        if TimeZone(identifier: content.timeZone) == nil { error("timeZone", "Time zone must be an IANA zone such as America/New_York") }
        let start = local(content.startsAt, allDay: content.allDay), end = local(content.endsAt, allDay: content.allDay)
        if start == nil { error("startsAt", "Starts must be \(written)") }
        if end == nil { error("endsAt", "Ends must be \(written)") }
        if start != nil, end != nil, errors.isEmpty, CalendarSchedule(content) == nil { error("endsAt", "Ends must not be before Starts") }
        for (field, value) in [("url", content.url), ("registrationUrl", content.registrationUrl)] {
            guard let value, !value.isEmpty else { continue }
            if !TextRules.isWebURL(value) { error(field, "\(field == "url" ? "Link" : "Registration link") must be an http or https URL") }
        }
        if let recurrence = content.recurrence {
            if let interval = recurrence.interval, !(1...99).contains(interval) { error("recurrence", "Repeat every must be 1 to 99") }
            if let count = recurrence.count, !(1...maximumOccurrences).contains(count) { error("recurrence", "Occurrences must be 1 to \(maximumOccurrences)") }
            if recurrence.count != nil, recurrence.until != nil { error("recurrence", "Give either a number of occurrences or an end date, not both") }
            if let until = recurrence.until, local(until, allDay: true) == nil { error("recurrence", "Repeat until must be a date such as 2027-06-30") }
            if let days = recurrence.byDay {
                if recurrence.frequency != .weekly { error("recurrence", "Days of the week go with weekly repetition") }
                if days.isEmpty || days.contains(where: { !weekdayCodes.contains($0) }) {
                    error("recurrence", "Days of the week are MO, TU, WE, TH, FR, SA, SU")
                }
            }
        }
        for text in content.exceptionDates where local(text, allDay: content.allDay) == nil {
            error("exceptionDates", "Skipped dates must each be \(written), as Starts is written; \"\(text)\" is not")
        }
        return errors
    }

    /// `YYYY-MM-DD` (all-day) or `YYYY-MM-DDTHH:MM`, checked to be a real date and time.
    static func local(_ text: String, allDay: Bool) -> DateComponents? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == (allDay ? 1 : 2) else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2, let year = Int(date[0]), let month = Int(date[1]),
              let day = Int(date[2]), (1...12).contains(month), (1...31).contains(day), year >= 1900 else { return nil }
        var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0)
        if !allDay {
            let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            guard time.count == 2, time[0].count == 2, time[1].count == 2, let hour = Int(time[0]), let minute = Int(time[1]),
                  (0...23).contains(hour), (0...59).contains(minute) else { return nil }
            components.hour = hour
            components.minute = minute
        }
        // 2026-02-30 is no day.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        guard let instant = utc.date(from: components), utc.component(.day, from: instant) == day else { return nil }
        return components
    }

    static func text(_ components: DateComponents, allDay: Bool) -> String {
        // Written by hand: once per occurrence expanded, and `String(format:)` was most of a search's time.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        func digits(_ value: Int, _ count: Int) {
            // At least `count` digits, more when the value has them (%0Nd).
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while value / divisor >= 10 { divisor *= 10 }
            var rest = abs(value)
            while divisor > 0 {
                bytes.append(UInt8(truncatingIfNeeded: 48 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(components.year ?? 0, 4); bytes.append(UInt8(ascii: "-"))
        digits(components.month ?? 0, 2); bytes.append(UInt8(ascii: "-"))
        digits(components.day ?? 0, 2)
        if !allDay {
            bytes.append(UInt8(ascii: "T"))
            digits(components.hour ?? 0, 2); bytes.append(UInt8(ascii: ":"))
            digits(components.minute ?? 0, 2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The occurrences that overlap [from, to), in order, at most `limit`.
    public func occurrences(overlapping from: Date, _ to: Date, limit: Int = maximumOccurrences) -> [CalendarOccurrence] {
        var found: [CalendarOccurrence] = []
        let skipped = Set(exceptionDates)
        forEachStart { day in
            var local = day
            local.hour = Int(start.hour)
            local.minute = Int(start.minute)
            guard let begin = calendar.date(from: local) else { return true }
            if begin >= to { return false }
            let end = allDay ? calendar.date(byAdding: .day, value: length, to: begin) ?? begin
                : begin.addingTimeInterval(Double(length) * 60)
            let written = Self.text(local, allDay: allDay)
            // A moment-long entry (ends as it starts) overlaps a range it starts in.
            if end > from || end == begin && begin >= from, !skipped.contains(written) {
                found.append(CalendarOccurrence(start: begin, end: end, localStart: written))
            }
            return found.count < limit
        }
        return found
    }

    /// Calls `body` with each occurrence's local day (year, month, day), in order, until it returns false, the
    /// recurrence ends, `maximumOccurrences` are made or ten years have passed.
    func forEachStart(_ body: (DateComponents) -> Bool) {
        let first = DateComponents(year: Int(start.year), month: Int(start.month), day: Int(start.day))
        guard let recurrence else {
            _ = body(first)
            return
        }
        let interval = max(1, recurrence.interval ?? 1)
        let limit = min(recurrence.count ?? Self.maximumOccurrences, Self.maximumOccurrences)
        let until = recurrence.until.flatMap { Self.local($0, allDay: true) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        // Days are counted on a plain UTC calendar: local days, whatever the zone's offset does.
        guard let origin = utc.date(from: first) else { return }
        let horizon = utc.date(byAdding: .year, value: 10, to: origin) ?? origin
        let lastDay = until.flatMap { utc.date(from: DateComponents(year: $0.year, month: $0.month, day: $0.day)) }
        var made = 0
        func emit(_ day: Date) -> Bool {
            if day < origin { return true }
            if day > horizon || lastDay.map({ day > $0 }) == true || made >= limit { return false }
            made += 1
            return body(utc.dateComponents([.year, .month, .day], from: day))
        }
        switch recurrence.frequency {
        case .daily:
            var index = 0
            while let day = utc.date(byAdding: .day, value: index * interval, to: origin), emit(day) { index += 1 }
        case .weekly:
            let weekday = (utc.component(.weekday, from: origin) + 5) % 7 // Monday 0
            let days = (recurrence.byDay ?? [Self.weekdayCodes[weekday]]).compactMap { Self.weekdayCodes.firstIndex(of: $0) }.sorted()
            // No valid day code (validation refuses such a rule; one read from the topic may still have it): no occurrence,
            // rather than weeks counted forever without one.
            guard !days.isEmpty, let monday = utc.date(byAdding: .day, value: -weekday, to: origin) else { return }
            var week = 0
            weeks: while true {
                for offset in days {
                    guard let day = utc.date(byAdding: .day, value: week * interval * 7 + offset, to: monday) else { break weeks }
                    if !emit(day) { break weeks }
                }
                week += 1
            }
        case .monthly:
            var index = 0
            while index < 12 * 10 + 1 {
                var month = DateComponents(year: first.year, month: (first.month ?? 1) + index * interval, day: 1)
                index += 1
                guard let monthStart = utc.date(from: month) else { break }
                month = utc.dateComponents([.year, .month], from: monthStart)
                month.day = first.day
                // A month without that day (the 31st in April) has no occurrence.
                guard let day = utc.date(from: month), utc.component(.day, from: day) == first.day else { continue }
                if !emit(day) { break }
            }
        }
    }
}

/// A local date and time of day as `CalendarSchedule.local` reads them.
struct LocalStart: Sendable {
    let year: Int32
    let month: Int8, day: Int8, hour: Int8, minute: Int8

    init(_ components: DateComponents) {
        year = Int32(components.year ?? 0)
        month = Int8(components.month ?? 0)
        day = Int8(components.day ?? 0)
        hour = Int8(components.hour ?? 0)
        minute = Int8(components.minute ?? 0)
    }
}
