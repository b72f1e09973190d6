import Foundation
import Shared

/// What the featured item form holds, as typed (DESIGN.md, "Featured").
struct FeaturedForm: AdminRecordForm, TranslatingForm {
    /// `kind:uuid`, e.g. `tour:3f2504e0-…`.
    var target = ""
    var title = ""
    var imageUrl = ""
    var imageAlt = ""
    var order = ""
    /// Translations by form name, `title@es` (DESIGN.md "Languages").
    var translations: [String: String] = [:]
    var version: Int?

    static let fields: Set<String> = ["targetId", "title", "imageUrl", "imageAlt", "order"]

    static let translatedFields = [
        TranslationFields.Field(name: "title", label: "Title", rows: 1), .init(name: "imageAlt", label: "Image description", rows: 1),
    ]

    var siteTexts: [String: String] { ["title": title, "imageAlt": imageAlt] }

    init() {}

    init(_ item: FeaturedState) {
        target = "\(item.content.targetKind.rawValue):\(item.content.targetId.uuidString.lowercased())"
        title = item.content.title ?? ""
        imageUrl = item.content.imageUrl
        imageAlt = item.content.imageAlt
        order = String(item.content.order)
        translations = TranslationFields.values(item.content.translations)
        version = item.version
    }

    init(_ form: FormData) {
        target = form["target"]
        title = form["title"]
        imageUrl = form["imageUrl"]
        imageAlt = form["imageAlt"]
        order = form["order"]
        translations = TranslationFields.values(form, fields: FeaturedContent.translatableFields)
        version = form.int("version")
    }

    func content() -> Result<FeaturedContent, FieldErrors> { content(replacing: nil) }

    func content(replacing stored: FeaturedContent?) -> Result<FeaturedContent, FieldErrors> {
        let parts = target.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = FeaturedContent.TargetKind(rawValue: parts[0]), let id = UUID(uuidString: parts[1]) else {
            return .failure(FieldErrors(byField: ["targetId": "Choose what to feature from the list"]))
        }
        let orderText = order.trimmingCharacters(in: .whitespaces)
        guard orderText.isEmpty || Int(orderText) != nil else { return .failure(FieldErrors(byField: ["order": "Order must be a whole number"])) }
        let trimmedTitle = title.trimmingCharacters(in: .whitespacesAndNewlines)
        return .success(FeaturedContent(targetKind: kind, targetId: id, title: trimmedTitle.isEmpty ? nil : trimmedTitle,
                                        imageUrl: imageUrl.trimmingCharacters(in: .whitespaces), imageAlt: imageAlt, order: Int(orderText) ?? 0,
                                        translations: TranslationFields.translations(translations, over: stored?.translations)))
    }
}

/// The home screen's featured items (owners).
enum FeaturedPages: AdminRecordKind {
    static var path: String { "/featured" }
    static var section: String { "Featured" }
    static var task: String { "manage the featured items" }
    static var createTitle: String { "Add Featured Item" }
    static var manageTitle: String { "Edit Featured Item" }
    static var deleteTitle: String { "Delete Featured Item" }
    static var notFound: String { "There is no such featured item." }
    static var publishedNotice: String { "featuredpublished" }
    static var unpublishedNotice: String { "featuredunpublished" }

    static func newForm(_ catalog: AdminCatalogProjection.Content) -> FeaturedForm {
        var form = FeaturedForm()
        form.order = String((catalog.featured.values.map(\.content.order).max() ?? 0) + 10)
        return form
    }

    /// Everything that can be featured, as the form's list offers it.
    static func targets(_ catalog: AdminCatalogProjection.Content) -> [(value: String, label: String)] {
        func option(_ kind: FeaturedContent.TargetKind, _ id: UUID, _ label: String) -> (value: String, label: String) {
            ("\(kind.rawValue):\(id.uuidString.lowercased())", label)
        }
        return catalog.sortedTours.map { option(.tour, $0.id, "Tour: \($0.content.name)") }
            + catalog.sortedPois.map { option(.poi, $0.id, "Point of interest: \($0.content.name)") }
            + catalog.sortedCalendar.map { option(.event, $0.id, "Event: \($0.content.title)") }
            + catalog.sortedPages.map { option(.page, $0.id, "Page: \($0.content.title)") }
    }

    static func list(_ catalog: AdminCatalogProjection.Content, search: ListSearch, csrf: String, languages: SiteLanguages) -> HTML {
        let names = Dictionary(targets(catalog).map { ($0.value, $0.label) }, uniquingKeysWith: { first, _ in first })
        let rows: [HTML] = catalog.featured.values.sorted { ($0.content.order, $0.id.uuidString) < ($1.content.order, $1.id.uuidString) }.compactMap { item in
            let path = "/featured/\(item.id.uuidString.lowercased())"
            let shows = names[FeaturedForm(item).target] ?? "(gone)"
            guard search.matches(item.content.title ?? "", shows) else { return nil }
            return """
                <tr><td><a href="\(path)">\(item.content.title ?? shows)</a></td><td>\(shows)</td><td>\(String(item.content.order))</td>
                <td>\(item.status == .published ? "Published" : "Draft")</td>\(TranslationFields.missingCell(item.content, languages: languages))
                <td><a href="\(path)">Edit</a> <a class="danger" href="\(path)/delete">Delete</a></td></tr>
                """
        }
        let table: HTML = search.outcome(rows.count, "featured item", none: "Nothing featured yet.") + (rows.isEmpty ? .empty : """
            <table><thead><tr><th scope="col">Title</th><th scope="col">Shows</th><th scope="col">Order</th><th scope="col">Status</th>
            \(TranslationFields.missingHeader(languages))<th scope="col">Actions</th></tr></thead><tbody>\(rows)</tbody></table>
            """ as HTML)
        return """
            <h1>Featured</h1>
            <p>The home screen's slideshow on phones (<code>/v1/featured</code> on the feed), in order, once published; an item shows only
            while what it features is on the feed.</p>
            <p><a class="button primary" href="/featured/new">Add Featured Item</a></p>
            \(search.form(action: "/featured", label: "Search featured items"))
            \(table)
            """
    }

    static func form(_ model: RecordFormModel<Self>) -> HTML {
        let form = model.form, errors = model.errors
        let options = [(value: "", label: "(choose)")] + targets(model.catalog)
        let fields: HTML = Forms.select("Features", name: "target", options: options, selected: form.target, error: errors["targetId"])
            + Forms.text("Title", name: "title", value: form.title, error: errors["title"], hint: "Leave empty to show the item's own name.")
            + Forms.text("Image link", name: "imageUrl", value: form.imageUrl, error: errors["imageUrl"], type: "url", required: true)
            + Forms.text("Image description", name: "imageAlt", value: form.imageAlt, error: errors["imageAlt"], required: true,
                         hint: "What the picture shows, for people who cannot see it.")
            + Forms.text("Order", name: "order", value: form.order, error: errors["order"], hint: "Smaller first.", attributes: " inputmode=\"numeric\"")
        let status: HTML = model.record.map {
            RecordPages.statusBox(of: $0, at: path, csrf: model.csrf, published: "<strong>Published:</strong> on the phones' home screen.",
                                  draft: "<strong>Draft:</strong> not on phones yet.")
        } ?? .empty
        return RecordPages.form(model, top: status, fields: fields + form.translationFieldsets(languages: model.languages, errors: errors),
                                fieldNames: FeaturedForm.fields)
    }

    static func confirmDelete(_ item: FeaturedState, csrf: String) -> HTML {
        RecordPages.confirmDelete(item, at: path, title: deleteTitle, csrf: csrf,
                                  "Are you sure you want to delete? The item leaves the phones' home screen (what it features stays).")
    }
}
