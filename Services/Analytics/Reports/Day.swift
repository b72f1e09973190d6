import Foundation
import Shared

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
              (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
        self.number = Int32(CivilDate.daysFromCivil(year: year, month: month, day: day))
    }

    /// `YYYY-MM-DD`.
    var description: String {
        let (year, month, day) = CivilDate.civil(fromDays: Int(number))
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// Midnight UTC at the start of the day.
    var start: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }

    func adding(days: Int) -> Day { Day(number: number + Int32(days)) }

    static func < (lhs: Day, rhs: Day) -> Bool { lhs.number < rhs.number }
}
