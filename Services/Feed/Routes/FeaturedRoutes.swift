import Foundation
import Hummingbird
import Shared

/// `GET /v1/featured` (DESIGN.md, "Featured"): the home screen's items in order, each only while what it shows is on
/// the feed, named as that is unless the item has its own title.
enum FeaturedRoutes {
    static func list(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let shown = snapshot.featured.ordered.compactMap { item in target(of: item.content, in: snapshot).map { (item.state, $0) } }
        var json = JSONWriter(capacity: 64 + shown.count * 320)
        json.beginObject()
        json.key("featured")
        json.objects(shown) { json, entry in write(entry.0, showing: entry.1, to: &json) }
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request)
    }

    /// `GET /v1/featured/{id}`: one item, by its own id, as the list shows it (what `/v1/changes` links to).
    static func entry(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let id = try PathParameter.uuid(parameter, naming: "a featured item")
        guard let item = snapshot.featured.byId[id]?.state, let target = target(of: item.content, in: snapshot) else {
            throw Problem.notFound("no featured item shown has id \(id.uuidString)")
        }
        var json = JSONWriter(capacity: 320)
        json.beginObject()
        write(item, showing: target, to: &json)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request)
    }

    private static func write(_ item: FeaturedState, showing target: (name: String, summary: String, slug: String?), to json: inout JSONWriter) {
        json.key("featuredId"); json.uuid(item.id)
        json.key("id"); json.uuid(item.content.targetId)
        json.key("imageAlt"); json.string(item.content.imageAlt)
        json.key("imageUrl"); json.string(item.content.imageUrl)
        json.key("kind"); json.string(item.content.targetKind.rawValue)
        json.key("order"); json.number(item.content.order)
        if let slug = target.slug { json.key("slug"); json.string(slug) }
        json.key("summary"); json.string(target.summary)
        json.key("title"); json.string(item.content.title ?? target.name)
    }

    /// What the item shows, when it is on the feed.
    static func target(of item: FeaturedContent, in snapshot: FeedSnapshot) -> (name: String, summary: String, slug: String?)? {
        switch item.targetKind {
        case .tour: snapshot.tours[item.targetId].map { ($0.name, $0.summary, nil) }
        case .poi: snapshot.pois[item.targetId].map { ($0.name, $0.summary, nil) }
        case .event: snapshot.calendar.byId[item.targetId].map { ($0.content.title, $0.content.summary, nil) }
        case .page: snapshot.pages.byId[item.targetId].map { ($0.content.title, $0.content.summary, $0.content.slug) }
        }
    }
}
