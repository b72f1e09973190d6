import Foundation

// Media library items' messages (DESIGN.md, "Media library"): catalog records of kind `media`; the bytes are in the
// media store under `sha256`.

/// A file in the media library.
public struct MediaContent: CatalogRecordContent {
    public static var recordKind: String { "media" }
    public static var eventRecordKey: StaticString { "media" }
    public static var commandField: String { "media" }
    public static var commandContent: WritableKeyPath<CatalogCommand, Self?> { \.media }
    public static var resultState: WritableKeyPath<CatalogCommandResult, MediaState?> { \.media }

    /// A smaller copy of an image, made at upload.
    public struct Variant: Codable, Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var sha256: String
        public var byteCount: Int

        public init(width: Int, height: Int, sha256: String, byteCount: Int) {
            self.width = width
            self.height = height
            self.sha256 = sha256
            self.byteCount = byteCount
        }
    }

    public var sha256: String
    public var format: MediaFormat
    public var byteCount: Int
    /// The name it was uploaded under.
    public var fileName: String
    public var title: String
    /// What an image shows, for people who cannot see it.
    public var altText: String?
    public var width: Int?
    public var height: Int?
    /// WebP copies of an image (320, 640 and 1280 px wide, never wider than the original), narrowest first.
    public var variants: [Variant]
    /// The sha256 of a WebVTT file of captions for audio or video (DESIGN.md, "Accessibility and stops").
    public var captions: String?
    /// The captions file's size.
    public var captionsByteCount: Int?
    /// What an audio or video file says, as text.
    public var transcript: String?
    /// Its title, alternative text and transcript in other languages (DESIGN.md "Languages"); nil when none.
    public var translations: Translations?

    public static let maxTranscriptCharacters = 50_000

    public init(sha256: String, format: MediaFormat, byteCount: Int, fileName: String, title: String, altText: String? = nil,
                width: Int? = nil, height: Int? = nil, variants: [Variant] = [], captions: String? = nil, captionsByteCount: Int? = nil,
                transcript: String? = nil, translations: Translations? = nil) {
        self.sha256 = sha256
        self.format = format
        self.byteCount = byteCount
        self.fileName = fileName
        self.title = title
        self.altText = altText
        self.width = width
        self.height = height
        self.variants = variants
        self.captions = captions
        self.captionsByteCount = captionsByteCount
        self.transcript = transcript
        self.translations = Self.tidy(translations)
    }

    private enum CodingKeys: String, CodingKey {
        case sha256, format, byteCount, fileName, title, altText, width, height, variants, captions, captionsByteCount, transcript, translations
    }

    /// Through `init`, as the codec's reader: translations are tidied the same way whichever reads them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(sha256: try c.decode(String.self, forKey: .sha256), format: try c.decode(MediaFormat.self, forKey: .format),
                  byteCount: try c.decode(Int.self, forKey: .byteCount), fileName: try c.decode(String.self, forKey: .fileName),
                  title: try c.decode(String.self, forKey: .title), altText: try c.decodeIfPresent(String.self, forKey: .altText),
                  width: try c.decodeIfPresent(Int.self, forKey: .width), height: try c.decodeIfPresent(Int.self, forKey: .height),
                  variants: try c.decode([Variant].self, forKey: .variants), captions: try c.decodeIfPresent(String.self, forKey: .captions),
                  captionsByteCount: try c.decodeIfPresent(Int.self, forKey: .captionsByteCount),
                  transcript: try c.decodeIfPresent(String.self, forKey: .transcript),
                  translations: try c.decodeIfPresent(Translations.self, forKey: .translations))
    }

    /// Its captions files, the site language's first, then each translation's (by language), once each: (sha256, size).
    public var captionsFiles: [(sha256: String, byteCount: Int)] {
        var files: [(sha256: String, byteCount: Int)] = captions.map { [($0, captionsByteCount ?? 0)] } ?? []
        for language in (translations ?? [:]).keys.sorted() {
            guard let texts = translations?[language], let hash = texts["captions"], !files.contains(where: { $0.sha256 == hash }) else { continue }
            files.append((hash, texts["captionsByteCount"].flatMap { Int($0) } ?? 0))
        }
        return files
    }

    /// Why a phone user who cannot hear it could not follow this audio or video, if so: audio needs captions or a
    /// transcript, video captions. Nil for images (their alt text is checked where they are used).
    public var accessibilityGap: String? {
        switch format.kind {
        case .image: nil
        case .audio: captions == nil && (transcript ?? "").isEmpty ? "has neither captions nor a transcript" : nil
        case .video: captions == nil ? "has no captions" : nil
        }
    }
}

public typealias MediaState = CatalogRecordState<MediaContent>
public typealias MediaEvent = CatalogRecordEvent<MediaContent>
