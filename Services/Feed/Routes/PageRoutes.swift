import Foundation
import Hummingbird
import Shared

/// Content pages' reads (DESIGN.md, "Pages"): published pages only.
enum PageRoutes {
    /// `GET /v1/pages`: every page in order, without its text.
    static func list(_ request: Request, _: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        var json = JSONWriter(capacity: 64 + snapshot.pages.ordered.count * 200)
        json.beginObject()
        json.key("language"); json.string(language.tag)
        json.key("pages")
        json.objects(snapshot.pages.ordered) { json, entry in writeSummary(entry, in: language, of: snapshot.languages, to: &json) }
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// `GET /v1/pages/{slug}`: the page with its text as HTML.
    static func page(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let entry = try self.entry(parameter, snapshot)
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        let html = html(of: entry, in: language)
        var json = JSONWriter(capacity: 256 + html.utf8.count)
        json.beginObject()
        json.key("html"); json.string(html)
        json.key("language"); json.string(language.tag)
        writeSummary(entry, in: language, of: snapshot.languages, to: &json)
        json.key("version"); json.number(entry.state.version)
        json.endObject()
        return DynamicResponse.make(json.bytes, contentType: MediaTypes.json, request: request, language: language)
    }

    /// The page's text as HTML in `language`: rendered once for the site's language, per answer for a translated text
    /// (pages are few and asked for seldom).
    private static func html(of entry: PagesListing.Entry, in language: ContentLanguage) -> String {
        guard !language.isSite, let body = entry.content.translated(in: language.tag)?["body"], !body.isEmpty else { return entry.html }
        return PageMarkdown.html(body)
    }

    /// `GET /v1/pages/{slug}/page`: the page for the app's embedded browser.
    static func phonePage(_ request: Request, _ parameter: Substring, _ snapshot: FeedSnapshot, _: FeedSite) throws -> Response {
        let entry = try self.entry(parameter, snapshot)
        let language = try LanguageNegotiation.choose(request, among: snapshot.languages)
        var state = entry.state
        if !language.isSite { state.content = state.content.localized(to: language.tag) }
        return DynamicResponse.make(PagePage.render(state, html: html(of: entry, in: language), language: language.tag), contentType: MediaTypes.html,
                                    request: request, extraHeaders: PoiPage.headers, language: language)
    }

    /// What the list and search show of a page (and the page itself, with its text), in `language`.
    static func writeSummary(_ entry: PagesListing.Entry, in language: ContentLanguage, of languages: SiteLanguages, to json: inout JSONWriter) {
        let content = language.isSite ? entry.content : entry.content.localized(to: language.tag)
        json.key("id"); json.uuid(entry.state.id)
        json.key("languages"); json.strings(content.languages(site: languages.site, offered: languages.offered))
        json.key("order"); json.number(content.order)
        json.key("slug"); json.string(content.slug)
        json.key("summary"); json.string(content.summary)
        json.key("title"); json.string(content.title)
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
