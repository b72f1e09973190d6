import Foundation

/// A UTC calendar day, counted in days since 1970-01-01. Reports cover whole UTC days of `occurredAt`
/// (DESIGN.md "Report semantics"); the ingest files each event under its day with the same arithmetic,
/// so a report's range and the stored rows can never disagree about where midnight is.
struct Day: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before it).
    let number: Int32

    init(number: Int32) { self.number = number }

    /// The UTC day `date` falls on.
    init(containing date: Date) {
        number = Int32((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// Parses exactly `YYYY-MM-DD`, a real calendar date; nil for anything else.
    init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        self.number = Int32(Self.daysFromCivil(year: year, month: month, day: day))
    }

    /// `YYYY-MM-DD`.
    var description: String {
        let (year, month, day) = Self.civil(fromDays: Int(number))
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// Midnight UTC at the start of the day.
    var start: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }

    func adding(days: Int) -> Day { Day(number: number + Int32(days)) }

    static func < (lhs: Day, rhs: Day) -> Bool { lhs.number < rhs.number }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Howard Hinnant's days_from_civil: proleptic Gregorian date to days since 1970-01-01.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil`.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
