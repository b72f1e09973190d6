import Foundation
import Hummingbird
import Shared

/// `GET /v1/featured` (DESIGN.md, "Featured"): the home screen's items in order, each only while what it shows is on
/// the feed, named as that is unless the item has its own title.
enum FeaturedRoutes {
    static func list(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        let shown = snapshot.featured.ordered.compactMap { item in target(of: item.content, in: snapshot, language: language).map { (item.state, $0) } }
        var json = JSONWriter(capacity: 64 + shown.count * 320)
        json.beginObject()
        json.key("featured")
        json.objects(shown) { json, entry in write(entry.0, showing: entry.1, in: language, to: &json) }
        json.key("language"); json.string(language.tag)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// `GET /v1/featured/{id}`: one item, by its own id, as the list shows it (what `/v1/changes` links to).
    static func entry(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let id = try PathParameter.uuid(parameter, naming: "a featured item")
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        guard let item = snapshot.featured.byId[id]?.state, let target = target(of: item.content, in: snapshot, language: language) else {
            throw Problem.notFound("no featured item shown has id \(id.uuidString)")
        }
        var json = JSONWriter(capacity: 320)
        json.beginObject()
        write(item, showing: target, in: language, to: &json)
        json.key("language"); json.string(language.tag)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    private static func write(_ item: FeaturedState, showing target: (name: String, summary: String, slug: String?), in language: ContentLanguage,
                              to json: inout JSONWriter) {
        let content = language.isSite ? item.content : item.content.localized(to: language.tag)
        json.key("featuredId"); json.uuid(item.id)
        json.key("id"); json.uuid(content.targetId)
        json.key("imageAlt"); json.string(content.imageAlt)
        json.key("imageUrl"); json.string(item.content.imageUrl)
        json.key("kind"); json.string(item.content.targetKind.rawValue)
        json.key("order"); json.number(item.content.order)
        if let slug = target.slug { json.key("slug"); json.string(slug) }
        json.key("summary"); json.string(target.summary)
        json.key("title"); json.string(content.title ?? target.name)
    }

    /// What the item shows, when it is on the feed, named in `language`.
    static func target(of item: FeaturedContent, in snapshot: FeedSnapshot, language: ContentLanguage) -> (name: String, summary: String, slug: String?)? {
        switch item.targetKind {
        case .tour: return snapshot.tours[item.targetId].map { tour in
            let translated = tour.translatedTexts(in: language)
            return (translated["name"] ?? tour.name, translated["summary"] ?? tour.summary, nil)
        }
        case .poi: return snapshot.pois[item.targetId].map { poi in
            let translated = poi.translatedTexts(in: language)
            return (translated["name"] ?? poi.name, translated["summary"] ?? poi.summary, nil)
        }
        case .event: return snapshot.calendar.byId[item.targetId].map { entry in
            let translated = entry.content.texts(in: language)
            return (translated["title"] ?? entry.content.title, translated["summary"] ?? entry.content.summary, nil)
        }
        case .page: return snapshot.pages.byId[item.targetId].map { page in
            let translated = page.content.texts(in: language)
            return (translated["title"] ?? page.content.title, translated["summary"] ?? page.content.summary, page.content.slug)
        }
        }
    }
}
