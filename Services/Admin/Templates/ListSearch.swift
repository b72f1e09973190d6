import Foundation
import Hummingbird
import Shared

/// A list page's search (Tours, Points of Interest, Calendar, People, Pages, Featured): every word typed is in the
/// record's text, case and accents ignored. Sent by a GET form, so a search is a link that can be shared.
struct ListSearch {
    var query: String

    init(query: String) { self.query = query }

    init(_ request: Request) { query = Self.formValue("q", of: request) }

    /// A GET form's field: "+" is a space and "%2B" a plus, so "+" is replaced before percent-decoding (the query
    /// parameters decode first, and keep "+").
    static func formValue(_ name: String, of request: Request) -> String {
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first.map(String.init) == name else { continue }
            let raw = parts.count > 1 ? String(parts[1]) : ""
            return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
        }
        return ""
    }

    var isEmpty: Bool { query.trimmingCharacters(in: .whitespaces).isEmpty }

    func matches(_ texts: String...) -> Bool {
        let text = Self.fold(texts.joined(separator: " "))
        return Self.fold(query).split(separator: " ").allSatisfy { text.contains($0) }
    }

    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// The search box, with `more` fields (the POI list's category) before its button.
    func form(action: String, label: String, more: HTML = .empty, showAll: Bool? = nil) -> HTML {
        let reset: HTML = showAll ?? !isEmpty ? "<a href=\"\(action)\">Show all</a>" : .empty
        return """
            <form method="get" action="\(action)" class="search" role="search">
            \(Forms.text(label, name: "q", value: query, type: "search"))
            \(more)
            <div class="actions">\(Forms.submit("Search", class: ""))\(reset)</div>
            </form>
            """
    }

    /// "3 events found." under a search, or what to say when a list is empty (`none`) or nothing matched.
    func outcome(_ count: Int, _ noun: String, plural: String? = nil, none: String) -> HTML {
        if isEmpty { return count == 0 ? "<p class=\"muted\">\(none)</p>" : .empty }
        return count == 0 ? "<p class=\"muted\">Nothing matches “\(query)”.</p>" : "<p>\(counted(count, noun, plural: plural)) found.</p>"
    }
}
