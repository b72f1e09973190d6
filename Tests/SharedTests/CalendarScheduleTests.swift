import Foundation
@testable import Shared
import Testing

/// Calendar entries' occurrences (DESIGN.md, "Calendar"): the RRULE subset expanded in the entry's zone.
@Suite("Calendar schedule")
struct CalendarScheduleTests {
    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func starts(_ content: CalendarEntryContent, from: String = "2000-01-01T00:00:00Z", to: String = "2040-01-01T00:00:00Z") -> [String] {
        CalendarSchedule(content)!.occurrences(overlapping: utc(from), utc(to)).map(\.localStart)
    }

    @Test("weekly on two days with a count, an exception counted but not held, and until inclusive")
    func weekly() {
        var visit = CalendarEntryContent(title: "Campus visit", startsAt: "2026-12-01T10:00", endsAt: "2026-12-01T11:30", timeZone: "America/New_York",
                                         recurrence: CalendarRecurrence(frequency: .weekly, byDay: ["TU", "TH"], count: 5),
                                         exceptionDates: ["2026-12-08T10:00"])
        #expect(Self.starts(visit) == ["2026-12-01T10:00", "2026-12-03T10:00", "2026-12-10T10:00", "2026-12-15T10:00"])
        visit.recurrence = CalendarRecurrence(frequency: .weekly, interval: 2, byDay: ["MO", "TH"], until: "2026-12-31")
        visit.exceptionDates = []
        // Weeks from Monday: the start's week (30 Nov) holds only the Thursday after the start, then every other week.
        #expect(Self.starts(visit) == ["2026-12-03T10:00", "2026-12-14T10:00", "2026-12-17T10:00", "2026-12-28T10:00", "2026-12-31T10:00"])
        let occurrence = CalendarSchedule(visit)!.occurrences(overlapping: Self.utc("2026-12-14T00:00:00Z"), Self.utc("2026-12-15T00:00:00Z"))
        #expect(occurrence.map(\.start) == [Self.utc("2026-12-14T15:00:00Z")] && occurrence.map(\.end) == [Self.utc("2026-12-14T16:30:00Z")])
    }

    @Test("10:00 stays 10:00 in the entry's zone across the change to daylight saving time")
    func daylightSaving() {
        let sunday = CalendarEntryContent(title: "Museum", startsAt: "2026-03-01T10:00", endsAt: "2026-03-01T12:00", timeZone: "America/New_York",
                                          recurrence: CalendarRecurrence(frequency: .weekly, count: 2))
        #expect(CalendarSchedule(sunday)!.occurrences(overlapping: Self.utc("2026-01-01T00:00:00Z"), Self.utc("2027-01-01T00:00:00Z")).map(\.start)
                == [Self.utc("2026-03-01T15:00:00Z"), Self.utc("2026-03-08T14:00:00Z")])
    }

    @Test("monthly on the 31st skips months without one; daily with an interval; all-day entries last whole days")
    func monthlyDailyAllDay() {
        let payday = CalendarEntryContent(title: "Pay", startsAt: "2027-01-31", endsAt: "2027-01-31", timeZone: "UTC", allDay: true,
                                          recurrence: CalendarRecurrence(frequency: .monthly, count: 4))
        #expect(Self.starts(payday) == ["2027-01-31", "2027-03-31", "2027-05-31", "2027-07-31"])
        let fair = CalendarEntryContent(title: "Fair", startsAt: "2027-04-10", endsAt: "2027-04-11", timeZone: "Europe/London", allDay: true)
        let days = CalendarSchedule(fair)!.occurrences(overlapping: Self.utc("2027-04-11T12:00:00Z"), Self.utc("2027-04-11T13:00:00Z"))
        #expect(days.map(\.start) == [Self.utc("2027-04-09T23:00:00Z")] && days.map(\.end) == [Self.utc("2027-04-11T23:00:00Z")])
        let every3 = CalendarEntryContent(title: "Tide", startsAt: "2027-01-01T06:00", endsAt: "2027-01-01T06:00", timeZone: "UTC",
                                          recurrence: CalendarRecurrence(frequency: .daily, interval: 3, until: "2027-01-10"))
        #expect(Self.starts(every3) == ["2027-01-01T06:00", "2027-01-04T06:00", "2027-01-07T06:00", "2027-01-10T06:00"])
        // An endless daily entry stops at the cap, and a range far ahead gets nothing past ten years.
        let forever = CalendarEntryContent(title: "Daily", startsAt: "2027-01-01T06:00", endsAt: "2027-01-01T07:00", timeZone: "UTC",
                                           recurrence: CalendarRecurrence(frequency: .daily))
        #expect(Self.starts(forever).count == CalendarSchedule.maximumOccurrences)
        #expect(CalendarSchedule(forever)!.occurrences(overlapping: Self.utc("2038-01-01T00:00:00Z"), Self.utc("2039-01-01T00:00:00Z")).isEmpty)
    }

    @Test("mistakes are field errors naming the field")
    func problems() {
        func fields(_ content: CalendarEntryContent) -> [String] { CalendarSchedule.problems(content).map(\.field) }
        let good = CalendarEntryContent(title: "Open Day", startsAt: "2026-12-05T09:00", endsAt: "2026-12-05T16:00", timeZone: "America/New_York")
        #expect(fields(good).isEmpty)
        var bad = good
        bad.title = " "
        bad.timeZone = "Mars/Olympus"
        #expect(fields(bad) == ["title", "timeZone"])
        bad = good
        bad.endsAt = "2026-12-05T08:00"
        #expect(fields(bad) == ["endsAt"])
        bad.endsAt = "2026-02-30T08:00"
        bad.startsAt = "tomorrow"
        #expect(fields(bad) == ["startsAt", "endsAt"])
        bad = good
        bad.recurrence = CalendarRecurrence(frequency: .daily, byDay: ["XX"], count: 3, until: "2027-01-01")
        bad.exceptionDates = ["2026-12-12"]
        bad.url = "javascript:alert(1)"
        #expect(fields(bad) == ["url", "recurrence", "recurrence", "recurrence", "exceptionDates"])
    }

    @Test("an occurrence's local start is written as String(format:) writes it (what exceptionDates are compared with)")
    func localStartText() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let c = DateComponents(year: Int.random(in: 1_000...12_000, using: &generator), month: Int.random(in: 1...12, using: &generator),
                                   day: Int.random(in: 1...31, using: &generator), hour: Int.random(in: 0...23, using: &generator),
                                   minute: Int.random(in: 0...59, using: &generator))
            let date = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
            #expect(CalendarSchedule.text(c, allDay: true) == date)
            #expect(CalendarSchedule.text(c, allDay: false) == date + String(format: "T%02d:%02d", c.hour!, c.minute!))
        }
    }
}
