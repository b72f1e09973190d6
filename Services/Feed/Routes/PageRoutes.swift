import Foundation
import Hummingbird
import Shared

/// Content pages' reads (DESIGN.md, "Pages"): published pages only.
enum PageRoutes {
    /// `GET /v1/pages`: every page in order, without its text.
    static func list(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        var json = JSONWriter(capacity: 64 + snapshot.pages.ordered.count * 200)
        json.beginObject()
        json.key("pages")
        json.objects(snapshot.pages.ordered) { json, entry in writeSummary(entry, to: &json) }
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request)
    }

    /// `GET /v1/pages/{slug}`: the page with its text as HTML.
    static func page(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let entry = try self.entry(parameter, snapshot)
        var json = JSONWriter(capacity: 256 + entry.html.utf8.count)
        json.beginObject()
        json.key("html"); json.string(entry.html)
        writeSummary(entry, to: &json)
        json.key("version"); json.number(entry.state.version)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request)
    }

    /// `GET /v1/pages/{slug}/page`: the page for the app's embedded browser.
    static func phonePage(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let entry = try self.entry(parameter, snapshot)
        return DynamicResponse.make(PagePage.render(entry.state, html: entry.html), contentType: MediaTypes.html, request: request,
                                    extraHeaders: PoiPage.headers)
    }

    /// What the list and search show of a page (and the page itself, with its text).
    static func writeSummary(_ entry: PagesListing.Entry, to json: inout JSONWriter) {
        json.key("id"); json.uuid(entry.state.id)
        json.key("order"); json.number(entry.content.order)
        json.key("slug"); json.string(entry.content.slug)
        json.key("summary"); json.string(entry.content.summary)
        json.key("title"); json.string(entry.content.title)
        json.key("updatedAt"); json.date(entry.state.updatedAt)
    }

    /// The page the path names: `/v1/pages/{slug}` or `/v1/pages/{slug}/page`.
    private static func entry(_ slug: Substring, _ snapshot: FeedSnapshot) throws -> PagesListing.Entry {
        let slug = String(slug)
        guard PageContent.isSlug(slug) else {
            throw Problem.badRequest("a page's address is 1 to 100 lower-case letters, digits and hyphens, got \"\(QueryParameters.shown(slug))\"")
        }
        guard let entry = snapshot.pages.byKey[slug] else { throw Problem.notFound("no published page has the address \(slug)") }
        return entry
    }
}
