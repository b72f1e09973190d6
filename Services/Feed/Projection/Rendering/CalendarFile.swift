import Foundation
import Shared

/// `GET /v1/calendar.ics` (DESIGN.md, "Calendar"): the published entries as an RFC 5545 calendar that phone and
/// desktop calendars subscribe to. Timed entries keep their own zone (`DTSTART;TZID=`, with a VTIMEZONE giving the
/// zone's offsets over the years the entries span); all-day entries are dates.
enum CalendarFile {
    static func render(_ entries: [CalendarEntryState], placeName: (CalendarEntryContent) -> (poiId: UUID?, name: String)?) -> [UInt8] {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//iTour//Feed//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
                     "X-WR-CALNAME:" + escape("iTour events")]
        var years: [String: ClosedRange<Int>] = [:]
        for entry in entries where !entry.content.allDay {
            guard let year = Int(entry.content.startsAt.prefix(4)) else { continue }
            let span = years[entry.content.timeZone].map { min($0.lowerBound, year)...max($0.upperBound, year) } ?? year...year
            years[entry.content.timeZone] = span
        }
        for (zone, span) in years.sorted(by: { $0.key < $1.key }) {
            guard let timeZone = TimeZone(identifier: zone) else { continue }
            lines += timeZoneLines(timeZone, years: (span.lowerBound - 1)...(span.upperBound + 10))
        }
        for entry in entries {
            lines += eventLines(entry, place: placeName(entry.content)?.name)
        }
        lines.append("END:VCALENDAR")
        return Array(lines.map { fold(withoutControls($0)) }.joined(separator: "\r\n").appending("\r\n").utf8)
    }

    private static func eventLines(_ entry: CalendarEntryState, place: String?) -> [String] {
        let content = entry.content
        let allDay = content.allDay
        var lines = ["BEGIN:VEVENT", "UID:\(entry.id.uuidString.lowercased())@itour", "DTSTAMP:" + utcStamp(entry.updatedAt)]
        let zoneParameter = allDay ? ";VALUE=DATE" : ";TZID=\(content.timeZone)"
        lines.append("DTSTART\(zoneParameter):" + local(content.startsAt))
        if allDay {
            // DTEND of a date is exclusive: the day after the last.
            lines.append("DTEND;VALUE=DATE:" + local(nextDay(content.endsAt)))
        } else {
            lines.append("DTEND\(zoneParameter):" + local(content.endsAt))
        }
        lines.append("SUMMARY:" + escape(content.title))
        let description = [content.summary, content.description].filter { !$0.isEmpty }.joined(separator: "\n\n")
        if !description.isEmpty { lines.append("DESCRIPTION:" + escape(description)) }
        if let place { lines.append("LOCATION:" + escape(place)) }
        // URI values are not TEXT: a link that is not a plain web URL (stored before catalog refused them) is left out.
        if let url = content.url, TextRules.isWebURL(url) { lines.append("URL:" + url) }
        if !content.categories.isEmpty { lines.append("CATEGORIES:" + content.categories.map(escape).joined(separator: ",")) }
        if let recurrence = content.recurrence {
            var rule = "FREQ=" + recurrence.frequency.rawValue.uppercased()
            if let interval = recurrence.interval, interval > 1 { rule += ";INTERVAL=\(interval)" }
            if let days = recurrence.byDay, !days.isEmpty { rule += ";BYDAY=" + days.joined(separator: ",") }
            if let count = recurrence.count { rule += ";COUNT=\(count)" }
            if let until = recurrence.until { rule += ";UNTIL=" + untilValue(until, content: content) }
            lines.append("RRULE:" + rule)
        }
        for skipped in content.exceptionDates { lines.append("EXDATE\(zoneParameter):" + local(skipped)) }
        if let registration = content.registrationUrl, TextRules.isWebURL(registration) { lines.append("X-ITOUR-REGISTRATION-URL:" + registration) }
        lines.append("END:VEVENT")
        return lines
    }

    /// UNTIL is a date for all-day entries; for timed ones (DTSTART with TZID) RFC 5545 wants UTC: the end of that day
    /// in the entry's zone.
    private static func untilValue(_ until: String, content: CalendarEntryContent) -> String {
        guard !content.allDay, let zone = TimeZone(identifier: content.timeZone) else { return local(until) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = until.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, let midnight = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2] + 1)) else {
            return local(until)
        }
        return utcStamp(midnight.addingTimeInterval(-1))
    }

    /// `2026-12-05T09:00` → `20261205T090000`; `2026-12-05` → `20261205`.
    private static func local(_ text: String) -> String {
        let digits = text.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        return digits.contains("T") ? digits + "00" : digits
    }

    private static func nextDay(_ date: String) -> String {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, let day = utc.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2] + 1)) else { return date }
        let next = utc.dateComponents([.year, .month, .day], from: day)
        return String(format: "%04d-%02d-%02d", next.year ?? 0, next.month ?? 0, next.day ?? 0)
    }

    static func utcStamp(_ date: Date) -> String {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    /// A VTIMEZONE listing each change of offset in `years` as its own STANDARD or DAYLIGHT onset (no RRULE to get
    /// wrong); a zone without changes gets one STANDARD with its offset.
    static func timeZoneLines(_ zone: TimeZone, years: ClosedRange<Int>) -> [String] {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        guard let from = utc.date(from: DateComponents(year: years.lowerBound, month: 1, day: 1)),
              let to = utc.date(from: DateComponents(year: years.upperBound + 1, month: 1, day: 1)) else { return [] }
        var lines = ["BEGIN:VTIMEZONE", "TZID:\(zone.identifier)"]
        var transition = zone.nextDaylightSavingTimeTransition(after: from)
        var onsets = 0
        while let moment = transition, moment < to {
            let before = zone.secondsFromGMT(for: moment.addingTimeInterval(-1)), after = zone.secondsFromGMT(for: moment)
            let kind = zone.isDaylightSavingTime(for: moment) ? "DAYLIGHT" : "STANDARD"
            // DTSTART of an onset is local time before the change.
            let localStart = utcStamp(moment.addingTimeInterval(Double(before))).dropLast()
            lines += ["BEGIN:\(kind)", "DTSTART:\(localStart)", "TZOFFSETFROM:\(offset(before))", "TZOFFSETTO:\(offset(after))", "END:\(kind)"]
            onsets += 1
            transition = zone.nextDaylightSavingTimeTransition(after: moment)
        }
        if onsets == 0 {
            let fixed = offset(zone.secondsFromGMT(for: from))
            lines += ["BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:\(fixed)", "TZOFFSETTO:\(fixed)", "END:STANDARD"]
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    private static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let minutes = abs(seconds) / 60
        return String(format: "%@%02d%02d", sign, minutes / 60, minutes % 60)
    }

    /// TEXT values: backslash, semicolon, comma and line breaks (Unicode's too) escaped (RFC 5545 3.3.11); control characters dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.replacingOccurrences(of: "\r\n", with: "\n").unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n", "\r", "\u{2028}", "\u{2029}", "\u{85}": out += "\\n"
            default:
                if isControl(scalar) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The line without control characters: every value was escaped or checked, and this keeps any that was not
    /// (a zone name, a rule's day code, a content line added later) from ending its line and starting another.
    static func withoutControls(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return line }
        return String(String.UnicodeScalarView(line.unicodeScalars.filter { !isControl($0) }))
    }

    /// C0 (tab too: no value here needs one), DEL, C1 (NEL among them) and the Unicode line and paragraph separators:
    /// what some reader could take for the end of a line.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// Lines of at most 75 octets, continued with a space (RFC 5545 3.1), never splitting a character.
    static func fold(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var out = "", width = 0, limit = 75
        for character in line {
            let size = character.utf8.count
            if width + size > limit {
                out += "\r\n "
                width = 0
                limit = 74
            }
            out.append(character)
            width += size
        }
        return out
    }
}
