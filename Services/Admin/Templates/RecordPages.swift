import Foundation
import Shared

/// What the pages of every kind of record share (DESIGN.md, "Catalog records").
enum RecordPages {
    /// Whether the record is on the feed, with Publish/Unpublish and Delete.
    static func statusBox<Content>(of record: CatalogRecordState<Content>, at section: String, csrf: String, published: HTML, draft: HTML) -> HTML {
        let path = "\(section)/\(record.id.uuidString.lowercased())"
        let isPublished = record.status == .published
        let button = Forms.post("\(path)/status", csrf: csrf, class: "inline",
                                Forms.hidden("version", String(record.version)) + Forms.hidden("status", isPublished ? "draft" : "published")
                                    + Forms.submit(isPublished ? "Unpublish" : "Publish", class: isPublished ? "" : "primary"))
        return """
            <div class="notice placestatus" role="status"><p>\(isPublished ? published : draft)</p><div class="actions">\(button)
            <a class="button danger" href="\(path)/delete">Delete</a></div></div>
            """
    }

    /// A record's form page: its title, `top` (its state), a problem, the errors' summary, and the form posting `fields`.
    static func form<Kind: AdminRecordKind>(_ model: RecordFormModel<Kind>, top: HTML, fields: HTML, fieldNames: Set<String>,
                                            bottom: HTML = .empty) -> HTML {
        let action = model.record.map { "\(Kind.path)/\($0.id.uuidString.lowercased())" } ?? Kind.path
        let version: HTML = model.form.version.map { Forms.hidden("version", String($0)) } ?? .empty
        return """
            <h1>\(model.record == nil ? Kind.createTitle : Kind.manageTitle)</h1>
            \(top)
            \(model.problem.map(CommonPages.unavailableBox))
            \(Forms.errorSummary(model.errors, fields: fieldNames))
            \(Forms.post(action, csrf: model.csrf, version + fields + "<div class=\"actions\">\(Forms.submit("Save"))<a href=\"\(Kind.path)\">Cancel</a></div>"))
            \(bottom)
            """
    }

    static func confirmDelete<Content>(_ record: CatalogRecordState<Content>, at section: String, title: String, csrf: String,
                                       _ question: String) -> HTML {
        let path = "\(section)/\(record.id.uuidString.lowercased())"
        return """
            <h1>\(title)</h1>
            <p>\(question)</p>
            \(Forms.post("\(path)/delete", csrf: csrf, Forms.hidden("version", String(record.version)) + Forms.submit("Delete", class: "danger")))
            <p><a href="\(path)">Cancel</a></p>
            """
    }
}
