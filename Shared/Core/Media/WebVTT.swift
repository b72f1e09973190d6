import Foundation

/// Captions in WebVTT (W3C), as staff paste them for a library item's audio or video (DESIGN.md, "Accessibility
/// and stops"). Checked only as far as a player needs: the signature and at least one cue timing.
public enum WebVTT {
    public static let contentType = "text/vtt; charset=utf-8"
    public static let maxBytes = 256_000

    /// Why the text is not WebVTT captions, or nil when it is.
    public static func problem(_ text: String) -> String? {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        guard body.utf8.count <= maxBytes else { return "Captions may be at most 256 KB." }
        guard body.hasPrefix("WEBVTT"), body.dropFirst(6).first.map({ $0 == " " || $0 == "\t" || $0.isNewline }) ?? true else {
            return "Captions must be WebVTT: the first line is WEBVTT."
        }
        let hasCue = body.split(whereSeparator: \.isNewline).contains { line in
            guard let arrow = line.range(of: "-->") else { return false }
            return isTimestamp(line[..<arrow.lowerBound].trimmingCharacters(in: .whitespaces))
                && isTimestamp(line[arrow.upperBound...].trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? "")
        }
        return hasCue ? nil : "Captions hold no cue: give at least one timing line such as 00:00.000 --> 00:02.500 followed by its text."
    }

    /// `mm:ss.ttt` or `hh:mm:ss.ttt`.
    static func isTimestamp(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), let last = parts.last else { return false }
        let seconds = last.split(separator: ".", omittingEmptySubsequences: false)
        guard seconds.count == 2, seconds[0].count == 2, seconds[1].count == 3 else { return false }
        let digits = parts.dropLast() + seconds
        return digits.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
            && parts.dropLast().dropFirst(parts.count == 3 ? 1 : 0).allSatisfy { $0.count == 2 }
    }
}
