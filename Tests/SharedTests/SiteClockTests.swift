import Foundation
import Testing
@testable import Shared
import TestSupport

@Suite("The site's clock (SITE_TIME_ZONE)")
struct SiteClockTests {
    static let newYork = SiteClock(timeZone: TimeZone(identifier: "America/New_York")!)

    static func instant(_ text: String) throws -> Date {
        guard let date = RFC3339.parse(text) else { throw TestFailure("not RFC 3339: \(text)") }
        return date
    }

    @Test("times are shown in the site's zone with the zone named, winter and summer, and by offset where a zone has no letters")
    func shown() throws {
        #expect(Self.newYork.text(try Self.instant("2026-11-29T06:18:05Z")) == "2026-11-29 01:18 EST")
        #expect(Self.newYork.text(try Self.instant("2026-07-01T16:00:00Z"), seconds: true) == "2026-07-01 12:00:00 EDT")
        #expect(SiteClock.utc.text(try Self.instant("2026-11-29T06:18:05Z")) == "2026-11-29 06:18 UTC")
        let kolkata = SiteClock(timeZone: TimeZone(identifier: "Asia/Kolkata")!)
        #expect(kolkata.text(try Self.instant("2026-11-29T06:18:05Z")) == "2026-11-29 11:48 UTC+05:30")
        let saoPaulo = SiteClock(timeZone: TimeZone(identifier: "America/Sao_Paulo")!)
        #expect(saoPaulo.zoneName(at: try Self.instant("2026-11-29T06:18:05Z")) == "UTC\u{2212}03:00")
    }

    @Test("a typed wall-clock time is read in the site's zone, summer time included, and what is shown reads back the same")
    func typed() throws {
        #expect(Self.newYork.date(fromLocal: "2026-12-01T09:00") == (try Self.instant("2026-12-01T14:00:00Z")))
        #expect(Self.newYork.date(fromLocal: "2026-07-01T09:00:30") == (try Self.instant("2026-07-01T13:00:30Z")))
        // Spring forward (2027-03-14 02:00 EST → 03:00 EDT): 02:30 does not exist; it is read as the clock then shows, 03:30 EDT.
        #expect(Self.newYork.date(fromLocal: "2027-03-14T02:30") == (try Self.instant("2027-03-14T07:30:00Z")))
        // Fall back (2027-11-07 02:00 EDT → 01:00 EST): 01:30 happens twice; the first is taken.
        #expect(Self.newYork.date(fromLocal: "2027-11-07T01:30") == (try Self.instant("2027-11-07T05:30:00Z")))
        for text in ["", "tomorrow", "2027-02-30T10:00", "2027-13-01T10:00", "2027-01-01T24:30", "2027-01-01"] {
            #expect(Self.newYork.date(fromLocal: text) == nil, "\(text)")
        }
        let instant = try Self.instant("2026-11-29T06:18:00Z")
        #expect(Self.newYork.date(fromLocal: Self.newYork.localInput(instant)) == instant)
    }

    @Test("SITE_TIME_ZONE is an IANA zone or start-up says what is wrong")
    func configured() throws {
        #expect(SiteClock(timeZone: try Environment([:]).siteTimeZone()).name == "UTC")
        #expect(SiteClock(timeZone: TimeZone(identifier: "Europe/London")!).name == "Europe/London")
        #expect(try Environment(["SITE_TIME_ZONE": "Europe/Berlin"]).siteTimeZone().identifier == "Europe/Berlin")
        #expect { try Environment(["SITE_TIME_ZONE": "Mars/Olympus"]).siteTimeZone() } throws: { error in
            "\(error)".contains("SITE_TIME_ZONE must be an IANA time zone") && "\(error)".contains("Mars/Olympus")
        }
    }
}
