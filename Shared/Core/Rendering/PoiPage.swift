import Foundation
import HTTPTypes

/// The POI page for the app's embedded browser (iTour's "POI web view"): one small, self-contained
/// HTML document with large type, the POI's pictures, text, buildings, visiting details and media
/// links. Every piece of content is escaped; only http(s) URLs become links or images. The feed serves
/// it; the admin's tour preview shows drafts through it, so staff see what phones will.
public enum PoiPage {
    /// Sent with the page: nothing but its own inline style and http(s) images may load.
    /// What the page's answers carry beside the usual headers, shared by every POI's page.
    public static let headers: HTTPFields = [.contentSecurityPolicy: contentSecurityPolicy, .xContentTypeOptions: "nosniff"]
    public static let contentSecurityPolicy = "default-src 'none'; img-src 'self' http: https:; media-src 'self' http: https:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

    /// How the feed's page (`/v1/pois/{id}/page`) links library files (DESIGN.md, "Offline tours and changes"): from
    /// the page's address this is `/v1/media/`, and from `pois/{id}/page.html` in an unpacked tour zip it is the zip's
    /// `media/`, so neither the app nor the page needs the feed's address.
    public static let relativeMediaBase = "../../media/"

    static let style = """
        body{font:18px/1.5 -apple-system,system-ui,sans-serif;margin:0 auto;max-width:40em;padding:12px 16px;color:#1d1d1f;background:#fff}\
        h1{font-size:1.6em;line-height:1.2;margin:.3em 0}h2{font-size:1.1em;margin:1.2em 0 .3em}\
        .summary{color:#555;margin-top:0}audio,video{width:100%}figure{margin:1em 0}img{display:block;max-width:100%;height:auto;border-radius:8px;margin:8px 0}\
        ul{padding-left:1.2em}dt{font-weight:600}dd{margin:0 0 .5em}a{color:#0b5cad}\
        .hours th{text-align:left;font-weight:400;padding-right:1em}
        """

    /// A page's document up to its body's heading and summary, in this page's style (content pages share it), in `language`
    /// (`dir="rtl"` for a right-to-left one).
    public static func documentStart(title: String, summary: String, language: String = "en") -> String {
        let direction = LanguageTag.isRightToLeft(language) ? " dir=\"rtl\"" : ""
        var html = "<!DOCTYPE html>\n<html lang=\"\(escape(language))\"\(direction)><head><meta charset=\"utf-8\">"
        html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        html += "<title>\(escape(title))</title><style>\(style)</style></head><body>\n"
        html += "<h1>\(escape(title))</h1>\n"
        if !summary.isEmpty { html += "<p class=\"summary\">\(escape(summary))</p>\n" }
        return html
    }

    /// The page; `media` gives library pictures their alt text and lets library audio and video play with their
    /// captions and transcripts. `language` is the page's, `siteLanguage` the one untranslated texts are in.
    public static func render(_ poi: PoiState, tourNames: [String], media: PoiMedia? = nil, language: String = "en",
                              siteLanguage: String = "en") -> [UInt8] {
        let content = poi.content
        let words = PageWords.of(language)
        var html = documentStart(title: content.name, summary: content.summary, language: language)
        for (index, picture) in content.pictures.enumerated() where TextRules.isWebURL(picture) {
            let alt = media?.alt(ofPicture: index, in: content) ?? content.ownAlt(ofPicture: index) ?? content.name
            // A library picture is linked as `media` links its files, with its query (`?w=`); another site's as given.
            let query = picture.firstIndex(of: "?").map { String(picture[$0...]) } ?? ""
            let source = media.flatMap { media in MediaHash.named(inURL: picture).flatMap { media.item($0) == nil ? nil : media.url($0) + query } } ?? picture
            html += "<img src=\"\(escape(source))\" alt=\"\(escape(alt))\" loading=\"lazy\">\n"
        }
        if let media {
            for item in media.playable(in: content) {
                html += player(item, media: media, isNarration: item.sha256 == content.narration, words: words,
                               captionsLanguage: item.translated(in: language)?["captions"] == nil ? siteLanguage : language)
            }
        }
        for paragraph in paragraphs(content.description) {
            html += "<p>\(escape(paragraph))</p>\n"
        }
        if !content.buildings.isEmpty {
            html += "<h2>\(words.buildings)</h2><ul>"
            for building in content.buildings { html += "<li>\(escape(building))</li>" }
            html += "</ul>\n"
        }
        var details: [(String, String)] = []
        if let address = content.address, !address.isEmpty { details.append((words.address, escape(address))) }
        if let phone = content.phone, !phone.isEmpty {
            let dialable = phone.filter { $0.isNumber || $0 == "+" }
            details.append((words.phone, dialable.isEmpty ? escape(phone) : "<a href=\"tel:\(escape(dialable))\">\(escape(phone))</a>"))
        }
        if let hours = content.openingHours, !hours.isEmpty {
            // The weekly table when the hours read (DESIGN.md, "Opening hours, prices and access"), else the text as given.
            if let parsed = try? OpeningHours(parsing: hours) {
                let rows = parsed.week.map { day, spans in
                    "<tr><th scope=\"row\">\(words.day(day))</th><td>\(spans.isEmpty ? words.closed : spans.map(\.text).joined(separator: ", "))</td></tr>"
                }
                details.append((words.openingHours, "<table class=\"hours\">\(rows.joined())</table>"))
            } else {
                details.append((words.openingHours, escape(hours)))
            }
        }
        if let level = content.priceLevel, (0...4).contains(level) {
            details.append((words.price, level == 0 ? words.free : String(repeating: "$", count: level)))
        }
        if let access = content.accessibility, !access.isEmpty { details.append((words.accessibility, escape(access))) }
        if let website = content.website, TextRules.isWebURL(website) {
            details.append((words.website, "<a href=\"\(escape(website))\">\(escape(website))</a>"))
        }
        if !details.isEmpty {
            html += "<h2>\(words.visiting)</h2><dl>"
            for (term, value) in details { html += "<dt>\(term)</dt><dd>\(value)</dd>" }
            html += "</dl>\n"
        }
        let links = content.links.filter { TextRules.isWebURL($0.url) }
        if !links.isEmpty {
            html += "<h2>\(words.more)</h2><ul>"
            for link in links {
                html += "<li><a href=\"\(escape(link.url))\">\(escape(link.name))</a> (\(words.linkTypes[link.type] ?? link.type.rawValue))</li>"
            }
            html += "</ul>\n"
        }
        if !tourNames.isEmpty {
            html += "<h2>\(words.onTheTours)</h2><ul>"
            for name in tourNames { html += "<li>\(escape(name))</li>" }
            html += "</ul>\n"
        }
        html += "</body></html>\n"
        return Array(html.utf8)
    }

    /// An `<audio>` or `<video>` with its captions, in `captionsLanguage`, as a `<track>` and its transcript below.
    static func player(_ item: MediaContent, media: PoiMedia, isNarration: Bool, words: PageWords, captionsLanguage: String) -> String {
        let element = item.format.kind == .video ? "video" : "audio"
        // A narration is captioned as one: its library title is staff's name for the file ("Arts Walk narration stop 1").
        var html = "<figure class=\"media\"><figcaption>\(isNarration ? words.narration : escape(item.title))</figcaption>"
        // Anonymous CORS: the track loads wherever the page was opened from (the feed's media answers allow any origin).
        html += "<\(element) controls preload=\"none\" crossorigin=\"anonymous\" src=\"\(escape(media.url(item.sha256)))\">"
        if let captions = item.captions {
            let label = Locale(identifier: captionsLanguage).localizedString(forIdentifier: captionsLanguage) ?? captionsLanguage
            html += "<track kind=\"captions\" src=\"\(escape(media.url(captions)))\" srclang=\"\(escape(captionsLanguage))\" label=\"\(escape(label))\" default>"
        }
        html += "</\(element)>"
        if let transcript = item.transcript, !transcript.isEmpty {
            html += "<details><summary>\(words.transcript)</summary>"
            for paragraph in paragraphs(transcript) { html += "<p>\(escape(paragraph))</p>" }
            html += "</details>"
        }
        return html + "</figure>\n"
    }

    /// Text safe in HTML element content and quoted attribute values. Control characters other than
    /// tab and newline have no place in a page.
    public static func escape(_ text: String) -> String {
        MarkupEscaping.escape(text) { !($0.value < 0x20 && $0 != "\t" && $0 != "\n" || $0.value == 0x7F) }
    }

    /// Description text split at blank lines, or at single line breaks when there are no blank lines.
    static func paragraphs(_ text: String) -> [String] {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let blocks = normalized.components(separatedBy: "\n\n")
        let parts = blocks.count > 1 ? blocks : normalized.components(separatedBy: "\n")
        return parts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}
