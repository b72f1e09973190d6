import Foundation

/// Case and accent folding for search: "Musée Café" and "MUSEE cafe" fold to the same bytes. Names,
/// summaries, buildings and queries all go through `fold`, so matching is a plain byte substring test.
enum TextFolding {
    /// The folded text as UTF-8: lowercased, diacritics and width variants removed, letters without a
    /// decomposition (ø, ł, æ, ß…) spelled the way people type them, control characters dropped and
    /// whitespace runs collapsed to one space.
    static func fold(_ text: String) -> [UInt8] {
        var output = CollapsedBytes(capacity: text.utf8.count)
        // Catalog text is ASCII and Latin letters: each folds on its own, by table; anything else takes the whole
        // text through Foundation (`foldedByFoundation`), which `IndexTests` holds the table to.
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(truncatingIfNeeded: value)
                output.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            } else if value < latinTableEnd, let folded = latinTable[Int(value) - 0x80] {
                // No entry holds whitespace or a control character, so appending one byte at a time collapses as the whole would.
                for byte in folded { output.append(byte) }
            } else {
                return foldedByFoundation(text)
            }
        }
        return output.bytes
    }

    /// The end of the scalars the table folds: Latin-1 Supplement and Latin Extended-A and -B.
    private static let latinTableEnd: UInt32 = 0x250
    /// Each scalar from U+0080 to `latinTableEnd` folded alone by Foundation; nil for one whose folding holds
    /// whitespace or a control character, which then takes the whole text through Foundation.
    private static let latinTable: [[UInt8]?] = (UInt32(0x80)..<latinTableEnd).map { value in
        guard let scalar = Unicode.Scalar(value) else { return nil }
        let folded = foldedScalars(String(scalar))
        return folded.contains { $0 <= 0x20 || $0 == 0x7F } ? nil : folded
    }

    /// `fold` by Foundation's folding, for any text.
    static func foldedByFoundation(_ text: String) -> [UInt8] {
        let folded = foldedScalars(text)
        var output = CollapsedBytes(capacity: folded.count)
        for byte in folded { output.append(byte) }
        return output.bytes
    }

    /// The text folded scalar by scalar, whitespace not yet collapsed.
    private static func foldedScalars(_ text: String) -> [UInt8] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(folded.utf8.count)
        for scalar in folded.unicodeScalars {
            if let replacement = letterReplacements[scalar] {
                bytes.append(contentsOf: replacement.utf8)
            } else if scalar.properties.generalCategory == .nonspacingMark {
                continue
            } else if scalar.properties.changesWhenLowercased {
                bytes.append(contentsOf: scalar.properties.lowercaseMapping.utf8)
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// Letters that folding keeps as they are but a visitor types without the stroke or ligature.
    private static let letterReplacements: [Unicode.Scalar: String] = [
        "ø": "o", "Ø": "o", "ł": "l", "Ł": "l", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ß": "ss",
        "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th", "ı": "i",
    ]

    /// Bytes appended with control characters and whitespace runs turned into one space, none at either end.
    private struct CollapsedBytes {
        private(set) var bytes: [UInt8] = []
        private var pendingSpace = false

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func append(_ byte: UInt8) {
            if byte <= 0x20 || byte == 0x7F {
                pendingSpace = true
                return
            }
            if pendingSpace && !bytes.isEmpty { bytes.append(0x20) }
            pendingSpace = false
            bytes.append(byte)
        }
    }

    /// Whether a folded category path is `category` (folded) or lies under it: "shop" holds "shop/fashion", not "shopping".
    static func isPath(_ path: [UInt8], within category: [UInt8]) -> Bool {
        path.count >= category.count && path.starts(with: category) && (path.count == category.count || path[category.count] == UInt8(ascii: "/"))
    }
}
