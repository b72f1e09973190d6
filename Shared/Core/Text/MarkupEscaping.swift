/// Text for HTML or XML element content and double-quoted attribute values: `& < > " '` become
/// references, and scalars `keeps` refuses are dropped (what the target format cannot carry).
/// The admin pages, the feed's POI page and its legacy XML each pass their own rules.
public enum MarkupEscaping {
    public static func escape(_ text: String, apostrophe: String = "&#39;", keeps: (Unicode.Scalar) -> Bool = { _ in true }) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += apostrophe
            default: if keeps(scalar) { escaped.unicodeScalars.append(scalar) }
            }
        }
        return escaped
    }

    /// Text for XML 1.0 (the legacy feeds, translation files): the characters XML 1.0 cannot carry at all are dropped.
    public static func xml(_ text: String) -> String {
        escape(text, apostrophe: "&apos;") { scalar in
            let value = scalar.value
            return value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || value >= 0x10000
        }
    }
}
