import Foundation
import Shared

/// `RFC3339` (Shared) without Foundation on the common path: the feed formats and parses tens of
/// thousands of timestamps per second, and `String(format:)` and `ISO8601FormatStyle` dominated a
/// profile of `POST /v1/events`. Results are identical to `RFC3339`'s (a test compares them); input
/// outside the fast path (offsets other than Z, more than three fraction digits, years before 1600) goes to
/// `RFC3339` itself.
enum Timestamps {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, as `RFC3339.format`.
    static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func append(_ date: Date, to bytes: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let seconds = floorDivide(milliseconds, 1_000)
        let days = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        guard (0...9_999).contains(year) else {
            bytes.append(contentsOf: RFC3339.format(date).utf8)
            return
        }
        let secondOfDay = Int(seconds - days * 86_400), fraction = Int(milliseconds - seconds * 1_000)
        // Written into 24 bytes on the stack, then appended at once.
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            func digits(_ value: Int, _ count: Int, at start: Int) {
                var rest = value
                for index in (start..<(start + count)).reversed() {
                    out[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                    rest /= 10
                }
            }
            digits(Int(year), 4, at: 0); out[4] = UInt8(ascii: "-")
            digits(month, 2, at: 5); out[7] = UInt8(ascii: "-")
            digits(day, 2, at: 8); out[10] = UInt8(ascii: "T")
            digits(secondOfDay / 3_600, 2, at: 11); out[13] = UInt8(ascii: ":")
            digits(secondOfDay / 60 % 60, 2, at: 14); out[16] = UInt8(ascii: ":")
            digits(secondOfDay % 60, 2, at: 17); out[19] = UInt8(ascii: ".")
            digits(fraction, 3, at: 20); out[23] = UInt8(ascii: "Z")
            bytes.append(contentsOf: out)
        }
    }

    /// As `RFC3339.parse`: UTC `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z` here, everything else by `RFC3339`.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { utf8 in fastParse(utf8) } ?? RFC3339.parse(text)
    }

    /// `parse` over UTF-8 bytes, making a string only off the fast path.
    static func parse(utf8 text: UnsafeBufferPointer<UInt8>) -> Date? {
        fastParse(text) ?? RFC3339.parse(String(decoding: text, as: UTF8.self))
    }

    private static func fastParse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard text.count == 20 || (text.count >= 22 && text.count <= 24) else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let digit = Int(text[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
              text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[text.count - 1] == UInt8(ascii: "Z"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              // Before the Gregorian reform Foundation's calendar is Julian: leave those to RFC3339.
              (1_600...9_999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var milliseconds = 0
        if text.count > 20 {
            // ".f", ".ff" or ".fff"
            let digits = text.count - 21
            guard text[19] == UInt8(ascii: "."), let fraction = number(20, digits) else { return nil }
            milliseconds = digits == 1 ? fraction * 100 : digits == 2 ? fraction * 10 : fraction
        }
        let days = days(fromCivil: Int64(year), month, day)
        let total = (days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)) * 1_000 + Int64(milliseconds)
        return Date(timeIntervalSince1970: Double(total) / 1_000)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    private static func days(fromCivil year: Int64, _ month: Int, _ day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = Int64((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (civil_from_days).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
