import Foundation
import Shared
import Testing

/// OpenStreetMap opening hours, the subset DESIGN.md names: what reads, what is refused and where, and whether a
/// place is open at an instant in the site's zone.
@Suite("Opening hours")
struct OpeningHoursTests {
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// An instant given as New York wall-clock time.
    static func at(_ text: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = newYork
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)!
    }

    @Test("rules, ranges, lists, several spans, off, 24/7 and a later rule replacing an earlier one")
    func reading() throws {
        let hours = try OpeningHours(parsing: "Mo-Fr 08:00-12:00, 13:00-17:30; We 10:00-14:00; Sa 10:00-14:00; Su off; PH closed")
        #expect(hours.week.map { "\($0.day.abbreviation) \($0.spans.map(\.text).joined(separator: ","))" } == [
            "Mo 08:00-12:00,13:00-17:30", "Tu 08:00-12:00,13:00-17:30", "We 10:00-14:00", "Th 08:00-12:00,13:00-17:30",
            "Fr 08:00-12:00,13:00-17:30", "Sa 10:00-14:00", "Su ", "PH ",
        ])
        #expect(try OpeningHours(parsing: "24/7").week.count == 7)
        #expect(try OpeningHours(parsing: "24/7").week.allSatisfy { $0.spans.map(\.text) == ["00:00-24:00"] })
        #expect(try OpeningHours(parsing: "Fr-Mo 18:00-02:00").week.map { $0.spans.map(\.text) } == [
            ["18:00-02:00"], [], [], [], ["18:00-02:00"], ["18:00-02:00"], ["18:00-02:00"],
        ])
        #expect(try OpeningHours(parsing: "10:00-16:00").week.allSatisfy { $0.spans.map(\.text) == ["10:00-16:00"] })
        #expect(try OpeningHours(parsing: "mo,we 09:00-17:00").week.map(\.spans.isEmpty) == [false, true, false, true, true, true, true])
    }

    @Test("a mistake is refused with the rule and the part that is wrong", arguments: [
        ("Mo-Fx 08:00-17:00", "\"Fx\" is not a day"),
        ("Mo-Fr 8-17", "\"8-17\" is not a time span"),
        ("Mo-Fr 08:00-25:00", "is not a time span"),
        ("Mo-Fr 08:00-17:00;", "rule 2 is empty"),
        ("Mo-Fr", "names days but no times"),
        ("Mo-Fr 08:00-17:00 Sa 10:00-12:00", "separate rules with \";\""),
        ("Mo-PH 08:00-17:00", "PH cannot be part of a range"),
        ("Mo 12:00-14:00,13:00-15:00", "starts before the span before it ends"),
        ("open when the sign says so", "is not a day"),
    ])
    func refused(text: String, message: String) {
        #expect {
            _ = try OpeningHours(parsing: text)
        } throws: { error in
            guard let error = error as? OpeningHours.SyntaxError else { return false }
            return error.message.contains(message) && error.message.hasPrefix("Opening hours")
        }
    }

    @Test("open now: in the site's zone, across midnight, on a public holiday, and through a DST change")
    func openNow() throws {
        let office = try OpeningHours(parsing: "Mo-Fr 08:00-17:00; PH off")
        func open(_ hours: OpeningHours, _ time: String, holidays: Set<String> = []) -> Bool {
            hours.isOpen(at: Self.at(time), in: Self.newYork, publicHolidays: holidays)
        }
        #expect(open(office, "2026-11-23 08:00"))                       // a Monday, opening minute
        #expect(!open(office, "2026-11-23 17:00"))                      // closing minute is closed
        #expect(!open(office, "2026-11-23 07:59"))
        #expect(!open(office, "2026-11-28 12:00"))                      // Saturday
        #expect(!open(office, "2026-11-26 12:00", holidays: ["2026-11-26"]))  // Thanksgiving
        #expect(open(office, "2026-11-26 12:00"))
        // 13:30 UTC is 08:30 in New York in winter: the zone decides, not UTC.
        #expect(office.isOpen(at: Date(timeIntervalSince1970: 1_795_613_400), in: Self.newYork, publicHolidays: []) ==
                open(office, "2026-11-23 08:30"))

        let bar = try OpeningHours(parsing: "Fr-Sa 18:00-02:00")
        #expect(open(bar, "2026-11-27 23:30"))                          // Friday night
        #expect(open(bar, "2026-11-28 01:30"))                          // Saturday early: Friday's span
        #expect(!open(bar, "2026-11-28 02:00"))
        #expect(open(bar, "2026-11-29 01:00"))                          // Sunday early: Saturday's span
        #expect(!open(bar, "2026-11-30 01:00"))                         // Monday early: Sunday had none
        // A holiday without a PH rule keeps its weekday's hours; with one, the holiday's.
        #expect(open(bar, "2026-11-27 20:00", holidays: ["2026-11-27"]))
        #expect(try !open(OpeningHours(parsing: "Fr 18:00-02:00; PH off"), "2026-11-28 01:00", holidays: ["2026-11-27"]))

        // 2026-03-08: clocks go from 02:00 to 03:00 in New York; 09:30 local is open either way.
        let museum = try OpeningHours(parsing: "Su 09:00-17:00")
        #expect(open(museum, "2026-03-08 09:30") && !open(museum, "2026-03-08 08:30"))
        #expect(try open(OpeningHours(parsing: "24/7"), "2026-03-08 03:15"))
    }
}
