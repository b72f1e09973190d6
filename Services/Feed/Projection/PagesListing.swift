import Foundation
import Shared

/// The published content pages (DESIGN.md, "Pages"), made once per publication that changed one: in order, by
/// address, each page's Markdown rendered once, and a text index over titles, summaries and text.
struct PagesListing: Sendable {
    final class Entry: Sendable {
        let state: PageState
        let html: String

        init(_ state: PageState) {
            self.state = state
            html = PageMarkdown.html(state.content.body)
        }

        var content: PageContent { state.content }
    }

    /// By `order`, then title: the list's order, and the text index's slots.
    let ordered: [Entry]
    let bySlug: [String: Entry]
    let byId: [UUID: Entry]
    let textIndex: TextIndex

    init(_ states: [PageState] = []) {
        ordered = states.sorted { ($0.content.order, $0.content.title, $0.id) < ($1.content.order, $1.content.title, $1.id) }
            .map(Entry.init)
        bySlug = Dictionary(ordered.map { ($0.content.slug, $0) }, uniquingKeysWith: { first, _ in first })
        byId = Dictionary(ordered.map { ($0.state.id, $0) }, uniquingKeysWith: { first, _ in first })
        var index = TextIndex()
        for (slot, entry) in ordered.enumerated() {
            index.insert(slot: Int32(slot), id: entry.state.id, name: entry.content.title, fields: [entry.content.summary, entry.content.body])
        }
        index.seal()
        textIndex = index
    }

    func entry(inSlot slot: Int32) -> Entry? { slot >= 0 && Int(slot) < ordered.count ? ordered[Int(slot)] : nil }
}
