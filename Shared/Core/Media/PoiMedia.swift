import Foundation

/// The library files a POI uses (pictures, links, narration: `MediaHash.named(in:)`), as phones get them
/// (DESIGN.md, "Accessibility and stops"): for its feed JSON, its page and a tour's bundle. Only published items;
/// a POI that names none has no `PoiMedia`.
public final class PoiMedia: Sendable {
    /// `{FEED_PUBLIC_URL}/v1/media/`.
    public let baseURL: String
    /// The items, in the order the POI names them.
    public let items: [MediaContent]

    public init(baseURL: String, items: [MediaContent]) {
        self.baseURL = baseURL
        self.items = items
    }

    /// The POI's media, looked up by hash; nil when it names none that is published.
    public static func of(_ content: PoiContent, feedPublicURL: String, lookup: (String) -> MediaContent?) -> PoiMedia? {
        let items = MediaHash.named(in: content).compactMap(lookup)
        return items.isEmpty ? nil : PoiMedia(baseURL: "\(feedPublicURL)/v1/media/", items: items)
    }

    /// The same files linked from another base: the feed's POI page links them relatively (`PoiPage.relativeMediaBase`).
    public func linked(from baseURL: String) -> PoiMedia { PoiMedia(baseURL: baseURL, items: items) }

    /// The same files with their texts in `language` where they have them (DESIGN.md "Languages"); itself when none has.
    public func localized(to language: String) -> PoiMedia {
        guard items.contains(where: { $0.translations != nil }) else { return self }
        return PoiMedia(baseURL: baseURL, items: items.map { $0.localized(to: language) })
    }

    public func item(_ sha256: String) -> MediaContent? { items.first { $0.sha256 == sha256 } }

    public func url(_ sha256: String) -> String { baseURL + sha256 }

    /// What picture `index` shows: the POI's own alt text, else its library item's.
    public func alt(ofPicture index: Int, in content: PoiContent) -> String? {
        content.ownAlt(ofPicture: index) ?? MediaHash.named(inURL: content.pictures[index]).flatMap { item($0)?.altText }
    }

    /// The audio and video a visitor can play: the narration first, then the linked files, each once.
    public func playable(in content: PoiContent) -> [MediaContent] {
        let hashes = [content.narration].compactMap { $0 } + content.links.compactMap { MediaHash.named(inURL: $0.url) }
        var seen: Set<String> = []
        return hashes.compactMap { hash in
            guard seen.insert(hash).inserted, let item = item(hash), item.format.kind != .image else { return nil }
            return item
        }
    }
}
