import Foundation

// Media library items' messages (DESIGN.md, "Media library"): catalog records of kind `media`; the bytes are in the
// media store under `sha256`.

/// A file in the media library.
public struct MediaContent: CatalogRecordContent {
    public static var recordKind: String { "media" }
    public static var eventRecordKey: String { "media" }

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

    public init(sha256: String, format: MediaFormat, byteCount: Int, fileName: String, title: String, altText: String? = nil,
                width: Int? = nil, height: Int? = nil, variants: [Variant] = []) {
        self.sha256 = sha256
        self.format = format
        self.byteCount = byteCount
        self.fileName = fileName
        self.title = title
        self.altText = altText
        self.width = width
        self.height = height
        self.variants = variants
    }
}

public typealias MediaState = CatalogRecordState<MediaContent>
public typealias MediaEvent = CatalogRecordEvent<MediaContent>
