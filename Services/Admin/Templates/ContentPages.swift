import Foundation
import Shared

/// What the content page form holds, as typed (DESIGN.md, "Pages").
struct PageForm: AdminRecordForm, TranslatingForm {
    var slug = ""
    var title = ""
    var summary = ""
    var body = ""
    var order = ""
    /// Translations by form name, `title@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    static let fields: Set<String> = ["slug", "title", "summary", "body", "order"]
    static let translatedFields = [
        TranslationFields.Field(name: "title", label: "Title", rows: 1), .init(name: "summary", label: "Summary", rows: 2),
        .init(name: "body", label: "Text", rows: 10),
    ]

    var siteTexts: [String: String] { ["title": title, "summary": summary, "body": body] }

    init() {}

    init(_ page: PageState) {
        slug = page.content.slug
        title = page.content.title
        summary = page.content.summary
        body = page.content.body
        order = String(page.content.order)
        translations = TranslationFields.values(page.content.translations)
        version = page.version
    }

    init(_ form: FormData) {
        slug = form["slug"]
        title = form["title"]
        summary = form["summary"]
        body = form["body"]
        order = form["order"]
        translations = TranslationFields.values(form, fields: PageContent.translatableFields)
        version = form.int("version")
    }

    func content() -> Result<PageContent, FieldErrors> { content(replacing: nil) }

    func content(replacing stored: PageContent?) -> Result<PageContent, FieldErrors> {
        let orderText = order.trimmingCharacters(in: .whitespaces)
        guard orderText.isEmpty || Int(orderText) != nil else { return .failure(FieldErrors(byField: ["order": "Order must be a whole number"])) }
        return .success(PageContent(slug: slug.trimmingCharacters(in: .whitespaces), title: title.trimmingCharacters(in: .whitespacesAndNewlines),
                                    summary: summary.trimmingCharacters(in: .whitespacesAndNewlines), body: body, order: Int(orderText) ?? 0,
                                    translations: TranslationFields.translations(translations, over: stored?.translations)))
    }
}

/// Content pages' admin pages (owners): About, Research, Education, History.
enum ContentPages: AdminRecordKind {
    static var path: String { "/pages" }
    static var section: String { "Pages" }
    static var task: String { "manage the content pages" }
    static var createTitle: String { "Add Page" }
    static var manageTitle: String { "Edit Page" }
    static var deleteTitle: String { "Delete Page" }
    static var notFound: String { "There is no such page." }
    static var publishedNotice: String { "pagepublished" }
    static var unpublishedNotice: String { "pageunpublished" }

    static func newForm(_ catalog: AdminCatalogProjection.Content) -> PageForm {
        var form = PageForm()
        form.order = String((catalog.pages.values.map(\.content.order).max() ?? 0) + 10)
        return form
    }

    static func list(_ catalog: AdminCatalogProjection.Content, search: ListSearch, csrf: String, languages: SiteLanguages) -> HTML {
        let rows: [HTML] = catalog.sortedPages.filter { search.matches($0.content.title, $0.content.slug) }.map { page in
            let path = "/pages/\(page.id.uuidString.lowercased())"
            return """
                <tr><td><a href="\(path)">\(page.content.title)</a></td><td><code>\(page.content.slug)</code></td><td>\(String(page.content.order))</td>
                <td>\(page.status == .published ? "Published" : "Draft")</td>\(TranslationFields.missingCell(page.content, languages: languages))
                <td><a href="\(path)">Edit</a> <a class="danger" href="\(path)/delete">Delete</a></td></tr>
                """
        }
        let table: HTML = search.outcome(rows.count, "page", none: "No pages yet.") + (rows.isEmpty ? .empty : """
            <table><thead><tr><th scope="col">Title</th><th scope="col">Address</th><th scope="col">Order</th><th scope="col">Status</th>
            \(TranslationFields.missingHeader(languages))<th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
            """ as HTML)
        return """
            <h1>Pages</h1>
            <p>Pages phones show in their menu (<code>/v1/pages</code> on the feed), in order, once published.</p>
            <p><a class="button primary" href="/pages/new">Add Page</a></p>
            \(search.form(action: "/pages", label: "Search pages"))
            \(table)
            """
    }

    static func form(_ model: RecordFormModel<Self>) -> HTML {
        let form = model.form, errors = model.errors
        let fields: HTML = Forms.text("Title", name: "title", value: form.title, error: errors["title"], required: true)
            + Forms.text("Address", name: "slug", value: form.slug, error: errors["slug"], required: true,
                         hint: "Lower-case letters, digits and hyphens, e.g. about: the page is then /v1/pages/about")
            + Forms.textarea("Summary", name: "summary", value: form.summary, error: errors["summary"], rows: 2)
            + Forms.textarea("Text", name: "body", value: form.body, error: errors["body"], rows: 14,
                             hint: "Markdown: blank lines between paragraphs, # Heading, **bold**, *italic*, [link](https://…), - list items.")
            + Forms.text("Order", name: "order", value: form.order, error: errors["order"], hint: "Smaller first.", attributes: " inputmode=\"numeric\"")
            + form.translationFieldsets(languages: model.languages, errors: errors)
        let status: HTML = model.record.map {
            RecordPages.statusBox(of: $0, at: path, csrf: model.csrf, published: "<strong>Published:</strong> in the phones' menu of pages.",
                                  draft: "<strong>Draft:</strong> not on phones yet.")
        } ?? .empty
        // The text in the box, rendered by the feed's own Markdown code: what phones will show once it is saved.
        let preview: HTML = form.body.isEmpty ? .empty : """
            <h2>Preview</h2>
            <p class="muted">The text above as phones show it (press Save after a change to see it here).</p>
            <div class="phone page-preview">\(HTML(trusted: PageMarkdown.html(form.body)))</div>
            """
        return RecordPages.form(model, top: status, fields: fields, fieldNames: PageForm.fields, bottom: preview)
    }

    static func confirmDelete(_ page: PageState, csrf: String) -> HTML {
        RecordPages.confirmDelete(page, at: path, title: deleteTitle, csrf: csrf,
                                  "Are you sure you want to delete? \(page.content.title) leaves the phones' menu of pages.")
    }
}
