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
}
