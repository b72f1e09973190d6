import Foundation

/// Opening hours in OpenStreetMap's `opening_hours` syntax, the common subset (DESIGN.md, "Opening hours"):
/// `24/7`; rules separated by `;`, each an optional day selector (`Mo-Fr`, `Mo,We,Fr`, `Sa-Su,PH`; none:
/// every day) and either time spans (`08:00-12:00,13:00-17:30`; an end up to `24:00`, or past midnight as
/// `22:00-02:00`) or `off` / `closed`. A later rule replaces what earlier ones said of the days it names, as
/// in OpenStreetMap. `PH` (public holidays) applies on the site's holiday dates; without a `PH` rule a
/// holiday keeps its weekday's hours.
public struct OpeningHours: Sendable, Equatable {
    /// A day selector's day: the weekdays Monday first, then public holidays.
    public enum Day: Int, Sendable, CaseIterable, Comparable {
        case monday, tuesday, wednesday, thursday, friday, saturday, sunday, publicHoliday

        public static let weekdays: [Day] = [.monday, .tuesday, .wednesday, .thursday, .friday, .saturday, .sunday]

        /// The OpenStreetMap abbreviation: Mo … Su, PH.
        public var abbreviation: String { ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su", "PH"][rawValue] }
        public var name: String { ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Public holidays"][rawValue] }

        public static func < (a: Day, b: Day) -> Bool { a.rawValue < b.rawValue }
    }

    /// Minutes after the day's midnight; `end` may pass 1 440 (a span past midnight ends the next day).
    public struct Span: Sendable, Equatable {
        public var start: Int
        public var end: Int

        /// `08:00-17:30`, `22:00-02:00`.
        public var text: String { "\(Self.clock(start))-\(Self.clock(end > 1_440 ? end - 1_440 : end))" }

        static func clock(_ minutes: Int) -> String {
            let hours = minutes / 60, rest = minutes % 60
            return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
        }
    }

    /// The spans of each day a rule named; a day no rule named is closed (absent), a weekday a `PH` rule left
    /// alone keeps its hours on a holiday.
    public private(set) var days: [Day: [Span]]

    /// A message pointing at the first mistake, with its place in the text.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public init(parsing text: String) throws(SyntaxError) {
        let source = Self.trimmed(text[...])
        guard !source.isEmpty else { throw SyntaxError(message: "Opening hours are empty; leave the field blank when they are not known") }
        guard source.count <= 500 else { throw SyntaxError(message: "Opening hours must be at most 500 characters") }
        if source == "24/7" {
            days = Dictionary(uniqueKeysWithValues: Day.weekdays.map { ($0, [Span(start: 0, end: 1_440)]) })
            return
        }
        var days: [Day: [Span]] = [:]
        for (index, rawRule) in source.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            // "08:00-12:00, 13:00-17:00" and "Mo, We" are common in the wild: a space after a comma is no separator.
            let rule = Self.droppingSpaceAfterCommas(Self.trimmed(rawRule))
            let place = Place(index: index, rule: rule)
            guard !rule.isEmpty else { throw SyntaxError(message: "Opening hours: rule \(index + 1) is empty (two \";\" in a row, or one at the end)") }
            var words = rule.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            var named: [Day] = Day.weekdays
            if let first = words.first, first.first?.isLetter == true, !["off", "closed"].contains(first.lowercased()) {
                named = try Self.days(first, in: place)
                words.removeFirst()
            }
            guard words.count == 1 else {
                throw SyntaxError(message: words.isEmpty
                    ? "Opening hours: \(place) names days but no times; add times such as 09:00-17:00, or off"
                    : "Opening hours: \(place) has \"\(words.dropFirst().joined(separator: " "))\" after its times; separate rules with \";\"")
            }
            let spans = try Self.spans(words[0], in: place)
            for day in named { days[day] = spans }
        }
        self.days = days
    }

    // MARK: reading

    /// Where a mistake is, for its message; written only when there is one (every POI's hours are read at import).
    private struct Place: CustomStringConvertible {
        let index: Int
        let rule: String
        var description: String { "rule \(index + 1) (\"\(rule)\")" }
    }

    private static func trimmed(_ text: Substring) -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace && !$0.isNewline }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[first...last])
    }

    /// "a, b" as "a,b": one space after each comma dropped, by plain character work (a split on ", " goes through
    /// _StringProcessing's matching, and every imported POI's hours are read).
    private static func droppingSpaceAfterCommas(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: ",")) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var afterComma = false
        for character in text {
            if afterComma && character == " " {
                afterComma = false
                continue
            }
            afterComma = character == ","
            result.append(character)
        }
        return result
    }

    private static let abbreviations: [String: Day] = Dictionary(uniqueKeysWithValues: Day.allCases.map { ($0.abbreviation.lowercased(), $0) })

    private static func day(_ text: Substring, in place: Place) throws(SyntaxError) -> Day {
        guard let day = abbreviations[text.lowercased()] else {
            throw SyntaxError(message: "Opening hours: in \(place), \"\(text)\" is not a day; use Mo, Tu, We, Th, Fr, Sa, Su or PH")
        }
        return day
    }

    private static func days(_ text: String, in place: Place) throws(SyntaxError) -> [Day] {
        var named: [Day] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            switch ends.count {
            case 1:
                named.append(try day(ends[0], in: place))
            case 2:
                let from = try day(ends[0], in: place), to = try day(ends[1], in: place)
                guard from != .publicHoliday, to != .publicHoliday else {
                    throw SyntaxError(message: "Opening hours: in \(place), PH cannot be part of a range; list it on its own, as in Mo-Fr,PH")
                }
                // A range may wrap past Sunday: Fr-Mo is Friday to Monday.
                var day = from
                while true {
                    named.append(day)
                    if day == to { break }
                    day = Day(rawValue: (day.rawValue + 1) % 7)!
                }
            default:
                throw SyntaxError(message: "Opening hours: in \(place), \"\(part)\" is not a day or a range of days such as Mo-Fr")
            }
        }
        return named
    }

    private static func spans(_ text: String, in place: Place) throws(SyntaxError) -> [Span] {
        if ["off", "closed"].contains(text.lowercased()) { return [] }
        var spans: [Span] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let start = minutes(ends[0]), var end = minutes(ends[1]), start < 1_440 else {
                throw SyntaxError(message: "Opening hours: in \(place), \"\(part)\" is not a time span; write it as 09:00-17:30 (24-hour clock), or off")
            }
            if end <= start { end += 1_440 }
            guard end - start <= 1_440 else {
                throw SyntaxError(message: "Opening hours: in \(place), \"\(part)\" is longer than a day")
            }
            if let previous = spans.last, start < previous.end {
                throw SyntaxError(message: "Opening hours: in \(place), \"\(part)\" starts before the span before it ends; list spans in order without overlaps")
            }
            spans.append(Span(start: start, end: end))
        }
        return spans
    }

    /// `HH:MM`, 00:00 to 24:00.
    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]),
              parts[0].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isASCII),
              (0...24).contains(hours), (0...59).contains(minutes), hours < 24 || minutes == 0 else { return nil }
        return hours * 60 + minutes
    }

    // MARK: answering

    /// The spans that apply on a calendar date with this weekday, a public holiday or not.
    public func spans(on weekday: Day, isPublicHoliday: Bool) -> [Span] {
        if isPublicHoliday, let holiday = days[.publicHoliday] { return holiday }
        return days[weekday] ?? []
    }

    /// Whether the place is open at `date`, in the site's time zone with its public holidays (`yyyy-MM-dd`).
    public func isOpen(at date: Date, in timeZone: TimeZone, publicHolidays: Set<String>) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
        guard let year = parts.year, let month = parts.month, let dayOfMonth = parts.day, let hour = parts.hour, let minute = parts.minute,
              let weekdayNumber = parts.weekday else { return false }
        // Calendar's weekday: 1 is Sunday.
        let today = Day(rawValue: (weekdayNumber + 5) % 7)!
        let now = hour * 60 + minute
        if spans(on: today, isPublicHoliday: publicHolidays.contains(Self.dateKey(year, month, dayOfMonth)))
            .contains(where: { $0.start <= now && now < $0.end }) { return true }
        // Yesterday's spans that run past midnight.
        guard let yesterdayDate = calendar.date(byAdding: .day, value: -1, to: date) else { return false }
        let before = calendar.dateComponents([.year, .month, .day], from: yesterdayDate)
        let yesterday = Day(rawValue: (today.rawValue + 6) % 7)!
        let yesterdayIsHoliday = publicHolidays.contains(Self.dateKey(before.year ?? 0, before.month ?? 0, before.day ?? 0))
        return spans(on: yesterday, isPublicHoliday: yesterdayIsHoliday).contains { $0.end > 1_440 && now + 1_440 < $0.end }
    }

    static func dateKey(_ year: Int, _ month: Int, _ day: Int) -> String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// The weekly table: each weekday with its spans (empty: closed), then public holidays when a rule names them.
    public var week: [(day: Day, spans: [Span])] {
        Day.weekdays.map { ($0, days[$0] ?? []) } + (days[.publicHoliday].map { [(Day.publicHoliday, $0)] } ?? [])
    }
}
