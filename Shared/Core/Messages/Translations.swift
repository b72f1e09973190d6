/// Texts in the languages a site offers besides its own (DESIGN.md "Languages"): language tag → field → text.
/// The content's own fields hold the site language's text, so a reader that knows nothing of translations reads
/// the site language.
public typealias Translations = [String: [String: String]]

/// BCP 47 language tags as phones and staff give them (`es`, `pt-BR`, `zh-Hant`), compared case-insensitively.
public enum LanguageTag {
    public static let maxBytes = 35

    /// A primary subtag of 2–8 letters, then subtags of 1–8 letters or digits, joined by `-`; at most 35 bytes.
    public static func isWellFormed(_ tag: some StringProtocol) -> Bool {
        let bytes = Array(tag.utf8)
        guard (2...maxBytes).contains(bytes.count) else { return false }
        let subtags = bytes.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard let primary = subtags.first, (2...8).contains(primary.count), primary.allSatisfy(isLetter) else { return false }
        return subtags.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { isLetter($0) || isDigit($0) } }
    }

    /// BCP 47's conventional case: the language lower-case, a script title-case, a region upper-case (`pt-BR`, `zh-Hant`).
    public static func canonical(_ tag: String) -> String {
        tag.split(separator: "-", omittingEmptySubsequences: false).enumerated().map { index, subtag in
            guard index > 0 else { return subtag.lowercased() }
            switch subtag.count {
            case 2: return subtag.uppercased()
            case 4: return subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased()
            default: return subtag.lowercased()
            }
        }.joined(separator: "-")
    }

    public static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }

    /// Right-to-left scripts' languages: the POI page's `dir="rtl"`.
    public static func isRightToLeft(_ tag: String) -> Bool {
        let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return ["ar", "he", "fa", "ur", "yi", "ps", "sd", "ckb", "dv"].contains(primary)
    }

    /// `SITE_LANGUAGES`-style text (`en, es`): the tags in order, each once; nil when one is malformed.
    public static func list(_ text: String) -> [String]? {
        var tags: [String] = []
        for part in text.split(separator: ",") {
            let tag = part.trimmingCharacters(in: .whitespaces)
            guard isWellFormed(tag) else { return nil }
            if !tags.contains(where: { equal($0, tag) }) { tags.append(tag) }
        }
        return tags
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte }
    private static func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower(byte)) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}

/// One translatable field of a content type: its JSON name and where the content keeps its site-language text.
public struct TranslatableField<Content> {
    /// What a field's translation holds.
    public enum Role: Sendable {
        /// Text a translator writes.
        case text
        /// A file of that language (a narration, captions): its sha256, chosen on the item's form, not by a translator.
        case file
        /// A file's size, as decimal text: translated with its file, never missing on its own.
        case fileSize
    }

    public let name: String
    public let role: Role
    let read: (Content) -> String?
    let write: (inout Content, String?) -> Void

    public init(_ name: String, _ path: WritableKeyPath<Content, String>) {
        self.name = name
        role = .text
        read = { $0[keyPath: path] }
        write = { $0[keyPath: path] = $1 ?? "" }
    }

    public init(_ name: String, _ path: WritableKeyPath<Content, String?>, role: Role = .text) {
        self.name = name
        self.role = role
        read = { $0[keyPath: path] }
        write = { $0[keyPath: path] = $1 }
    }

    /// A list of short texts (a POI's pictures' alt texts), one line each in translations: an empty or missing line leaves
    /// that item's site-language text.
    public init(lines name: String, _ path: WritableKeyPath<Content, [String]>) {
        self.name = name
        role = .text
        read = { content in
            let lines = content[keyPath: path]
            return lines.allSatisfy(\.isEmpty) ? nil : lines.joined(separator: "\n")
        }
        write = { content, text in
            guard let text else { return }
            var lines = content[keyPath: path]
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { continue }
                if index >= lines.count { lines += Array(repeating: "", count: index - lines.count + 1) }
                lines[index] = trimmed
            }
            content[keyPath: path] = lines
        }
    }

    /// A file's size, kept as its decimal text in translations; text that is not a number reads as none.
    public init(fileSize name: String, _ path: WritableKeyPath<Content, Int?>) {
        self.name = name
        role = .fileSize
        read = { $0[keyPath: path].map(String.init) }
        write = { $0[keyPath: path] = $1.flatMap { Int($0) } }
    }
}

/// Content whose texts can be translated: tours, POIs, the records, categories.
public protocol Translatable: Sendable {
    /// The fields a translation may give, each declared once. Computed: key paths are not Sendable.
    static var translatedFields: [TranslatableField<Self>] { get }
    var translations: Translations? { get set }
}

extension Translatable {
    /// The fields a translation may give, as JSON names them.
    public static var translatableFields: [String] { translatedFields.map(\.name) }

    /// The fields a translator writes (not files): what an XLIFF exchange carries.
    public static var textFields: [String] { translatedFields.filter { $0.role == .text }.map(\.name) }

    /// The site language's text of a translatable field.
    public func text(of field: String) -> String? { Self.translatedFields.first { $0.name == field }?.read(self) }

    public mutating func setText(_ text: String?, of field: String) { Self.translatedFields.first { $0.name == field }?.write(&self, text) }

    /// The texts of `language` (any case) where it has them, the site language's elsewhere.
    public func localized(to language: String) -> Self {
        guard let texts = translated(in: language) else { return self }
        var copy = self
        for field in Self.translatedFields {
            if let text = texts[field.name], !text.isEmpty { field.write(&copy, text) }
        }
        return copy
    }

    /// `language`'s translated texts, nil when it has none.
    public func translated(in language: String) -> [String: String]? {
        guard let translations, !translations.isEmpty else { return nil }
        if let exact = translations[language] { return exact }
        return translations.first { LanguageTag.equal($0.key, language) }?.value
    }

    /// True when `language` has at least one translated field.
    public func hasTranslation(in language: String) -> Bool {
        translated(in: language)?.contains { !$0.value.isEmpty } ?? false
    }

    /// The site language, then each other offered language with at least one translated field, in `offered` order.
    public func languages(site: String, offered: [String]) -> [String] {
        [site] + offered.filter { !LanguageTag.equal($0, site) && hasTranslation(in: $0) }
    }

    /// The translatable fields `language` leaves to the site language (among those the site language has text in).
    public func untranslatedFields(in language: String) -> [String] {
        let texts = translated(in: language) ?? [:]
        return Self.translatedFields.filter { field in field.role != .fileSize && !(field.read(self) ?? "").isEmpty && (texts[field.name] ?? "").isEmpty }
            .map(\.name)
    }

    /// Translations as they are kept: tags in their conventional case (`ES` and `es` are one language), empty texts and
    /// languages without any text dropped, nil when none is left.
    public static func tidy(_ translations: Translations?) -> Translations? {
        var kept: Translations = [:]
        // The conventionally spelled key first, so its texts win over another spelling's whatever the dictionary's order.
        let ordered = (translations ?? [:]).sorted { a, b in
            let aCanonical = a.key == LanguageTag.canonical(a.key), bCanonical = b.key == LanguageTag.canonical(b.key)
            return aCanonical != bCanonical ? aCanonical : a.key < b.key
        }
        for (language, texts) in ordered {
            let filled = texts.filter { !$0.value.isEmpty }
            guard !filled.isEmpty else { continue }
            kept[LanguageTag.isWellFormed(language) ? LanguageTag.canonical(language) : language, default: [:]].merge(filled) { first, _ in first }
        }
        return kept.isEmpty ? nil : kept
    }
}

extension TourContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("name", \.name), .init("summary", \.summary), .init("purpose", \.purpose), .init("coverImageAlt", \.coverImageAlt)]
    }
}

extension CalendarEntryContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("title", \.title), .init("summary", \.summary), .init("description", \.description)]
    }
}

extension PersonContent: Translatable {
    /// Their title (role) and department: a name is not translated.
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("role", \.role), .init("department", \.department)]
    }
}

extension FeaturedContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("title", \.title), .init("imageAlt", \.imageAlt)]
    }
}

extension MediaContent: Translatable {
    /// Its texts, and its captions: a language's own WebVTT file (its sha256 and size), as a POI's narration is a file.
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("title", \.title), .init("altText", \.altText), .init("transcript", \.transcript), .init("captions", \.captions, role: .file),
         .init(fileSize: "captionsByteCount", \.captionsByteCount)]
    }
}

extension PageContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("title", \.title), .init("summary", \.summary), .init("body", \.body)]
    }
}

extension CategoryContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] { [.init("name", \.name)] }
}

extension CategoryState: Translatable {
    public static var translatedFields: [TranslatableField<Self>] { [.init("name", \.name)] }
}

extension PoiContent: Translatable {
    public static var translatedFields: [TranslatableField<Self>] {
        [.init("name", \.name), .init("summary", \.summary), .init("description", \.description), .init("accessibility", \.accessibility),
         .init("narration", \.narration, role: .file), .init(lines: "pictureAlts", \.pictureAlts)]
    }
}
