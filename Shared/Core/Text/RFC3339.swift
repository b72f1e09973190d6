import Foundation

/// RFC 3339 timestamps in UTC with milliseconds: the suite's one reader and writer of them. Formatting and
/// parsing are exact inverses at millisecond precision (Foundation's ISO 8601 style alone can drift by a
/// millisecond per round trip).
///
/// The suite's own form, `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z` in years 1600–9999, is read and written here
/// without Foundation: the feed and analytics handle tens of thousands a second, and `String(format:)` and
/// `ISO8601FormatStyle` dominated their profiles. Anything else (offsets other than Z, more fraction
/// digits, other years) goes to Foundation, with the same result.
public enum RFC3339 {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `format(date)`'s UTF-8, appended.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxLength) { scratch in
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<write(date, to: scratch.baseAddress!)]))
        }
    }

    /// The most bytes `write` writes (years outside 0–9999 take more than 24).
    public static let maxLength = 40

    /// `format(date)`'s UTF-8 written to `out`, which has room for `maxLength` bytes; returns how many
    /// it wrote.
    public static func write(_ date: Date, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let seconds = floorDivide(milliseconds, 1_000)
        let days = floorDivide(seconds, 86_400)
        let (year, month, day) = CivilDate.civil(fromDays: Int(days))
        let secondOfDay = Int(seconds - days * 86_400), fraction = Int(milliseconds - seconds * 1_000)
        guard (0...9_999).contains(year) else {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                              Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction)
            return text.withUTF8 { utf8 in
                // Int64 milliseconds bound the year to about ±2.9e8: at most 30 bytes.
                precondition(utf8.count <= maxLength, "RFC3339.write: \(utf8.count) bytes for one date")
                out.initialize(from: utf8.baseAddress!, count: utf8.count)
                return utf8.count
            }
        }
        let raw = UnsafeMutableRawBufferPointer(start: out, count: 24)
        writeDateTime(year: year, month: month, day: day, secondOfDay: secondOfDay, to: raw)
        raw[19] = UInt8(ascii: ".")
        writeDigits(fraction, 3, at: 20, to: raw); raw[23] = UInt8(ascii: "Z")
        return 24
    }

    /// `YYYY-MM-DDTHH:MM:SS` into the first 19 bytes of `out`.
    private static func writeDateTime(year: Int, month: Int, day: Int, secondOfDay: Int, to out: UnsafeMutableRawBufferPointer) {
        writeDigits(year, 4, at: 0, to: out); out[4] = UInt8(ascii: "-")
        writeDigits(month, 2, at: 5, to: out); out[7] = UInt8(ascii: "-")
        writeDigits(day, 2, at: 8, to: out); out[10] = UInt8(ascii: "T")
        writeDigits(secondOfDay / 3_600, 2, at: 11, to: out); out[13] = UInt8(ascii: ":")
        writeDigits(secondOfDay / 60 % 60, 2, at: 14, to: out); out[16] = UInt8(ascii: ":")
        writeDigits(secondOfDay % 60, 2, at: 17, to: out)
    }

    private static func writeDigits(_ value: Int, _ count: Int, at start: Int, to out: UnsafeMutableRawBufferPointer) {
        var rest = value
        for index in (start..<(start + count)).reversed() {
            out[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
            rest /= 10
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS±HH:MM`: the local time `offsetSeconds` from UTC, whole seconds (a calendar event's
    /// time as its zone writes it). Years outside 0–9999 are written by Foundation.
    public static func formatLocal(_ date: Date, offsetSeconds: Int) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down)) + Int64(offsetSeconds)
        let days = floorDivide(seconds, 86_400)
        let (year, month, day) = CivilDate.civil(fromDays: Int(days))
        let secondOfDay = Int(seconds - days * 86_400), offsetMinutes = abs(offsetSeconds) / 60
        guard (0...9_999).contains(year) else {
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d%@%02d:%02d", year, month, day, secondOfDay / 3_600, secondOfDay / 60 % 60,
                          secondOfDay % 60, offsetSeconds < 0 ? "-" : "+", offsetMinutes / 60, offsetMinutes % 60)
        }
        var bytes = [UInt8](repeating: 0, count: 25)
        bytes.withUnsafeMutableBytes { out in
            writeDateTime(year: year, month: month, day: day, secondOfDay: secondOfDay, to: out)
            out[19] = offsetSeconds < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
            writeDigits(offsetMinutes / 60, 2, at: 20, to: out); out[22] = UInt8(ascii: ":")
            writeDigits(offsetMinutes % 60, 2, at: 23, to: out)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Any RFC 3339 date-time, rounded to the millisecond; nil for anything else.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { utf8 in suiteForm(utf8) } ?? general(text)
    }

    /// `parse` over UTF-8 bytes, making a string only off the fast path.
    public static func parse(utf8 text: UnsafeBufferPointer<UInt8>) -> Date? {
        suiteForm(text) ?? general(String(decoding: text, as: UTF8.self))
    }

    private static func general(_ text: String) -> Date? {
        guard let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text)) else { return nil }
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000).rounded() / 1_000)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z` in 1600–9999, or nil (then Foundation decides).
    private static func suiteForm(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
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
              // Before the Gregorian reform Foundation's calendar is Julian: leave those to it.
              (1_600...9_999).contains(year), (1...12).contains(month), (1...CivilDate.daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var milliseconds = 0
        if text.count > 20 {
            // ".f", ".ff" or ".fff"
            let digits = text.count - 21
            guard text[19] == UInt8(ascii: "."), let fraction = number(20, digits) else { return nil }
            milliseconds = digits == 1 ? fraction * 100 : digits == 2 ? fraction * 10 : fraction
        }
        let days = Int64(CivilDate.daysFromCivil(year: year, month: month, day: day))
        let total = (days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)) * 1_000 + Int64(milliseconds)
        return Date(timeIntervalSince1970: Double(total) / 1_000)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}

/// Proleptic Gregorian calendar arithmetic in days since 1970-01-01 (Howard Hinnant's algorithms).
public enum CivilDate {
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// days_from_civil.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// civil_from_days, the inverse of `daysFromCivil`.
    public static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
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
