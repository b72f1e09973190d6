import Foundation
import NIOCore
import Shared

/// A tour for offline use (DESIGN.md, "Offline tours and changes"): one JSON document holding the bodies the single
/// reads give, byte for byte, and the manifest of the library files it and its stops use.
enum TourBundle {
    struct File: Equatable {
        let sha256: String
        let byteCount: Int
        let contentType: String
        let url: String
    }

    /// The tour's cover, then the library files the stops use, once each: each item's file, then its captions (every language's).
    static func manifest(_ stops: [PoiResources], cover: File? = nil) -> [File] {
        var seen: Set<String> = [], files: [File] = []
        if let cover {
            seen.insert(cover.sha256)
            files.append(cover)
        }
        for media in stops.compactMap(\.media) {
            for item in media.items {
                var candidates = [File(sha256: item.sha256, byteCount: item.byteCount, contentType: item.format.contentType, url: media.url(item.sha256))]
                for (captions, byteCount) in item.captionsFiles {
                    candidates.append(File(sha256: captions, byteCount: byteCount, contentType: WebVTT.contentType, url: media.url(captions)))
                }
                for file in candidates where seen.insert(file.sha256).inserted { files.append(file) }
            }
        }
        return files
    }

    static func json(tour: RenderedResource, stops: [PoiResources], language: ContentLanguage, manifest: [File]) -> [UInt8] {
        let details = stops.map { $0.detail(language).identity }, pages = stops.map { $0.page(language).identity }
        var json = JSONWriter(capacity: 256 + tour.identity.readableBytes + (details + pages).reduce(0) { $0 + $1.readableBytes + 64 })
        json.beginObject()
        json.key("language"); json.string(language.tag)
        json.key("media")
        json.objects(manifest) { json, file in
            json.key("byteCount"); json.number(file.byteCount)
            json.key("sha256"); json.string(file.sha256)
            json.key("type"); json.string(file.contentType)
            json.key("url"); json.string(file.url)
        }
        json.key("pages")
        json.beginArray()
        for (stop, page) in zip(stops, pages) {
            json.beginObject()
            json.key("html"); json.string(String(buffer: page))
            json.key("poiId"); json.uuid(stop.id)
            json.endObject()
        }
        json.endArray()
        json.key("pois")
        json.beginArray()
        for detail in details { json.raw(Array(buffer: detail)) }
        json.endArray()
        json.key("tour"); json.raw(Array(buffer: tour.identity))
        json.endObject()
        return json.bytes
    }
}
