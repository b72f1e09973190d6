import Crypto
import Foundation

/// The formats the media library takes (DESIGN.md, "Media library"), told apart by their bytes: what a file
/// is does not depend on its name or on what the browser said.
public enum MediaFormat: String, Codable, Sendable, CaseIterable {
    case jpeg, png, webp, mp3, aac, m4a, opus, mp4

    public enum Kind: String, Sendable {
        case image, audio, video
    }

    public var kind: Kind {
        switch self {
        case .jpeg, .png, .webp: .image
        case .mp3, .aac, .m4a, .opus: .audio
        case .mp4: .video
        }
    }

    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .mp3: "audio/mpeg"
        case .aac: "audio/aac"
        case .m4a: "audio/mp4"
        case .opus: "audio/ogg; codecs=opus"
        case .mp4: "video/mp4"
        }
    }

    /// How people name it.
    public var label: String {
        switch self {
        case .jpeg: "JPEG image"
        case .png: "PNG image"
        case .webp: "WebP image"
        case .mp3: "MP3 audio"
        case .aac: "AAC audio"
        case .m4a: "AAC audio (M4A)"
        case .opus: "Opus audio"
        case .mp4: "MP4 video"
        }
    }

    /// The file-name endings that announce this format.
    public var extensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg"]
        case .png: ["png"]
        case .webp: ["webp"]
        case .mp3: ["mp3"]
        case .aac: ["aac"]
        case .m4a: ["m4a"]
        case .opus: ["opus", "ogg", "oga"]
        case .mp4: ["mp4", "m4v"]
        }
    }

    /// The kind a file name announces by its ending, if it is one of ours.
    public static func kind(announcedBy fileName: String) -> Kind? {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        let ending = fileName[fileName.index(after: dot)...].lowercased()
        return allCases.first { $0.extensions.contains(ending) }?.kind
    }

    /// The format these bytes are, from their signature; nil for anything else.
    public static func sniff(_ bytes: [UInt8]) -> MediaFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && bytes[offset..<(offset + prefix.count)].elementsEqual(prefix)
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        // Ogg pages whose first packet is an Opus header.
        if starts(Array("OggS".utf8)), bytes.count >= 36, starts(Array("OpusHead".utf8), at: 28) { return .opus }
        // ISO base media: a `ftyp` box first, whose major brand says what it holds. HEIF and AVIF images,
        // QuickTime and 3GP files share the box and are none of ours.
        if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if brand == "M4A " { return .m4a }
            return mp4Brands.contains(brand) ? .mp4 : nil
        }
        if starts(Array("ID3".utf8)) { return .mp3 }
        // MPEG audio frame sync: 11 set bits. Layer bits 00 is ADTS (AAC); otherwise an MP3 frame.
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 {
            return bytes[1] & 0x06 == 0 ? .aac : .mp3
        }
        return nil
    }

    /// Major brands of MP4 video.
    static let mp4Brands: Set<String> = ["isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "mmp4", "dash"]

    /// What these bytes look like to a person, for a refusal: "text", "a PDF document", "a GIF image"...
    public static func describe(unrecognized bytes: [UInt8]) -> String {
        func starts(_ text: String) -> Bool { bytes.starts(with: Array(text.utf8)) }
        if bytes.isEmpty { return "an empty file" }
        if bytes.count >= 12, bytes[4..<8].elementsEqual(Array("ftyp".utf8)) {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if ["heic", "heix", "mif1", "msf1", "avif"].contains(brand) { return "a HEIF or AVIF image (save it as JPEG)" }
            if brand == "qt  " { return "a QuickTime movie (save it as MP4)" }
            return "a media container of another kind (brand \(brand.trimmingCharacters(in: .whitespaces)))"
        }
        if starts("%PDF") { return "a PDF document" }
        if starts("GIF8") { return "a GIF image" }
        if starts("PK\u{03}\u{04}") { return "a ZIP archive (or an Office document)" }
        if starts("<svg") || starts("<?xml") { return "XML or SVG text" }
        if bytes.prefix(512).allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) || $0 >= 0x80 }) {
            return "text"
        }
        return "a file of another kind"
    }

    /// Every format, as a sentence of labels: "JPEG, PNG or WebP images; MP3, AAC or Opus audio; MP4 video".
    public static let accepted = "JPEG, PNG or WebP images; MP3, AAC or Opus audio; MP4 video"
}

/// A blob's SHA-256 as 64 lower-case hex digits.
public enum MediaHash {
    /// The bytes' SHA-256, as the store names them.
    public static func of(_ bytes: some DataProtocol) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    public static func isValid(_ text: some StringProtocol) -> Bool {
        isValid(utf8: text.utf8)
    }

    /// The check of `isValid`, on bytes.
    private static func isValid(utf8 bytes: some Collection<UInt8>) -> Bool {
        bytes.count == 64 && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The library file a URL names, `…/v1/media/{sha256}` (any host, any query): how content points at the library.
    /// Read as bytes: every POI's pictures and links are looked through as a feed loads a city, and most name none.
    public static func named(inURL url: String) -> String? {
        let utf8 = url.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        let path = utf8[..<end]
        guard path.count > 74 else { return nil }
        let hashStart = path.index(end, offsetBy: -64)
        let hash = path[hashStart...]
        guard path[..<hashStart].suffix(mediaPathPrefix.count).elementsEqual(mediaPathPrefix), isValid(utf8: hash) else { return nil }
        return String(decoding: hash, as: UTF8.self)
    }

    private static let mediaPathPrefix = Array("/v1/media/".utf8)

    /// Every library file the POI names, once each, in the order pictures, links, narration (then each translation's
    /// narration, in its language's tag order: DESIGN.md "Languages").
    public static func named(in content: PoiContent) -> [String] {
        var hashes: [String] = []
        func note(_ hash: String?) {
            if let hash, !hashes.contains(hash) { hashes.append(hash) }
        }
        for picture in content.pictures { note(named(inURL: picture)) }
        for link in content.links { note(named(inURL: link.url)) }
        for narration in narrations(of: content) { note(narration.hash) }
        return hashes
    }

    /// The POI's narrations: its own (field `narration`), then each translation's (`translations.<tag>.narration`).
    public static func narrations(of content: PoiContent) -> [(field: String, hash: String)] {
        let own = content.narration.map { [("narration", $0)] } ?? []
        let translated = (content.translations ?? [:]).sorted { $0.key < $1.key }.compactMap { language, texts in
            texts["narration"].map { ("translations.\(language).narration", $0) }
        }
        return own + translated
    }
}
