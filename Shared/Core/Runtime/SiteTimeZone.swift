import Foundation

/// The site's one IANA time zone (`SITE_TIME_ZONE`, DESIGN.md "Opening hours, prices and access"): where the feed
/// decides `openNow` and where the admin shows and reads every time staff see or type.
extension ConfigVariable {
    public static let siteTimeZone = optional("SITE_TIME_ZONE", default: "UTC",
                                              "the site's IANA time zone: where openNow is decided and the admin's times are shown (e.g. America/New_York)")
}

extension Environment {
    /// `SITE_TIME_ZONE`, refused unless the system's time zone database knows it.
    public func siteTimeZone() throws -> TimeZone {
        let name = string(.siteTimeZone)
        guard let zone = TimeZone(identifier: name) else {
            throw ConfigurationError(name: ConfigVariable.siteTimeZone.name,
                                     message: "must be an IANA time zone such as America/New_York, got \"\(name)\"")
        }
        return zone
    }
}

/// Times in the site's zone, written the one way the admin shows them: `2026-11-29 01:18 EST`, the zone's
/// abbreviation (or its offset where it has none) always said.
public struct SiteClock: Sendable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) { self.timeZone = timeZone }

    public static let utc = SiteClock(timeZone: TimeZone(identifier: "UTC")!)

    /// The zone's IANA name, "UTC" for UTC (which Foundation on Linux calls GMT).
    public var name: String { isUTC ? "UTC" : timeZone.identifier }

    /// UTC itself (or a zone that is UTC all year), not London's winter GMT.
    private var isUTC: Bool { timeZone.secondsFromGMT() == 0 && timeZone.nextDaylightSavingTimeTransition == nil }

    /// `2026-11-29 01:18 EST`; `seconds` adds them.
    public func text(_ date: Date, seconds: Bool = false) -> String {
        formatter(seconds ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm").string(from: date) + " " + zoneName(at: date)
    }

    /// The zone as it is called at `date`: its abbreviation where the zone has a lettered one (EST, EDT, GMT), else its
    /// UTC offset (`UTC+05:30`); "UTC" for UTC itself.
    public func zoneName(at date: Date) -> String {
        let seconds = timeZone.secondsFromGMT(for: date)
        guard !isUTC else { return "UTC" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US")
        formatter.timeZone = timeZone
        formatter.dateFormat = "zzz"
        let abbreviation = formatter.string(from: date)
        return abbreviation.hasPrefix("GMT") && abbreviation != "GMT" || abbreviation.isEmpty ? Self.offsetName(seconds) : abbreviation
    }

    /// `UTC`, `UTC−05:00`, `UTC+05:30`.
    public static func offsetName(_ seconds: Int) -> String {
        guard seconds != 0 else { return "UTC" }
        let minutes = abs(seconds) / 60
        let hours = String(minutes / 60), rest = String(minutes % 60)
        return "UTC\(seconds < 0 ? "\u{2212}" : "+")\(hours.count < 2 ? "0" + hours : hours):\(rest.count < 2 ? "0" + rest : rest)"
    }

    /// A wall-clock time typed in the site's zone (`2026-12-01T09:00`, seconds optional, as a `datetime-local` field
    /// sends it), as an instant; nil when it is not such a time. A time a summer-time change skips is read with the
    /// offset before the change (02:30 on the spring morning is 03:30 summer time); a time that happens twice is the first.
    public func date(fromLocal text: String) -> Date? {
        let typed = text.trimmingCharacters(in: .whitespaces)
        let wallClock = ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm"].lazy
            .compactMap { SiteClock.utc.formatter($0).date(from: typed) }.first
        guard let wallClock else { return nil }
        let before = timeZone.secondsFromGMT(for: wallClock.addingTimeInterval(-86_400))
        let after = timeZone.secondsFromGMT(for: wallClock.addingTimeInterval(86_400))
        for offset in [before, after] {
            let instant = wallClock.addingTimeInterval(-Double(offset))
            if timeZone.secondsFromGMT(for: instant) == offset { return instant }
        }
        return wallClock.addingTimeInterval(-Double(before))
    }

    /// The same instant as `datetime-local` wants it, in the site's zone: `2026-12-01T09:00`.
    public func localInput(_ date: Date) -> String {
        formatter("yyyy-MM-dd'T'HH:mm").string(from: date)
    }

    private func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = format
        formatter.isLenient = false
        return formatter
    }
}
