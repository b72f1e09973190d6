import Foundation
import Shared
import Testing

/// The Markdown subset of content pages (DESIGN.md, "Pages"), which the feed serves and the admin previews.
@Suite("PageMarkdown")
struct PageMarkdownTests {
    @Test("page Markdown: the subset as HTML; HTML, script URLs and attribute breakouts as text; hostile input finishes")
    func pageMarkdown() {
        let html = PageMarkdown.html("""
            # Who we are

            A *public* university since **1947**, with `code <b>` and [a link](https://example.edu/a?b=1&c=2).

            - one
            - two
              continued
            1. first

            > quoted *text*

            ```swift
            let x = "<tag>"
            ```
            """)
        #expect(html == "<h1>Who we are</h1><p>A <em>public</em> university since <strong>1947</strong>, with <code>code &lt;b&gt;</code> and "
            + "<a href=\"https://example.edu/a?b=1&amp;c=2\">a link</a>.</p><ul><li>one</li><li>two continued</li></ul><ol><li>first</li></ol>"
            + "<blockquote><p>quoted <em>text</em></p></blockquote><pre><code>let x = &quot;&lt;tag&gt;&quot;</code></pre>")
        let hostile = [
            "<script>alert(1)</script>", "[x](javascript:alert(1))", "[x](https://a.example\"><script>alert(1)</script>)",
            "![x\" onerror=\"alert(1)](https://a.example/i.png)", "![x](https://a.example/i.png\" onerror=\"alert(1))",
            "```\"><script>alert(1)</script>\nx\n```", "<img src=x onerror=alert(3)>", "[mail](mailto:\"><b>)",
        ]
        for text in hostile {
            let out = PageMarkdown.html(text)
            #expect(!out.contains("<script") && !out.contains("<img src=x") && !out.lowercased().contains("href=\"javascript"), "\(text) → \(out)")
            #expect(!out.contains("\" onerror=\""), "\(text) → \(out)")
        }
        #expect(PageMarkdown.html("![x\" onerror=\"y](https://a.example/i.png)") == "<p><img src=\"https://a.example/i.png\" alt=\"x&quot; onerror=&quot;y\" loading=\"lazy\"></p>")
        // Inputs that crashed or hung Ink, and long runs of markers, finish (and render something).
        for text in ["- a\n  ", "Prices <per person", String(repeating: "*", count: 100_000), String(repeating: "[", count: 100_000),
                     String(repeating: "> ", count: 50_000), String(repeating: "**a", count: 30_000), String(repeating: "[a](", count: 25_000)] {
            let started = ContinuousClock.now
            #expect(!PageMarkdown.html(text).isEmpty)
            // A bound for "finishes" (linear: well under a second alone), not a speed target: generous for a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(30), "\(text.prefix(20))…")
        }
    }
}
