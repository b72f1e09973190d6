import Foundation
import Shared

/// The published media items as the feed serves them (DESIGN.md, "Media library"): every hash it answers for,
/// an item's own, its variants' and its captions', with the type to answer it with.
struct MediaLibrary: Sendable {
    struct File: Sendable, Equatable {
        let sha256: String
        let contentType: String
        let byteCount: Int
    }

    struct Item: Sendable {
        let original: File
        /// The variants and the original, narrowest first (an original of unknown width last).
        let widths: [(width: Int, file: File)]

        /// `?w=`: the narrowest of the variants and the original at least `width` wide, else the widest (the original).
        func file(width: Int?) -> File {
            guard let width else { return original }
            return widths.first { $0.width >= width }?.file ?? original
        }
    }

    /// By the item's hash.
    private(set) var items: [String: Item] = [:]
    /// By a variant's hash: the variant itself (a variant is served by its own hash too).
    private(set) var variantFiles: [String: File] = [:]
    /// An item's hash by its id (`/v1/changes` names items by id).
    private(set) var hashById: [UUID: String] = [:]

    init() {}

    init(_ states: [MediaState]) {
        for state in states {
            let content = state.content
            let variants = content.variants.sorted { $0.width < $1.width }.map {
                (width: $0.width, file: File(sha256: $0.sha256, contentType: MediaFormat.webp.contentType, byteCount: $0.byteCount))
            }
            let original = File(sha256: content.sha256, contentType: content.format.contentType, byteCount: content.byteCount)
            hashById[state.id] = content.sha256
            items[content.sha256] = Item(original: original, widths: variants + [(width: content.width ?? Int.max, file: original)])
            for variant in variants { variantFiles[variant.file.sha256] = variant.file }
            for (captions, byteCount) in content.captionsFiles {
                variantFiles[captions] = File(sha256: captions, contentType: WebVTT.contentType, byteCount: byteCount)
            }
        }
    }

    /// The file a request names, if published.
    func file(_ sha256: String, width: Int?) -> File? {
        if let item = items[sha256] { return item.file(width: width) }
        return variantFiles[sha256]
    }
}
