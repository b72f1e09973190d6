import Foundation
import Ink
import Shared

/// A content page's Markdown as HTML (DESIGN.md, "Pages"): Ink's common subset, with HTML written in the text shown as
/// text, and links and images kept only to web addresses (links also mailto: and the page's own anchors).
enum PageMarkdown {
    static func html(_ markdown: String) -> String {
        var parser = MarkdownParser()
        parser.addModifier(Modifier(target: .html) { _, markdown in PoiPage.escape(String(markdown)) })
        parser.addModifier(Modifier(target: .links) { html, markdown in
            guard let target = href(in: html), isAllowedLink(target) else { return PoiPage.escape(linkText(markdown)) }
            return html
        })
        parser.addModifier(Modifier(target: .images) { html, markdown in
            guard let source = attribute("src", in: html), PoiPage.isWebURL(decoded(source)) else { return "" }
            return html
        })
        return parser.html(from: markdown)
    }

    private static func isAllowedLink(_ target: String) -> Bool {
        let text = decoded(target)
        return PoiPage.isWebURL(text) || text.lowercased().hasPrefix("mailto:") || text.hasPrefix("#")
    }

    private static func href(in html: String) -> String? { attribute("href", in: html) }

    private static func attribute(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "\(name)=\"") else { return nil }
        let rest = html[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    /// Ink writes `&` in a URL as `&amp;`.
    private static func decoded(_ text: String) -> String { text.replacingOccurrences(of: "&amp;", with: "&") }

    /// `[text](url)` → text.
    private static func linkText(_ markdown: Substring) -> String {
        guard markdown.hasPrefix("["), let close = markdown.firstIndex(of: "]") else { return String(markdown) }
        return String(markdown[markdown.index(after: markdown.startIndex)..<close])
    }
}

/// A content page for the app's embedded browser, as the POI page is made.
enum PagePage {
    static func render(_ page: PageState, html: String) -> [UInt8] {
        var document = PoiPage.documentStart(title: page.content.title, summary: page.content.summary)
        document += html
        document += "\n</body></html>\n"
        return Array(document.utf8)
    }
}
