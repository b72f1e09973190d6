import Foundation
import Shared

/// The published content pages (DESIGN.md, "Pages"): by `order`, then title, and by address, each page's Markdown
/// rendered once, searched by titles, summaries and text.
typealias PagesListing = RecordListing<PageContent>

extension PageContent: ListedRecord {
    /// The page's HTML.
    static func derive(_ state: PageState) -> String? { PageMarkdown.html(state.content.body) }

    static func listedBefore(_ a: PageState, _ b: PageState) -> Bool {
        (a.content.order, a.content.title, a.id) < (b.content.order, b.content.title, b.id)
    }

    /// A translation's title and summary too: a word of any language finds the page (DESIGN.md "Languages").
    var indexedText: (name: String, fields: [String])? {
        (title, [summary, body] + (translations ?? [:]).values.flatMap { [$0["title"], $0["summary"]].compactMap { $0 } })
    }
    var listingKey: String? { slug }
}

extension RecordListing.Entry where Content == PageContent {
    var html: String { derived }
}
