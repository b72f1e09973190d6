import Foundation

/// Limits and checks every service applies to text it takes: in one place, so catalog's validation, the
/// calendar's and the pages that render links agree.
public enum TextRules {
    /// Bytes allowed per character of a limit: a character of one scalar never takes more, so ordinary text within
    /// its character limit is always within its byte limit, while a "character" built of thousands of combining
    /// marks (one to a person, kilobytes to Postgres) is refused before it reaches an index.
    public static let bytesPerCharacter = 4

    /// Whether `value` has more than `max` characters or more than `bytesPerCharacter × max` UTF-8 bytes. A text of
    /// at most `max` bytes (nearly every one) is not counted: counting characters walks grapheme breaks.
    public static func exceeds(_ value: some StringProtocol, characters max: Int) -> Bool {
        let bytes = value.utf8.count
        return bytes > bytesPerCharacter * max || bytes > max && value.count > max
    }

    /// The field error for a text over its limit, naming bytes when the bytes were the limit reached.
    public static func tooLong(_ label: String, characters max: Int, _ value: some StringProtocol) -> String {
        value.count > max ? "\(label) must be at most \(max) characters"
            : "\(label) must be at most \(max) characters (\(bytesPerCharacter * max) bytes)"
    }

    /// An absolute http or https URL with a host, of at most `maxURLBytes`, with no whitespace or control
    /// character anywhere (RFC 3986 allows neither; a CR LF in a link would start a new line in an iCalendar
    /// file, and a space is where a URL ends for every reader that finds links in text).
    public static func isWebURL(_ text: String) -> Bool {
        guard text.utf8.count <= maxURLBytes, !hasWhitespaceOrControl(text), let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty else { return false }
        return true
    }

    public static let maxURLBytes = 2_048

    /// Whether the text holds white space (ASCII or Unicode, line and paragraph separators included) or a control
    /// character (C0, DEL, C1).
    public static func hasWhitespaceOrControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            scalar.value <= 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.isWhitespace
                || scalar.properties.generalCategory == .lineSeparator || scalar.properties.generalCategory == .paragraphSeparator
        }
    }
}
