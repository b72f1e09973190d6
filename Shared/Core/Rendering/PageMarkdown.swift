import Foundation

/// A content page's Markdown as HTML (DESIGN.md, "Pages"), for the feed's pages and the admin's preview of them:
/// a small subset, written out escaped by construction.
/// Blocks: paragraphs, `#` headings, `-`/`*`/`+` and `1.` lists, `>` quotes, fenced code. Inline: `**strong**`,
/// `*em*`/`_em_`, `` `code` ``, `[links](url)` and `![images](url)`. Links go only to http(s), `mailto:` and `#anchors`,
/// images only to http(s); anything else, HTML included, is text. Linear in the text: a marker looks for its closer
/// within a bounded distance, and inline nesting is bounded, so no page can stall or overflow the feed. (Ink, tried
/// first, crashed on a list item followed by a line of spaces and looped forever on an unclosed `<p`.)
public enum PageMarkdown {
    public static func html(_ markdown: String) -> String {
        var html = ""
        var paragraph: [Substring] = []
        var list: (ordered: Bool, items: [Substring])?
        var quote: [Substring] = []
        func flush() {
            if !paragraph.isEmpty { html += "<p>\(inline(paragraph.joined(separator: " ")))</p>" }
            if let open = list {
                let tag = open.ordered ? "ol" : "ul"
                html += "<\(tag)>" + open.items.map { "<li>\(inline(String($0)))</li>" }.joined() + "</\(tag)>"
            }
            if !quote.isEmpty { html += "<blockquote><p>\(inline(quote.joined(separator: " ")))</p></blockquote>" }
            paragraph = []
            list = nil
            quote = []
        }
        var lines = markdown.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let raw = lines.popFirst() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty { flush(); continue }
            if line.hasPrefix("```") {
                flush()
                var code: [Substring] = []
                while let next = lines.popFirst(), !next.drop(while: { $0 == " " }).hasPrefix("```") { code.append(next) }
                html += "<pre><code>\(PoiPage.escape(code.joined(separator: "\n")))</code></pre>"
                continue
            }
            let hashes = line.prefix { $0 == "#" }.count
            if (1...6).contains(hashes), line.dropFirst(hashes).first == " " {
                flush()
                html += "<h\(hashes)>\(inline(String(line.dropFirst(hashes + 1))))</h\(hashes)>"
                continue
            }
            if line.hasPrefix(">") {
                if quote.isEmpty { flush() }
                quote.append(line.dropFirst().drop { $0 == " " })
                continue
            }
            if let (ordered, item) = listItem(line) {
                if list == nil || list?.ordered != ordered { flush(); list = (ordered, []) }
                list?.items.append(item)
                continue
            }
            if var open = list, !open.items.isEmpty, raw.first == " " {
                // An indented line goes on with the item before it.
                open.items[open.items.count - 1] = Substring(open.items[open.items.count - 1] + " " + line)
                list = open
                continue
            }
            if list != nil || !quote.isEmpty { flush() }
            paragraph.append(line)
        }
        flush()
        return html
    }

    /// `- item`, `* item`, `+ item` or `12. item`.
    private static func listItem(_ line: Substring) -> (ordered: Bool, item: Substring)? {
        if let marker = line.first, "-*+".contains(marker), line.dropFirst().first == " " { return (false, line.dropFirst(2)) }
        let digits = line.prefix { $0.isASCII && $0.isNumber }
        if (1...9).contains(digits.count), line.dropFirst(digits.count).hasPrefix(". ") { return (true, line.dropFirst(digits.count + 2)) }
        return nil
    }

    /// How far a marker looks for its closer, and how deep markers nest.
    static let closerReach = 500
    static let maximumDepth = 6

    static func inline(_ text: String, depth: Int = 0) -> String {
        let characters = Array(text)
        var html = "", plain = "", index = 0
        func emit(_ fragment: String) {
            html += PoiPage.escape(plain) + fragment
            plain = ""
        }
        /// The position of `closer` after `start`, within reach.
        func find(_ closer: [Character], from start: Int) -> Int? {
            let end = min(characters.count - closer.count, start + closerReach)
            guard start <= end else { return nil }
            for position in start...end where characters[position] == closer[0] && Array(characters[position..<position + closer.count]) == closer {
                return position
            }
            return nil
        }
        while index < characters.count {
            let character = characters[index]
            let rest = characters.count - index
            if character == "`", let close = find(["`"], from: index + 1) {
                emit("<code>\(PoiPage.escape(String(characters[index + 1..<close])))</code>")
                index = close + 1
            } else if depth < maximumDepth, character == "*" || character == "_", rest > 2 {
                let strong = characters[index + 1] == character
                let marker: [Character] = strong ? [character, character] : [character]
                if let close = find(marker, from: index + marker.count + 1), close > index + marker.count {
                    let inner = inline(String(characters[index + marker.count..<close]), depth: depth + 1)
                    emit(strong ? "<strong>\(inner)</strong>" : "<em>\(inner)</em>")
                    index = close + marker.count
                } else {
                    plain.append(character)
                    index += 1
                }
            } else if depth < maximumDepth, character == "[" || (character == "!" && rest > 1 && characters[index + 1] == "["),
                      let (label, url, end) = link(characters, at: character == "!" ? index + 1 : index, reach: closerReach) {
                if character == "!" {
                    emit(TextRules.isWebURL(url) && isSafeURL(url)
                         ? "<img src=\"\(PoiPage.escape(url))\" alt=\"\(PoiPage.escape(label))\" loading=\"lazy\">" : "")
                } else {
                    let inner = inline(label, depth: depth + 1)
                    emit(isAllowedLink(url) ? "<a href=\"\(PoiPage.escape(url))\">\(inner)</a>" : inner)
                }
                index = end
            } else {
                plain.append(character)
                index += 1
            }
        }
        emit("")
        return html
    }

    /// `[label](url)` starting at `start`: its label, url and the position after it.
    private static func link(_ characters: [Character], at start: Int, reach: Int) -> (String, String, Int)? {
        var position = start + 1, end = min(characters.count, start + reach)
        while position < end, characters[position] != "]" { position += 1 }
        guard position + 1 < characters.count, characters[position] == "]", characters[position + 1] == "(" else { return nil }
        let label = String(characters[start + 1..<position])
        var close = position + 2
        end = min(characters.count, close + reach)
        while close < end, characters[close] != ")" { close += 1 }
        guard close < characters.count, characters[close] == ")" else { return nil }
        return (label, String(characters[position + 2..<close]).trimmingCharacters(in: .whitespaces), close + 1)
    }

    /// Nothing that could leave the attribute it is written in, even escaped.
    private static func isSafeURL(_ url: String) -> Bool {
        !url.isEmpty && !url.contains { $0 == "\"" || $0 == "<" || $0 == ">" || $0 == "'" || $0 == "`" || $0.isWhitespace }
    }

    private static func isAllowedLink(_ url: String) -> Bool {
        guard isSafeURL(url) else { return false }
        if url.hasPrefix("#") { return true }
        if url.lowercased().hasPrefix("mailto:") { return url.dropFirst(7).contains("@") }
        return TextRules.isWebURL(url)
    }
}
